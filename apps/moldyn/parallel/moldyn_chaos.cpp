// SPDX-License-Identifier: BSD-3-Clause
// moldyn_chaos: CHAOS on the RCB partition. At every list build the positions are
// all-gathered for the list loop and the inspector re-run on the node's pairs (a new
// schedule: ghosts and localised pairs); every step gathers the ghosts' positions and
// scatter_op(add)s the ghosts' force contributions to their owners.
#include <squall/chaos/exchange.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/squall.hpp>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::moldyn;
namespace chaos = squall::chaos;

constexpr const char* kUsage =
    "usage: squallrun -n N moldyn_chaos [--cells C] [--interactions P] [--steps S] [--rebuild-every R] [--seed S] [--json]\n"
    "  the options of moldyn_seq (same defaults: the paper's size)\n";

std::vector<chaos::index> owned_names(const Decomposition& d, int me) {
  std::vector<chaos::index> owned;
  for (std::uint32_t k = d.part(me).begin; k < d.part(me).end; ++k) owned.push_back(k);
  return owned;
}

class ChaosBackend final : public ForceBackend {
 public:
  ChaosBackend(const Decomposition& d, int me)
      : d_(d), me_(me), potential_(d.cutoff), owned_(owned_names(d, me)),
        table_(owned_, static_cast<chaos::index>(d.molecules.size())), position_(owned_.size()) {}

  void publish(std::span<const Vec3> own) override { std::copy(own.begin(), own.end(), position_.begin()); }
  void rebuild() override {
    const std::span<const Vec3> own(position_.data(), owned_.size());
    const std::vector<double> all = chaos::allgather(
        std::span<const double>(reinterpret_cast<const double*>(own.data()), 3 * own.size()));
    const std::span<const Vec3> everyone(reinterpret_cast<const Vec3*>(all.data()), all.size() / 3);
    std::size_t local = 0;
    const std::vector<Pair> pairs = node_pairs(d_, me_, everyone, local);
    std::vector<chaos::index> i, j;
    for (const Pair& p : pairs) i.push_back(p.i), j.push_back(p.j);
    schedule_ = chaos::inspect(table_, {std::span<chaos::index>(i), std::span<chaos::index>(j)});
    pairs_.clear();
    for (std::size_t k = 0; k < i.size(); ++k) {
      pairs_.push_back({static_cast<std::uint32_t>(i[k]), static_cast<std::uint32_t>(j[k])});
    }
    position_.resize(static_cast<std::size_t>(schedule_.ghost_end()));
    force_.resize(position_.size());
    local_total_ += local;
    pairs_total_ += pairs.size();
    ghosts_ += static_cast<double>(schedule_.ghosts());
    ++builds_;
  }
  double forces(std::span<Vec3> own_force) override {
    chaos::gather(schedule_, std::span<Vec3>(position_));
    std::fill(force_.begin(), force_.end(), Vec3{});
    const double potential = potential_.accumulate_forces(pairs_, position_, d_.molecules.box, force_);
    chaos::scatter_op(schedule_, std::span<Vec3>(force_), chaos::combine::add{});
    std::copy(force_.begin(), force_.begin() + static_cast<std::ptrdiff_t>(own_force.size()), own_force.begin());
    return potential;
  }
  std::vector<std::pair<std::string, double>> figures() override {
    const double cut = cut_pairs_pct(local_total_, pairs_total_, squall_runtime());
    const double ghosts = squall::allreduce(ghosts_ / builds_);
    return {{"cut_pairs_pct", cut}, {"ghosts_per_build", ghosts}, {"inspector_runs", builds_}};
  }

 private:
  const Decomposition& d_;
  int me_;
  LennardJones potential_;
  std::vector<chaos::index> owned_;
  chaos::translation_table table_;
  chaos::schedule schedule_;
  std::vector<Vec3> position_, force_;  // owned molecules first, then the schedule's ghosts
  std::vector<Pair> pairs_;             // in local numbering
  std::size_t local_total_ = 0, pairs_total_ = 0;
  double ghosts_ = 0, builds_ = 0;
};

int run(Options& options) {
  const ParallelOptions o = read_moldyn_options(options);
  options.finish();
  const Runtime rt = squall_runtime();
  const Decomposition d = decompose(o.config, rt.nodes);
  ChaosBackend backend(d, rt.me);
  return run_parallel("chaos", o, d, backend, rt);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return run_program(argc, argv, "moldyn_chaos", kUsage, run);
}
