// SPDX-License-Identifier: BSD-3-Clause
// dsmc_xsm: DSMC with the cells block-partitioned along x; each step every particle whose new
// cell is another node's is appended to that node's receive buffer by one active message
// (xsm::am_append): the handlers write the buffers one at a time, so no locks and no barriers
// between the writers; one end_phase per step.
#include <squall/runtime.hpp>
#include <squall/xsm/am_append.hpp>

#include "squall/apps/dsmc/parallel/receive_capacity.hpp"
#include "squall/apps/dsmc/parallel/squall_driver.hpp"

namespace {

using namespace squall::apps::dsmc;

class XsmExchange final : public ParticleExchange {
 public:
  XsmExchange(const BlockPartition& partition, std::size_t block_size)
      : moved_(sizeof(Particle), kDirections * neighbour_capacity(partition) + far_capacity(partition), block_size) {}

  std::vector<Particle> exchange(const Leaving& leaving) override {
    for (std::size_t i = 0; i < leaving.particles.size(); ++i) moved_.append(leaving.dest[i], leaving.particles[i]);
    moved_.end_phase();
    const auto arrived = moved_.received<Particle>(squall::node());
    return {arrived.begin(), arrived.end()};
  }
  std::vector<std::pair<std::string, double>> figures() const override {
    return {{"particles_moved", static_cast<double>(moved_.messages.value())},
            {"append_bytes", static_cast<double>(moved_.bytes.value())}};
  }

 private:
  squall::xsm::am_append moved_;
};

std::unique_ptr<ParticleExchange> make(const BlockPartition& partition, const VersionOptions& options) {
  return std::make_unique<XsmExchange>(partition, options.block_size);
}

int run(squall::apps::Options& options) { return run_squall_version(options, "xsm", true, make); }

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  return squall::apps::run_program(argc, argv, "dsmc_xsm", version_usage("dsmc_xsm", true).c_str(), run);
}
