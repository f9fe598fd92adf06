// SPDX-License-Identifier: BSD-3-Clause
// arrays_voxels: voxel collision detection, the Charm++ paper's example of a sparse array
// created on demand (section 3.1).
//
// Two arrays: the moving boxes (a 1-D array, block home) and the voxels of the unit cube (a
// 3-D array, hash home, with no element inserted by the program). Each step a broadcast has
// every box send itself to each voxel its bounding box meets (Voxel::add, which creates the
// voxel on demand); after quiescence a second broadcast has every voxel test its boxes pair
// by pair and contribute the overlapping pairs whose overlap's lowest corner it holds (so each
// pair is reported by exactly one voxel) to a concat reduction on node 0. A voxel that
// received nothing this step contributes an empty list and deletes itself. `--migrate-every K`
// moves every box to the next node after each K-th step.
//
// Node 0 checks every step against the O(n^2) test of all pairs, and the number of voxels
// alive against the voxels the boxes met, and prints the pair counts, a checksum and OK
// (MISMATCH and exit status 1 otherwise).
#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "scene.hpp"
#include "squall/apps/checksum.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps::voxels {

// The elements and what they use are in a named namespace: libarrays instantiates its entry
// methods' invokers with the element type, and GCC (-Wsubobject-linkage) rejects a type from
// an anonymous namespace there when this file is compiled inside a unity file.
namespace arrays = squall::arrays;

// The run's parameters: every node parses the same command line.
Scene scene;
std::int32_t migrate_every = 0;

// Node 0: each step's pairs (one concat reduction a step; steps are apart by quiescence).
std::vector<std::vector<Pair>> found;
void on_pairs(const std::vector<Pair>& pairs) { found.push_back(pairs); }
std::uint64_t arrivals = 0;  // node 0: boxes' migrations, summed at the end
void on_arrivals(std::uint64_t n) { arrivals = n; }

struct Voxel : arrays::element<arrays::index3d> {
  std::int32_t step = -1;  // the step of `boxes`
  std::vector<Box> boxes;

  // From a box that meets this voxel at step k; the first one creates the voxel.
  void add(std::int32_t k, const Box& b) {
    if (k != step) {
      step = k;
      boxes.clear();
    }
    boxes.push_back(b);
  }

  // Broadcast after step k's boxes all arrived.
  void collide(std::int32_t k) {
    std::vector<Pair> pairs;
    if (step == k) {
      const arrays::index3d& me = this_index();
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        for (std::size_t j = i + 1; j < boxes.size(); ++j) {
          const Box &a = boxes[i], &b = boxes[j];
          if (!overlaps(a, b)) continue;
          const std::array<std::int32_t, 3> owner = owner_voxel(a, b, scene.voxels);
          if (owner[0] == me[0] && owner[1] == me[1] && owner[2] == me[2])
            pairs.emplace_back(std::min(a.id, b.id), std::max(a.id, b.id));
        }
      }
    }
    contribute(pairs, arrays::concat<Pair>(), arrays::on_root<&on_pairs>());
    if (step != k) destroy_me();  // nothing came this step
    boxes.clear();
  }

  template <class A>
  void serialize(A& ar) {
    ar(step, boxes);
  }
};

// The voxels, for the boxes to send to (the index type is spelled out: array's default for it
// needs a complete element type where it is named).
const arrays::array<Voxel, arrays::index3d>* voxel_array = nullptr;

struct Object : arrays::element<arrays::index1d> {
  std::uint64_t arrived = 0;  // migrations into a node

  // Broadcast: move to step k's place and tell every voxel this box meets.
  void step(std::int32_t k) {
    const Box b = box_at(scene, this_index()[0], k);
    std::array<std::int32_t, 3> first{}, last{};
    voxel_range(b, scene.voxels, first, last);
    for (std::int32_t x = first[0]; x <= last[0]; ++x)
      for (std::int32_t y = first[1]; y <= last[1]; ++y)
        for (std::int32_t z = first[2]; z <= last[2]; ++z) (*voxel_array)[{x, y, z}].call<&Voxel::add>(k, b);
    if (migrate_every > 0 && k % migrate_every == 0 && squall::nodes() > 1)
      migrate_me((squall::node() + 1) % squall::nodes());
  }

