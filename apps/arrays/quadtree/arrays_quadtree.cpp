// SPDX-License-Identifier: BSD-3-Clause
// arrays_quadtree: an adaptive quadtree heat-flow mesh on a migratable array indexed by bit
// vectors (bit_index, two bits a level: the leaf's path from the root), as the Charm++ paper
// proposes. Each leaf is an element holding b x b cells of u_t = Laplace(u) + q on the unit
// square (mesh.hpp: the scheme, shared with the sequential version).
//
// A run of steps has no barrier: each step a leaf sends the edge facing each neighbour leaf
// (found by path arithmetic on the leaves: the same level, a coarser one, or the finer ones
// along the face) and computes step k once it holds every neighbour's edge of step k.
// Before every `--adapt-every`-th step the mesh adapts: the leaves report their ranges by a
// concat reduction delivered to every node, every node computes the same plan from them, and a
// broadcast has each leaf carry it out. A leaf that refines inserts its 4 children, sends
// each its cells by injection, and deletes itself; 4 leaves that coarsen send their cells to
// their parent's index, which the first of them creates on demand, and delete themselves.
//
// `--migrate-every K` moves every leaf to the next node after each K-th step of a run (edges
// already on their way follow it; it resumes in on_migrated()).
//
// Node 0 then gathers the field, runs the sequential version (the same algorithm on a
// std::map), and prints each adaptation's leaf count, the checksums, and OK when the fields
// are bitwise equal and every adaptation agrees (MISMATCH and exit status 1 otherwise).
#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "mesh.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::quadtree {

// The element and what it uses are in a named namespace: libarrays instantiates its entry
// methods' invokers with the element type, and GCC (-Wsubobject-linkage) rejects a type from
// an anonymous namespace there when this file is compiled inside a unity file.
namespace arrays = squall::arrays;

// What every node knows: the parameters (every node parses the same command line), the
// current leaves and the adaptation under way (every node computes the same plan from the
// same marks). One struct, because mesh.cpp's functions have arguments named leaves, plan and
// marks, and a unity build puts both files in one scope.
Params params;
int migrate_every = 0;
struct MeshState {
  Leaves leaves;
  Plan plan;
  std::vector<Mark> marks;
  bool marks_in = false;
};
MeshState mesh;
void on_marks(const std::vector<Mark>& m) {
  mesh.marks = m;
  mesh.marks_in = true;
}
// Node 0: how many leaves finished each run (a sum reduction when each reaches its target).
std::vector<std::uint64_t> finished_runs;
void on_finished(std::uint64_t n) { finished_runs.push_back(n); }
// Anything an element found wrong (counted, reported by the check).
std::uint64_t errors = 0;

struct Leaf : arrays::element<arrays::bit_index> {
  std::int32_t step = 0, target = 0;  // steps done; the end of the current run
  std::vector<double> u;              // b x b cells, row-major
  std::array<Ghosts, 2> ghost;        // neighbours' edges, by step parity
  std::array<int, 2> have{0, 0};      // edges held, by step parity
  int expected = 0;                   // edges a step needs in this run
  std::array<std::vector<path>, 4> across;       // this run's neighbour leaves, by side
  std::array<std::vector<double>, 4> parts;      // a parent's quadrants as they come
  int parts_in = 0;

  // Its cells: from the program at the start, or from the leaf that refined into it.
  void fill(std::int32_t k, const std::vector<double>& values) {
    step = k;
    u = values;
  }

  // From each of the 4 leaves coarsening into it; the first creates it (creates_on_demand).
  void gather(std::int32_t k, std::int32_t q, const std::vector<double>& values) {
    if (q < 0 || q > 3 || !parts[static_cast<std::size_t>(q)].empty()) {
      ++errors;
      return;
    }
    step = k;
    parts[static_cast<std::size_t>(q)] = values;
    if (++parts_in < 4) return;
    u = parent_block(parts, params.block);
    for (auto& part : parts) part.clear();
    parts_in = 0;
  }

