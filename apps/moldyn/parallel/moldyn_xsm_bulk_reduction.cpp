// SPDX-License-Identifier: BSD-3-Clause
// moldyn_xsm_bulk_reduction: positions in a shared array under stache (no update protocol, as
// in the paper; the blocks a node's pairs read are fetched ahead in publish(), see
// shared_positions.hpp); each node adds its pairs' forces into a private array of every molecule, and
// xsm::bulk_reduction sums the nodes' arrays round the ring over channels into the force
// array, each piece landing in its owner's blocks.
#include <algorithm>

#include <squall/squall.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/bulk_reduction.hpp>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/parallel/shared_positions.hpp"
#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::moldyn;
namespace xsm = squall::xsm;

constexpr const char* kUsage =
    "usage: squallrun -n N moldyn_xsm_bulk_reduction [--cells C] [--interactions P] [--steps S] [--rebuild-every R]\n"
    "                  [--seed S] [--block-size B] [--json]\n"
    "  the options of moldyn_seq (same defaults: the paper's size); --block-size: the coherence unit (4096)\n";

class BulkReductionBackend final : public ForceBackend {
 public:
  BulkReductionBackend(const Decomposition& d, int me, std::size_t block_size)
      : d_(d), me_(me), potential_(d.cutoff), position_(d, me, block_size), contribution_(d.molecules.size()) {
    const squall::tsm::options opt{.block_size = block_size, .homes = squall::memory::home_policy::function([&d, block_size](auto b) {
                                     return home_of_block(d, b, block_size, sizeof(double), 3);
                                   })};
    force_ = xsm::alloc<double>(3 * d.molecules.size(), bulk_, opt);
  }
  ~BulkReductionBackend() override { xsm::free(force_); }

  void publish(std::span<const Vec3> own) override { position_.publish(own); }
  void rebuild() override {
    std::size_t local = 0;
    position_.fetch_all();  // the list loop reads every molecule
    pairs_ = node_pairs(d_, me_, position_.all(), local);
    position_.fetch_ahead(pairs_);
    local_total_ += local;
    pairs_total_ += pairs_.size();
  }
  double forces(std::span<Vec3> own_force) override {
    std::fill(contribution_.begin(), contribution_.end(), Vec3{});
    const double potential = potential_.accumulate_forces(pairs_, position_.all(), d_.molecules.box, contribution_);
    bulk_.reduce(std::span<const double>(reinterpret_cast<const double*>(contribution_.data()), 3 * contribution_.size()),
                 squall::op::sum{});
    const double* mine = force_ + 3 * std::size_t{d_.part(me_).begin};
    for (std::size_t k = 0; k < own_force.size(); ++k) own_force[k] = {mine[3 * k], mine[3 * k + 1], mine[3 * k + 2]};
    return potential;
  }
  std::vector<std::pair<std::string, double>> figures() override {
    const double channel_messages = squall::allreduce(static_cast<double>(bulk_.messages.value()));
    return {{"cut_pairs_pct", cut_pairs_pct(local_total_, pairs_total_, squall_runtime())},
            {"bulk_channel_messages", channel_messages}};
  }

 private:
  const Decomposition& d_;
  int me_;
  LennardJones potential_;
  SharedPositions position_;
  xsm::bulk_reduction bulk_;
  double* force_;
  std::vector<Vec3> contribution_;
  std::vector<Pair> pairs_;
  std::size_t local_total_ = 0, pairs_total_ = 0;
};

int run(Options& options) {
  const ParallelOptions o = read_moldyn_options(options);
  const std::size_t block_size = read_block_size(options);
  options.finish();
  const Runtime rt = squall_runtime();
  const Decomposition d = decompose(o.config, rt.nodes);
  BulkReductionBackend backend(d, rt.me, block_size);
  return run_parallel("xsm_bulk_reduction", o, d, backend, rt);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return run_program(argc, argv, "moldyn_xsm_bulk_reduction", kUsage, run);
}