  void on_migrated() override { ++arrived; }

  // Broadcast at the end: how often this box moved.
  void report() { contribute(arrived, arrays::sum<std::uint64_t>(), arrays::on_root<&on_arrivals>()); }

  template <class A>
  void serialize(A& ar) {
    ar(arrived);
  }
};

}  // namespace squall::apps::voxels

// A box's first add to a voxel creates it.
template <>
inline constexpr bool squall::arrays::creates_on_demand<&squall::apps::voxels::Voxel::add> = true;

namespace {

namespace arrays = squall::arrays;
namespace voxels = squall::apps::voxels;
using namespace squall::apps::voxels;
using squall::apps::Options;
using squall::apps::seconds_since;

constexpr const char* kUsage =
    "usage: squallrun -n N arrays_voxels [--small] [--objects 2000] [--voxels 16] [--steps 40] [--seed 1]\n"
    "                                    [--migrate-every 0]\n"
    "  --objects n        boxes, 0.02 to 0.08 a side, each moving up to 0.01 a step per axis\n"
    "  --voxels v         the unit cube is v x v x v voxels\n"
    "  --steps s          time steps, each checked against the O(n^2) test\n"
    "  --migrate-every K  move every box to the next node every K steps (0: never)\n"
    "  --small            300 boxes, 8 x 8 x 8 voxels, 20 steps (for tests)\n";

// The distinct voxels the boxes meet at step k.
std::set<std::array<std::int32_t, 3>> voxels_met(const std::vector<Box>& boxes) {
  std::set<std::array<std::int32_t, 3>> met;
  for (const Box& b : boxes) {
    std::array<std::int32_t, 3> first{}, last{};
    voxel_range(b, scene.voxels, first, last);
    for (std::int32_t x = first[0]; x <= last[0]; ++x)
      for (std::int32_t y = first[1]; y <= last[1]; ++y)
        for (std::int32_t z = first[2]; z <= last[2]; ++z) met.insert({x, y, z});
  }
  return met;
}

std::uint64_t checksum(const std::vector<std::vector<Pair>>& steps) {
  squall::apps::Checksum sum;
  for (const auto& pairs : steps) {
    sum.add(pairs.size());
    for (const Pair& p : pairs) sum.add((static_cast<std::uint64_t>(p.first) << 32) | static_cast<std::uint32_t>(p.second));
  }
  return sum.value();
}

int run(Options& options) {
  const bool small = options.flag("small");
  scene.objects = options.count_as<std::int32_t>("objects", small ? 300 : 2000);
  scene.voxels = options.count_as<std::int32_t>("voxels", small ? 8 : 16);
  const auto steps = options.count_as<std::int32_t>("steps", small ? 20 : 40);
  scene.seed = options.count("seed", 1);
  migrate_every = options.count_as<std::int32_t>("migrate-every", 0);
  options.finish();
  if (scene.objects < 1 || scene.voxels < 1 || scene.voxels > 1000 || steps < 1)
    throw squall::apps::OptionError("--objects, --voxels (at most 1000) and --steps must be at least 1");

  squall::init();
  const int me = squall::node(), nodes = squall::nodes();
  const auto objects = arrays::array<Object, arrays::index1d>::create(arrays::block_home(arrays::index1d{scene.objects}));
  const auto vox = arrays::array<Voxel, arrays::index3d>::create(arrays::hash_home());
  voxel_array = &vox;
  for (std::int32_t i = me; i < scene.objects; i += nodes) objects.insert(i);
  arrays::quiesce();

  squall::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> alive_after_adds, alive_after_collide;  // voxels, by step
  for (std::int32_t k = 0; k < steps; ++k) {
    if (me == 0) objects.broadcast<&Object::step>(k);
    arrays::quiesce();
    alive_after_adds.push_back(squall::allreduce(static_cast<std::uint64_t>(vox.local_count())));
    if (me == 0) vox.broadcast<&Voxel::collide>(k);
    arrays::quiesce();
    alive_after_collide.push_back(squall::allreduce(static_cast<std::uint64_t>(vox.local_count())));
  }
  const double parallel_s = seconds_since(t0);
  if (me == 0) objects.broadcast<&Object::report>();
  arrays::quiesce();
  const arrays::scheduler_counts c = arrays::counts();
  const std::array<std::uint64_t, 3> mine{c.sent, c.migrations_in, c.forwarded};
  std::array<std::uint64_t, 3> total{};
  squall::allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(total));