  // Broadcast: report this leaf's range for the plan.
  void assess() {
    contribute(std::vector<Mark>{mark_of(this_index(), u)}, arrays::concat<Mark>(), arrays::on_every_node<&on_marks>());
  }

  // Broadcast: carry out this leaf's part of the plan.
  void adapt() {
    const path& me = this_index();
    if (mesh.leaves.count(me) == 0) return;  // made by this adaptation, before the broadcast came
    const auto a = arrays::array<Leaf>::of(*this);
    if (mesh.plan.refine.count(me) != 0) {
      for (unsigned q = 0; q < 4; ++q) {
        const path child = me.child(q, 2);
        a.insert(child);  // at its home
        a[child].call<&Leaf::fill>(step, child_block(u, params.block, static_cast<int>(q)));
      }
      destroy_me();
    } else if (me.bits > 0 && mesh.plan.coarsen.count(me.parent(2)) != 0) {
      const auto q = static_cast<std::int32_t>(me.step(me.depth(2) - 1, 2));
      a[me.parent(2)].call<&Leaf::gather>(step, q, u);
      destroy_me();
    }
  }

  // Broadcast: run steps `from` to `to` on the current leaves.
  void run(std::int32_t from, std::int32_t to) {
    if (step != from || u.size() != static_cast<std::size_t>(params.block) * params.block) ++errors;
    target = to;
    const Tile t = tile_of(this_index());
    expected = 0;
    for (int s = 0; s < 4; ++s) {
      auto& mine = across[static_cast<std::size_t>(s)];
      mine.clear();
      for (const Tile& nb : neighbours(t, s, mesh.leaves, params.max_level)) mine.push_back(path_of(nb));
      expected += static_cast<int>(mine.size());
    }
    send_edges();
    advance_steps();
  }

  // A neighbour's edge of step k, for this leaf's side s.
  void edge(std::int32_t k, std::int32_t s, std::int32_t level, std::int64_t position, const std::vector<double>& values) {
    if ((k != step && k != step + 1) || s < 0 || s > 3) {
      ++errors;
      return;
    }
    ghost[static_cast<std::size_t>(k & 1)][static_cast<std::size_t>(s)].push_back(Edge{level, position, values});
    ++have[static_cast<std::size_t>(k & 1)];
    advance_steps();
  }

  std::vector<double> values() const { return u; }

  // Arrived by migration: run the steps whose edges came before the move.
  void on_migrated() override { advance_steps(); }

  template <class A>
  void serialize(A& ar) {
    ar(step, target, u, ghost, have, expected, across, parts, parts_in);
  }

 private:
  void send_edges() {
    const auto a = arrays::array<Leaf>::of(*this);
    const Tile t = tile_of(this_index());
    for (int s = 0; s < 4; ++s) {
      const auto& to = across[static_cast<std::size_t>(s)];
      if (to.empty()) continue;
      const std::vector<double> e = edge_values(u, params.block, s);
      for (const path& nb : to)
        a[nb].call<&Leaf::edge>(step, std::int32_t{opposite(s)}, std::int32_t{t.level}, along(t, s), e);
    }
  }

  // Runs every step whose edges are all here (none before run(): a neighbour's first edges
  // may come before the broadcast does).
  void advance_steps() {
    while (step < target && have[static_cast<std::size_t>(step & 1)] == expected) {
      Ghosts& g = ghost[static_cast<std::size_t>(step & 1)];
      sort_edges(g);
      u = advance(tile_of(this_index()), u, g, step, params);
      for (auto& side_edges : g) side_edges.clear();
      have[static_cast<std::size_t>(step & 1)] = 0;
      ++step;
      if (step < target) {
        send_edges();
        if (migrate_every > 0 && step % migrate_every == 0 && squall::nodes() > 1) {
          migrate_me((squall::node() + 1) % squall::nodes());
          return;  // the move happens when this method returns
        }
      } else {
        contribute(std::uint64_t{1}, arrays::sum<std::uint64_t>(), arrays::on_root<&on_finished>());
      }
    }
  }
};

}  // namespace squall::apps::quadtree

