// SPDX-License-Identifier: BSD-3-Clause
// moldyn_mpi: plain Open MPI on the same RCB partition. Every step the nodes' positions are
// all-gathered (MPI_Allgatherv) and the force contributions, one full array per node, are
// summed onto their owners (MPI_Reduce_scatter). Messages and bytes: this program's MPI calls
// as sends of a ring/recursive algorithm are not visible, so it counts one message per
// (node, peer) per collective and the bytes it hands MPI.
#include <mpi.h>

#include <chrono>
#include <cstdio>

#include "squall/apps/moldyn/forces.hpp"
#include "squall/apps/moldyn/parallel/driver.hpp"

namespace {

using namespace squall::apps;
using namespace squall::apps::moldyn;

constexpr const char* kUsage =
    "usage: mpirun -n N moldyn_mpi [--cells C] [--interactions P] [--steps S] [--rebuild-every R] [--seed S] [--json]\n"
    "  the options of moldyn_seq (same defaults: the paper's size)\n";

class MpiBackend final : public ForceBackend {
 public:
  MpiBackend(const Decomposition& d, int me, int nodes)
      : d_(d), me_(me), nodes_(nodes), potential_(d.cutoff), position_(d.molecules.size()), force_(d.molecules.size()) {
    for (int p = 0; p < nodes; ++p) {
      counts_.push_back(3 * static_cast<int>(d.part(p).end - d.part(p).begin));
      displacements_.push_back(3 * static_cast<int>(d.part(p).begin));
    }
  }

  void publish(std::span<const Vec3> own) override {
    MPI_Allgatherv(own.data(), 3 * static_cast<int>(own.size()), MPI_DOUBLE, position_.data(), counts_.data(),
                   displacements_.data(), MPI_DOUBLE, MPI_COMM_WORLD);
    count(static_cast<double>(own.size()) * sizeof(Vec3));
  }
  void rebuild() override {
    pairs_ = node_pairs(d_, me_, position_, local_);
    local_total_ += local_;
    pairs_total_ += pairs_.size();
  }
  double forces(std::span<Vec3> own_force) override {
    std::fill(force_.begin(), force_.end(), Vec3{});
    const double potential = potential_.accumulate_forces(pairs_, position_, d_.molecules.box, force_);
    MPI_Reduce_scatter(force_.data(), own_force.data(), counts_.data(), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    count(static_cast<double>(force_.size() - own_force.size()) * sizeof(Vec3));
    return potential;
  }
  std::vector<std::pair<std::string, double>> figures() override {
    std::vector<double> v{static_cast<double>(local_total_), static_cast<double>(pairs_total_)};
    MPI_Allreduce(MPI_IN_PLACE, v.data(), 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return {{"cut_pairs_pct", v[1] > 0 ? 100.0 * (1.0 - v[0] / v[1]) : 0.0}};
  }

  RunCounts counts;

 private:
  void count(double bytes) {
    counts.messages += nodes_ - 1;
    counts.bytes += nodes_ > 1 ? bytes : 0;
  }

  const Decomposition& d_;
  int me_, nodes_;
  LennardJones potential_;
  std::vector<Vec3> position_, force_;
  std::vector<Pair> pairs_;
  std::size_t local_ = 0, local_total_ = 0, pairs_total_ = 0;
  std::vector<int> counts_, displacements_;
};

int run(Options& options) {
  const ParallelOptions o = read_moldyn_options(options);
  options.finish();
  int me = 0, nodes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nodes);
  const Decomposition d = decompose(o.config, nodes);
  MpiBackend backend(d, me, nodes);
  Runtime rt;
  rt.me = me;
  rt.nodes = nodes;
  rt.sum = [](std::span<double> v) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  };
  rt.max = [](std::span<double> v) {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  };
  rt.allgather = [nodes](std::span<const double> mine) {
    int n = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(nodes)), displacements(static_cast<std::size_t>(nodes));
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (std::size_t p = 0; p < counts.size(); ++p) displacements[p] = total, total += counts[p];
    std::vector<double> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displacements.data(), MPI_DOUBLE,
                   MPI_COMM_WORLD);
    return all;
  };
  double start = 0;
  rt.region_begin = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    backend.counts = {};
    start = MPI_Wtime();
  };
  rt.region_end = [&] {
    double seconds = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    RunCounts c = backend.counts;
    MPI_Allreduce(MPI_IN_PLACE, &c.messages, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &c.bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return std::pair{seconds, c};
  };
  return run_parallel("mpi", o, d, backend, rt);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int status = run_program(argc, argv, "moldyn_mpi", kUsage, run);
  MPI_Finalize();
  return status;
}