  bool ok = true;
  if (me == 0) {
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<std::vector<Pair>> reference;
    std::vector<std::uint64_t> met_now, met_both;  // voxels met at k; at k - 1 or k
    std::set<std::array<std::int32_t, 3>> met_before;
    for (std::int32_t k = 0; k < steps; ++k) {
      std::vector<Box> boxes;
      for (std::int32_t i = 0; i < scene.objects; ++i) boxes.push_back(box_at(scene, i, k));
      reference.push_back(all_pairs(boxes));
      std::set<std::array<std::int32_t, 3>> met = voxels_met(boxes);
      met_now.push_back(met.size());
      std::set<std::array<std::int32_t, 3>> both = met_before;
      both.insert(met.begin(), met.end());
      met_both.push_back(both.size());
      met_before = std::move(met);
    }
    const double sequential_s = seconds_since(t1);

    for (auto& pairs : found) std::sort(pairs.begin(), pairs.end());
    const bool pairs_equal = found == reference;
    const bool voxels_ok = alive_after_adds == met_both && alive_after_collide == met_now;
    // Every box moves after each K-th step: an exact count.
    std::uint64_t moves = 0;
    if (nodes > 1 && migrate_every > 0)
      for (std::int32_t k = 0; k < steps; ++k) moves += k % migrate_every == 0 ? 1 : 0;
    const std::uint64_t expected_migrations = moves * static_cast<std::uint64_t>(scene.objects);
    const bool migrations_ok = arrivals == expected_migrations && total[1] == expected_migrations;
    ok = pairs_equal && voxels_ok && migrations_ok;

    std::printf("arrays_voxels: %d boxes, %dx%dx%d voxels, %d steps, seed %llu, %d nodes, migrate every %d\n",
                scene.objects, scene.voxels, scene.voxels, scene.voxels, steps,
                static_cast<unsigned long long>(scene.seed), nodes, migrate_every);
    std::uint64_t total_pairs = 0;
    for (std::int32_t k = 0; k < steps; ++k) {
      const auto sk = static_cast<std::size_t>(k);
      const std::size_t got = sk < found.size() ? found[sk].size() : 0;
      total_pairs += got;
      std::printf("step %3d: pairs %5zu (O(n^2) check %5zu)%s, voxels %llu after the adds (expected %llu), "
                  "%llu after the collisions (expected %llu)\n",
                  k, got, reference[sk].size(), sk < found.size() && found[sk] == reference[sk] ? "" : " DIFFER",
                  static_cast<unsigned long long>(alive_after_adds[sk]), static_cast<unsigned long long>(met_both[sk]),
                  static_cast<unsigned long long>(alive_after_collide[sk]),
                  static_cast<unsigned long long>(met_now[sk]));
    }
    std::printf("pairs %llu over %zu reductions (%s); voxels %s; migrations %llu (on_migrated %llu, expected %llu)\n",
                static_cast<unsigned long long>(total_pairs), found.size(), pairs_equal ? "equal" : "DIFFER",
                voxels_ok ? "as expected" : "DIFFER", static_cast<unsigned long long>(total[1]),
                static_cast<unsigned long long>(arrivals), static_cast<unsigned long long>(expected_migrations));
    std::printf("messages %llu, forwarded %llu\n", static_cast<unsigned long long>(total[0]),
                static_cast<unsigned long long>(total[2]));
    std::printf("time: arrays %.6f s, O(n^2) check %.6f s\n", parallel_s, sequential_s);
    std::printf("checksum %016llx reference %016llx\n", static_cast<unsigned long long>(checksum(found)),
                static_cast<unsigned long long>(checksum(reference)));
    std::fflush(stdout);
  }
  voxel_array = nullptr;
  squall::finalize();
  if (me == 0) std::printf("%s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return squall::apps::run_program(argc, argv, "arrays_voxels", kUsage, &run); }
