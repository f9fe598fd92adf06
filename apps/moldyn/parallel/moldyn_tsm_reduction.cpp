// SPDX-License-Identifier: BSD-3-Clause
// moldyn_tsm_reduction: transparent shared memory (stache). Positions in a shared array; each
// node adds its pairs' forces into a private array, then the TSM-reduction: the shared force
// array cut into the nodes' pieces (the molecules each owns), each node adding its
// contributions to one piece per step, the pieces rotating, a barrier after each of the N steps.
#include <algorithm>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/parallel/shared_positions.hpp"
#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::moldyn;
namespace tsm = squall::tsm;

constexpr const char* kUsage =
    "usage: squallrun -n N moldyn_tsm_reduction [--cells C] [--interactions P] [--steps S] [--rebuild-every R]\n"
    "                  [--seed S] [--block-size B] [--json]\n"
    "  the options of moldyn_seq (same defaults: the paper's size); --block-size: the coherence unit (4096)\n";

class TsmReductionBackend final : public ForceBackend {
 public:
  TsmReductionBackend(const Decomposition& d, int me, int nodes, std::size_t block_size)
      : d_(d), me_(me), nodes_(nodes), potential_(d.cutoff), position_(d, me, block_size),
        contribution_(d.molecules.size()) {
    const tsm::options opt{.block_size = block_size, .homes = squall::memory::home_policy::function([&d, block_size](auto b) {
                             return home_of_block(d, b, block_size, sizeof(Vec3), 1);
                           })};
    force_ = tsm::alloc<Vec3>(d.molecules.size(), opt);
  }
  ~TsmReductionBackend() override { tsm::free(force_); }

  void publish(std::span<const Vec3> own) override {
    std::fill(force_ + d_.part(me_).begin, force_ + d_.part(me_).end, Vec3{});
    position_.publish(own);
  }
  void rebuild() override {
    std::size_t local = 0;
    pairs_ = node_pairs(d_, me_, position_.all(), local);
    touched_.clear();
    for (const Pair& p : pairs_) touched_.push_back(p.i), touched_.push_back(p.j);
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    piece_start_.clear();
    for (int p = 0; p <= nodes_; ++p) {
      const std::uint32_t first = p == nodes_ ? d_.part(p - 1).end : d_.part(p).begin;
      piece_start_.push_back(static_cast<std::size_t>(std::lower_bound(touched_.begin(), touched_.end(), first) -
                                                      touched_.begin()));
    }
    local_total_ += local;
    pairs_total_ += pairs_.size();
  }
  double forces(std::span<Vec3> own_force) override {
    for (const std::uint32_t i : touched_) contribution_[i] = Vec3{};
    const double potential = potential_.accumulate_forces(pairs_, position_.all(), d_.molecules.box, contribution_);
    for (int step = 0; step < nodes_; ++step) {
      const auto piece = static_cast<std::size_t>((me_ + step) % nodes_);
      for (std::size_t k = piece_start_[piece]; k < piece_start_[piece + 1]; ++k) {
        force_[touched_[k]] += contribution_[touched_[k]];
      }
      tsm::barrier();
    }
    std::copy(force_ + d_.part(me_).begin, force_ + d_.part(me_).end, own_force.begin());
    return potential;
  }
  std::vector<std::pair<std::string, double>> figures() override {
    return {{"cut_pairs_pct", cut_pairs_pct(local_total_, pairs_total_, squall_runtime())}};
  }

 private:
  const Decomposition& d_;
  int me_, nodes_;
  LennardJones potential_;
  SharedPositions position_;
  Vec3* force_;
  std::vector<Vec3> contribution_;
  std::vector<Pair> pairs_;
  std::vector<std::uint32_t> touched_;   // molecules this node's pairs touch, ascending
  std::vector<std::size_t> piece_start_;  // touched_ cut by owner
  std::size_t local_total_ = 0, pairs_total_ = 0;
};

int run(Options& options) {
  const ParallelOptions o = read_moldyn_options(options);
  const std::size_t block_size = read_block_size(options);
  options.finish();
  const Runtime rt = squall_runtime();
  const Decomposition d = decompose(o.config, rt.nodes);
  TsmReductionBackend backend(d, rt.me, rt.nodes, block_size);
  return run_parallel("tsm_reduction", o, d, backend, rt);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return run_program(argc, argv, "moldyn_tsm_reduction", kUsage, run);
}
