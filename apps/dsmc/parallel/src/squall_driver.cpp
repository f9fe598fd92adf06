// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/dsmc/parallel/squall_driver.hpp"

#include <squall/chaos/exchange.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include "squall/apps/phase_timer.hpp"
#include "squall/apps/squall_counts.hpp"

namespace squall::apps::dsmc {
namespace {

const char* const kPhases[] = {"collide", "move", "exchange", "index"};

std::vector<Particle> gather_on_node0(std::span<const Particle> mine) {
  std::vector<std::vector<Particle>> out(static_cast<std::size_t>(squall::nodes()));
  out[0].assign(mine.begin(), mine.end());
  std::vector<Particle> all;
  for (const auto& part : chaos::exchange(out)) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace

int run_squall_version(Options& options, const std::string& version, bool block_size, ExchangeMaker make) {
  const VersionOptions v = read_version_options(options, block_size);
  const int nodes = squall::nodes(), node = squall::node();
  const BlockPartition partition(Grid{v.config.cells}, nodes);
  LocalDsmc local(v.config, partition, node);
  std::unique_ptr<ParticleExchange> exchange = make(partition, v);

  PhaseTimer timer;
  Leaving leaving;
  CountedRegion region;
  for (int s = 0; s < v.config.steps; ++s) {
    {
      auto scope = timer.time("collide");
      local.collide();
    }
    leaving.clear();
    {
      auto scope = timer.time("move");
      local.move(leaving);
    }
    std::vector<Particle> arrived;
    {
      auto scope = timer.time("exchange");
      arrived = exchange->exchange(leaving);
    }
    auto scope = timer.time("index");
    local.index(arrived);
  }
  region.end();

  VersionReport report;
  for (const char* phase : kPhases) {
    report.phase_seconds[phase] = squall::allreduce(timer.seconds(phase), squall::op::max{});
  }
  for (auto [key, value] : exchange->figures()) {
    report.extra.emplace_back(key, squall::allreduce(value, squall::op::sum{}));
  }
  const std::vector<Particle> all = gather_on_node0(local.particles());
  int ok = 1;
  if (node == 0) {
    report.check = check_final_state(v.config, all);
    ok = report.check.ok;
  }
  ok = squall::allreduce(ok, squall::op::min{});
  if (node == 0) {
    report.run = {"dsmc", version, nodes, region.seconds(), region.counts(), ok == 1};
    print_report(report, v.json);
  }
  exchange.reset();  // collective frees before the runtime ends
  return ok == 1 ? 0 : 1;
}

}  // namespace squall::apps::dsmc
