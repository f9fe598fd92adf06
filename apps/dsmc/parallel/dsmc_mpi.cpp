// SPDX-License-Identifier: BSD-3-Clause
// dsmc_mpi: DSMC in plain MPI with the same partition as the Squall versions (cells
// block-partitioned along x). Each step the nodes agree on how many particles each sends each
// other (MPI_Alltoall of counts), then send them point to point, one message per communicating
// pair. messages and bytes count those particle messages (not the counts' all-to-all).
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <span>

#include "squall/apps/dsmc/parallel/local_dsmc.hpp"
#include "squall/apps/dsmc/parallel/version_program.hpp"
#include "squall/apps/phase_timer.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::dsmc;

const char* const kPhases[] = {"collide", "move", "exchange", "index"};

class MpiExchange {
 public:
  explicit MpiExchange(int nodes) : count_out_(nodes), count_in_(nodes), out_(static_cast<std::size_t>(nodes)) {}

  std::vector<Particle> exchange(const Leaving& leaving) {
    for (auto& o : out_) o.clear();
    for (std::size_t i = 0; i < leaving.particles.size(); ++i) {
      out_[static_cast<std::size_t>(leaving.dest[i])].push_back(leaving.particles[i]);
    }
    for (std::size_t d = 0; d < out_.size(); ++d) count_out_[d] = static_cast<int>(out_[d].size() * sizeof(Particle));
    MPI_Alltoall(count_out_.data(), 1, MPI_INT, count_in_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::size_t total = 0;
    for (int c : count_in_) total += static_cast<std::size_t>(c) / sizeof(Particle);
    std::vector<Particle> arrived(total);
    std::vector<MPI_Request> requests;
    auto* at = reinterpret_cast<char*>(arrived.data());
    for (std::size_t s = 0; s < count_in_.size(); ++s) {
      if (count_in_[s] == 0) continue;
      requests.emplace_back();
      MPI_Irecv(at, count_in_[s], MPI_BYTE, static_cast<int>(s), 0, MPI_COMM_WORLD, &requests.back());
      at += count_in_[s];
    }
    for (std::size_t d = 0; d < out_.size(); ++d) {
      if (count_out_[d] == 0) continue;
      requests.emplace_back();
      MPI_Isend(out_[d].data(), count_out_[d], MPI_BYTE, static_cast<int>(d), 0, MPI_COMM_WORLD, &requests.back());
      messages_ += 1;
      bytes_ += count_out_[d];
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    return arrived;
  }
  double messages() const { return messages_; }
  double bytes() const { return bytes_; }

 private:
  std::vector<int> count_out_, count_in_;
  std::vector<std::vector<Particle>> out_;
  double messages_ = 0, bytes_ = 0;
};

double sum(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}
double slowest(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

std::vector<Particle> gather_on_node0(std::span<const Particle> mine, int nodes) {
  const int bytes = static_cast<int>(mine.size_bytes());
  std::vector<int> sizes(static_cast<std::size_t>(nodes)), offsets(static_cast<std::size_t>(nodes));
  MPI_Gather(&bytes, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t n = 0; n < sizes.size(); ++n) {
    offsets[n] = total;
    total += sizes[n];
  }
  std::vector<Particle> all(static_cast<std::size_t>(total) / sizeof(Particle));
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  return all;
}

int run(Options& options) {
  const VersionOptions v = read_version_options(options, false);
  int node = 0, nodes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &node);
  MPI_Comm_size(MPI_COMM_WORLD, &nodes);
  const BlockPartition partition(Grid{v.config.cells}, nodes);
  LocalDsmc local(v.config, partition, node);
  MpiExchange exchange(nodes);

  PhaseTimer timer;
  Leaving leaving;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
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
      arrived = exchange.exchange(leaving);
    }
    auto scope = timer.time("index");
    local.index(arrived);
  }
  const double seconds = slowest(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());

  VersionReport report;
  for (const char* phase : kPhases) report.phase_seconds[phase] = slowest(timer.seconds(phase));
  RunCounts counts;
  counts.messages = sum(exchange.messages());
  counts.bytes = sum(exchange.bytes());
  const std::vector<Particle> all = gather_on_node0(local.particles(), nodes);
  int ok = 1;
  if (node == 0) {
    report.check = check_final_state(v.config, all);
    ok = report.check.ok;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (node == 0) {
    report.run = {"dsmc", "mpi", nodes, seconds, counts, ok == 1};
    print_report(report, v.json);
  }
  return ok == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // No MPI_Abort for a refused command line (status 2): every rank refuses it, and an abort
  // could end rank 0, the one that says why, before it had said it. MPI_Finalize waits for all.
  const int status = run_program(argc, argv, "dsmc_mpi", version_usage("dsmc_mpi", false).c_str(), run);
  MPI_Finalize();
  return status;
}
