// SPDX-License-Identifier: BSD-3-Clause
// moldyn_tsm_late_commit: transparent shared memory (stache), the paper's first TSM version
// (section 5.2.2). The interaction list is a shared array filled without locks by late commit:
// each node builds its pairs into a local buffer, a prefix sum of the nodes' counts gives its
// first index, and it copies its pairs there. The force loop runs over this node's part of the
// shared list in two parts: the local pairs (both molecules its own) add straight into the
// shared force array, where only owners write in this part; then, after a barrier, the cut
// pairs' contributions go in under locks, one lock per block of the force array, each taken
// once per block the contributions touch.
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
    "usage: squallrun -n N moldyn_tsm_late_commit [--cells C] [--interactions P] [--steps S] [--rebuild-every R]\n"
    "                  [--seed S] [--block-size B] [--json]\n"
    "  the options of moldyn_seq (same defaults: the paper's size); --block-size: the coherence unit (4096)\n";

class TsmLateCommitBackend final : public ForceBackend {
 public:
  TsmLateCommitBackend(const Decomposition& d, const Runtime& rt, std::size_t block_size)
      : d_(d), rt_(rt), block_size_(block_size), potential_(d.cutoff), position_(d, rt.me, block_size),
        contribution_(d.molecules.size()),
        locks_((d.molecules.size() * sizeof(Vec3) + block_size - 1) / block_size) {
    force_ = tsm::alloc<Vec3>(d.molecules.size(), options_for(sizeof(Vec3)));
  }
  ~TsmLateCommitBackend() override {
    if (list_ != nullptr) tsm::free(list_);
    tsm::free(force_);
  }

  void publish(std::span<const Vec3> own) override {
    std::fill(force_ + d_.part(rt_.me).begin, force_ + d_.part(rt_.me).end, Vec3{});
    position_.publish(own);
  }

  void rebuild() override {
    std::size_t local = 0;
    const std::vector<Pair> pairs = node_pairs(d_, rt_.me, position_.all(), local);
    // The late commit: a prefix sum of the counts, then each node copies its pairs in.
    const double mine = static_cast<double>(pairs.size());
    const std::vector<double> counts = rt_.allgather(std::span<const double>(&mine, 1));
    std::size_t first = 0, total = 0;
    for (int p = 0; p < rt_.nodes; ++p) {
      if (p < rt_.me) first += static_cast<std::size_t>(counts[static_cast<std::size_t>(p)]);
      total += static_cast<std::size_t>(counts[static_cast<std::size_t>(p)]);
    }
    if (list_ != nullptr) tsm::free(list_);
    list_ = tsm::alloc<Pair>(std::max<std::size_t>(total, 1), {.block_size = block_size_});
    std::copy(pairs.begin(), pairs.end(), list_ + first);
    tsm::barrier();
    first_ = first;
    count_ = pairs.size();
    local_ = local;
    local_total_ += local;
    pairs_total_ += pairs.size();
    cut_touched_.clear();
    for (std::size_t k = local; k < pairs.size(); ++k) cut_touched_.push_back(pairs[k].i), cut_touched_.push_back(pairs[k].j);
    std::sort(cut_touched_.begin(), cut_touched_.end());
    cut_touched_.erase(std::unique(cut_touched_.begin(), cut_touched_.end()), cut_touched_.end());
  }

  double forces(std::span<Vec3> own_force) override {
    const std::span<const Pair> mine(list_ + first_, count_);
    const std::span<Vec3> force(force_, d_.molecules.size());
    // Local pairs: straight into the shared array (only this node writes its molecules now).
    double potential = potential_.accumulate_forces(mine.first(local_), position_.all(), d_.molecules.box, force);
    tsm::barrier();
    // Cut pairs: privately, then under the lock of each block of the force array they touch.
    for (const std::uint32_t k : cut_touched_) contribution_[k] = Vec3{};
    potential += potential_.accumulate_forces(mine.subspan(local_), position_.all(), d_.molecules.box, contribution_);
    for (std::size_t k = 0; k < cut_touched_.size();) {
      const std::size_t block = cut_touched_[k] * sizeof(Vec3) / block_size_;
      locks_.acquire(block);
      for (; k < cut_touched_.size() && cut_touched_[k] * sizeof(Vec3) / block_size_ == block; ++k) {
        force_[cut_touched_[k]] += contribution_[cut_touched_[k]];
      }
      locks_.release(block);
    }
    tsm::barrier();
    std::copy(force_ + d_.part(rt_.me).begin, force_ + d_.part(rt_.me).end, own_force.begin());
    return potential;
  }

  std::vector<std::pair<std::string, double>> figures() override {
    return {{"cut_pairs_pct", cut_pairs_pct(local_total_, pairs_total_, rt_)}};
  }

 private:
  tsm::options options_for(std::size_t element_size) const {
    const Decomposition& d = d_;
    const std::size_t block = block_size_;
    return {.block_size = block, .homes = squall::memory::home_policy::function([&d, block, element_size](auto b) {
              return home_of_block(d, b, block, element_size, 1);
            })};
  }

  const Decomposition& d_;
  const Runtime& rt_;
  std::size_t block_size_;
  LennardJones potential_;
  SharedPositions position_;
  Vec3* force_ = nullptr;
  Pair* list_ = nullptr;  // the shared interaction list, this node's pairs at [first_, first_ + count_)
  std::size_t first_ = 0, count_ = 0, local_ = 0;
  std::vector<Vec3> contribution_;
  std::vector<std::uint32_t> cut_touched_;  // molecules the cut pairs touch, ascending
  tsm::lock_array locks_;                   // one per block of the force array
  std::size_t local_total_ = 0, pairs_total_ = 0;
};

int run(Options& options) {
  const ParallelOptions o = read_moldyn_options(options);
  const std::size_t block_size = read_block_size(options);
  options.finish();
  const Runtime rt = squall_runtime();
  const Decomposition d = decompose(o.config, rt.nodes);
  TsmLateCommitBackend backend(d, rt, block_size);
  return run_parallel("tsm_late_commit", o, d, backend, rt);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return run_program(argc, argv, "moldyn_tsm_late_commit", kUsage, run);
}