// The first of 4 coarsening leaves to send its cells creates the parent.
template <>
inline constexpr bool squall::arrays::creates_on_demand<&squall::apps::quadtree::Leaf::gather> = true;

namespace {

namespace arrays = squall::arrays;
namespace quadtree = squall::apps::quadtree;
using namespace squall::apps::quadtree;
using squall::apps::Options;
using squall::apps::seconds_since;

constexpr const char* kUsage =
    "usage: squallrun -n N arrays_quadtree [--small] [--block 8] [--min-level 2] [--max-level 6]\n"
    "                                      [--steps 200] [--adapt-every 10] [--migrate-every 0]\n"
    "  --block b        each leaf holds b x b cells (b even)\n"
    "  --min-level l    the mesh starts uniform at level l and never coarsens past it\n"
    "  --max-level L    leaves refine down to level L (the time step is set by its cells)\n"
    "  --steps s        time steps\n"
    "  --adapt-every a  refine and coarsen before every a-th step\n"
    "  --migrate-every K move every leaf to the next node after every K-th step (0: never)\n"
    "  --small          levels 2 to 4, 80 steps, adapt every 5 (for tests)\n";

int run(Options& options) {
  const bool small = options.flag("small");
  params.block = options.count_as<int>("block", 8);
  params.min_level = options.count_as<int>("min-level", 2);
  params.max_level = options.count_as<int>("max-level", small ? 4 : 6);
  params.steps = options.count_as<int>("steps", small ? 80 : 200);
  params.adapt_every = options.count_as<int>("adapt-every", small ? 5 : 10);
  migrate_every = options.count_as<int>("migrate-every", 0);
  options.finish();
  if (params.block < 2 || params.block % 2 != 0 || params.block > 1024)
    throw squall::apps::OptionError("--block must be even, 2 to 1024");
  if (params.min_level > params.max_level || params.max_level > 20)
    throw squall::apps::OptionError("--min-level must not pass --max-level, at most 20");
  if (params.steps < 1 || params.adapt_every < 1)
    throw squall::apps::OptionError("--steps and --adapt-every must be at least 1");

  squall::init();
  const int me = squall::node(), nodes = squall::nodes();
  const auto a = arrays::array<Leaf, arrays::bit_index>::create(arrays::hash_home());
  const std::int64_t side = std::int64_t{1} << params.min_level;
  for (std::int64_t y = 0; y < side; ++y) {
    for (std::int64_t x = 0; x < side; ++x) {
      const Tile t{params.min_level, x, y};
      const path p = path_of(t);
      mesh.leaves.insert(p);
      if ((y * side + x) % nodes == me) {
        a.insert(p);
        a[p].call<&Leaf::fill>(std::int32_t{0}, initial_block(t, params));
      }
    }
  }
  arrays::quiesce();

  squall::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<AdaptRecord> history;
  std::vector<std::uint64_t> run_leaves;  // the leaves each run should finish with
  bool counts_agree = true, marks_ok = true;
  for (int k = 0; k < params.steps;) {
    // Adapt: every leaf reports; every node makes the same plan; the leaves carry it out.
    mesh.marks.clear();
    mesh.marks_in = false;
    if (me == 0) a.broadcast<&Leaf::assess>();
    arrays::quiesce();
    marks_ok = marks_ok && mesh.marks_in;
    mesh.plan = plan_adapt(mesh.leaves, mesh.marks, params);
    if (me == 0) a.broadcast<&Leaf::adapt>();
    arrays::quiesce();
    mesh.leaves = mesh.plan.next;
    history.push_back({k, mesh.plan.refine.size(), mesh.plan.coarsen.size(), mesh.leaves.size()});
    const std::uint64_t elements = squall::allreduce(static_cast<std::uint64_t>(a.local_count()));
    counts_agree = counts_agree && elements == mesh.leaves.size();

    const int to = std::min(k + params.adapt_every, params.steps);
    if (me == 0) a.broadcast<&Leaf::run>(std::int32_t{k}, std::int32_t{to});
    arrays::quiesce();
    run_leaves.push_back(mesh.leaves.size());
    k = to;
  }
  const double parallel_s = seconds_since(t0);

  // The field, leaf by leaf, to node 0.
  std::vector<std::pair<path, arrays::future<std::vector<double>>>> parts;
  if (me == 0)
    for (const path& leaf : mesh.leaves) parts.emplace_back(leaf, a[leaf].request<&Leaf::values>());
  arrays::quiesce();
  const arrays::scheduler_counts c = arrays::counts();
  const std::array<std::uint64_t, 4> mine{c.sent, c.forwarded, errors, c.migrations_in};
  std::array<std::uint64_t, 4> total{};
  squall::allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(total));

