// SPDX-License-Identifier: BSD-3-Clause
// dsmc_chaos: DSMC with the cells block-partitioned along x; each step the particles whose new
// cell is another node's go there with chaos::scatter_append (one message per communicating
// pair of nodes, after an allreduce of the counts).
#include <squall/chaos/schedule.hpp>
#include <squall/runtime.hpp>

#include "squall/apps/dsmc/parallel/squall_driver.hpp"

namespace {

using namespace squall::apps::dsmc;

class ChaosExchange final : public ParticleExchange {
 public:
  std::vector<Particle> exchange(const Leaving& leaving) override {
    sent_ += static_cast<double>(leaving.particles.size());
    return squall::chaos::scatter_append(std::span<const Particle>(leaving.particles),
                                         std::span<const int>(leaving.dest));
  }
  std::vector<std::pair<std::string, double>> figures() const override { return {{"particles_moved", sent_}}; }

 private:
  double sent_ = 0;
};

std::unique_ptr<ParticleExchange> make(const BlockPartition&, const VersionOptions&) {
  return std::make_unique<ChaosExchange>();
}

int run(squall::apps::Options& options) { return run_squall_version(options, "chaos", false, make); }

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  return squall::apps::run_program(argc, argv, "dsmc_chaos", version_usage("dsmc_chaos", false).c_str(), run);
}