  bool ok = true;
  if (me == 0) {
    Field field;
    for (auto& [leaf, answer] : parts) field[leaf] = answer.get();
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<AdaptRecord> reference_history;
    const Field reference = solve_sequential(params, reference_history);
    const double sequential_s = seconds_since(t1);

    bool field_equal = field.size() == reference.size();
    for (auto it = field.cbegin(), jt = reference.cbegin(); field_equal && it != field.cend(); ++it, ++jt)
      field_equal = it->first == jt->first && it->second.size() == jt->second.size() &&
                    std::memcmp(it->second.data(), jt->second.data(), it->second.size() * sizeof(double)) == 0;
    const bool history_equal = history == reference_history;
    const bool runs_finished = finished_runs == run_leaves;
    // Every leaf moves after each K-th step inside a run (not after a run's last): an exact count.
    std::uint64_t expected_migrations = 0;
    if (nodes > 1 && migrate_every > 0) {
      for (std::size_t r = 0; r < history.size(); ++r) {
        const int from = history[r].step, to = std::min(from + params.adapt_every, params.steps);
        for (int k = from + 1; k < to; ++k)
          if (k % migrate_every == 0) expected_migrations += run_leaves[r];
      }
    }
    ok = field_equal && history_equal && runs_finished && counts_agree && marks_ok && total[2] == 0 &&
         total[3] == expected_migrations;

    std::printf("arrays_quadtree: unit square, leaves of %dx%d cells, levels %d to %d, %d steps, adapt every %d, "
                "%d nodes\n",
                params.block, params.block, params.min_level, params.max_level, params.steps, params.adapt_every,
                nodes);
    for (std::size_t r = 0; r < history.size(); ++r) {
      const AdaptRecord& h = history[r];
      const AdaptRecord want = r < reference_history.size() ? reference_history[r] : AdaptRecord{};
      std::printf("step %4d: refined %3zu, coarsened %3zu, leaves %5zu (reference %zu, %zu, %zu)\n", h.step,
                  h.refined, h.coarsened, h.leaves, want.refined, want.coarsened, want.leaves);
    }
    std::printf("adaptations %s; element counts %s; every leaf finished every run: %s; element errors %llu\n",
                history_equal ? "equal" : "DIFFER", counts_agree ? "agree" : "DIFFER", runs_finished ? "yes" : "NO",
                static_cast<unsigned long long>(total[2]));
    std::printf("messages %llu, forwarded %llu, migrations %llu (expected %llu)\n",
                static_cast<unsigned long long>(total[0]), static_cast<unsigned long long>(total[1]),
                static_cast<unsigned long long>(total[3]), static_cast<unsigned long long>(expected_migrations));
    std::printf("time: arrays %.6f s, sequential %.6f s\n", parallel_s, sequential_s);
    std::printf("heat %.17g (reference %.17g)\n", field_heat(field, params.block), field_heat(reference, params.block));
    std::printf("checksum %016llx reference %016llx, %zu leaves, field %s\n",
                static_cast<unsigned long long>(field_checksum(field)),
                static_cast<unsigned long long>(field_checksum(reference)), field.size(),
                field_equal ? "bitwise equal" : "DIFFERS");
    std::fflush(stdout);
  }
  squall::finalize();
  if (me == 0) std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return squall::apps::run_program(argc, argv, "arrays_quadtree", kUsage, &run); }
