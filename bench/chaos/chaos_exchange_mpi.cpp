// SPDX-License-Identifier: BSD-3-Clause
// chaos_exchange_mpi: the message-passing half of the chaos_exchange benchmark (run under
// mpirun on as many processes as the Squall run had nodes; bench/chaos/chaos_exchange runs it).
//
// Reads the partition chaos_exchange_squall wrote (owner of every mesh node, rank of every
// edge), builds the same mesh, and moves the same values with plain MPI: the lists computed
// once, then gather and scatter-add by MPI_Alltoallv and by MPI_Isend/MPI_Irecv to the
// neighbours ("a2av" and "p2p"), checked and timed exactly as the Squall half times
// chaos::gather/scatter_op. mpi_gather_us and mpi_scatter_add_us are the faster of the two.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "batch_timer.hpp"
#include "common/report.hpp"
#include "exchange_input.hpp"
#include "exchange_options.hpp"
#include "mpi_exchange.hpp"
#include "partition_file.hpp"

namespace {

namespace cx = squall::bench::chaos_exchange;

constexpr const char* kUsage =
    "usage: mpirun -np N chaos_exchange_mpi --partition FILE [--json] [--trials T] [--reps R]\n"
    "  FILE is written by chaos_exchange_squall --partition FILE on N nodes\n";

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int ranks() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void check_partition(const cx::partition& p, const cx::mesh::Mesh& m) {
  if (p.parts != ranks()) {
    throw std::runtime_error("the partition is for " + std::to_string(p.parts) + " nodes, not " +
                             std::to_string(ranks()) + " processes");
  }
  if (p.node_owner.size() != m.node_count() || p.edge_owner.size() != m.edges.size()) {
    throw std::runtime_error("the partition does not match the mesh it names");
  }
  const auto bad = [&](std::int32_t o) { return o < 0 || o >= p.parts; };
  if (std::any_of(p.node_owner.begin(), p.node_owner.end(), bad) ||
      std::any_of(p.edge_owner.begin(), p.edge_owner.end(), bad)) {
    throw std::runtime_error("the partition names a rank that does not exist");
  }
}

// Slowest rank of each batch, median over batches.
double median_of_slowest(std::vector<double> per_batch) {
  MPI_Allreduce(MPI_IN_PLACE, per_batch.data(), static_cast<int>(per_batch.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  return squall::bench::median(per_batch);
}

std::int64_t sum(std::int64_t v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

using exchange_fn = void (cx::mpi_exchange::*)(cx::node_values*);

// Gathers by `fn` into x (ghosts reset first) and checks every end an edge reads.
std::int64_t check_gather(cx::mpi_exchange& ex, exchange_fn fn, const std::vector<std::int64_t>& a_local,
                          const std::vector<std::int64_t>& b_local, const std::vector<std::int64_t>& a_global,
                          const std::vector<std::int64_t>& b_global, std::vector<cx::node_values>& x) {
  std::fill(x.begin() + ex.local_size(), x.end(), cx::owner_value(-1));
  (ex.*fn)(x.data());
  std::int64_t bad = 0;
  for (std::size_t e = 0; e < a_local.size(); ++e) {
    bad += !(x[static_cast<std::size_t>(a_local[e])] == cx::owner_value(a_global[e]));
    bad += !(x[static_cast<std::size_t>(b_local[e])] == cx::owner_value(b_global[e]));
  }
  return bad;
}

// The edge loop's reduction, combined by `fn`, checked against every owner's degree.
std::int64_t check_scatter_add(cx::mpi_exchange& ex, exchange_fn fn, const std::vector<std::int64_t>& a_local,
                               const std::vector<std::int64_t>& b_local, const std::vector<std::int64_t>& degree,
                               std::vector<cx::node_values>& y) {
  std::fill(y.begin(), y.end(), cx::node_values{});
  for (std::size_t e = 0; e < a_local.size(); ++e) {
    y[static_cast<std::size_t>(a_local[e])] = y[static_cast<std::size_t>(a_local[e])] + cx::edge_contribution();
    y[static_cast<std::size_t>(b_local[e])] = y[static_cast<std::size_t>(b_local[e])] + cx::edge_contribution();
  }
  (ex.*fn)(y.data());
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < ex.owned().size(); ++i) {
    bad += !(y[i] == cx::expected_sum(degree[static_cast<std::size_t>(ex.owned()[i])]));
  }
  return bad;
}

int run(const cx::options& o) {
  const cx::partition part = cx::read_partition(o.partition);
  const cx::mesh_input input = cx::make_mesh(part.shape, part.seed);
  const cx::mesh::Mesh& m = input.mesh;
  check_partition(part, m);
  const int me = rank();

  std::vector<std::int64_t> a_global, b_global;
  for (std::size_t e = 0; e < m.edges.size(); ++e) {
    if (part.edge_owner[e] != me) continue;
    a_global.push_back(m.edges[e].a);
    b_global.push_back(m.edges[e].b);
  }
  std::vector<std::int64_t> a_local = a_global, b_local = b_global;
  // The first collectives of a run set up connections: keep that out of the lists' time.
  std::vector<int> warm(static_cast<std::size_t>(ranks()) * 2, 0);
  MPI_Alltoall(warm.data(), 1, MPI_INT, warm.data() + ranks(), 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  cx::mpi_exchange ex(MPI_COMM_WORLD, part.node_owner, {std::span(a_local), std::span(b_local)});
  const double lists_ms = median_of_slowest({squall::bench::seconds_since(t0) * 1e3});

  const auto slots = static_cast<std::size_t>(ex.ghost_end());
  std::vector<cx::node_values> x(slots), y(slots);
  for (std::size_t i = 0; i < ex.owned().size(); ++i) x[i] = cx::owner_value(ex.owned()[i]);
  const std::vector<std::int64_t> degree = cx::node_degrees(m);
  std::int64_t bad = 0;
  for (exchange_fn fn : {&cx::mpi_exchange::gather_alltoallv, &cx::mpi_exchange::gather_neighbours}) {
    bad += check_gather(ex, fn, a_local, b_local, a_global, b_global, x);
  }
  for (exchange_fn fn : {&cx::mpi_exchange::scatter_add_alltoallv, &cx::mpi_exchange::scatter_add_neighbours}) {
    bad += check_scatter_add(ex, fn, a_local, b_local, degree, y);
  }
  bad = sum(bad);
  if (bad != 0) {
    if (me == 0) std::fprintf(stderr, "chaos_exchange_mpi: %lld values moved wrongly\n", static_cast<long long>(bad));
    return 1;
  }

  const auto sync = [] { MPI_Barrier(MPI_COMM_WORLD); };
  const auto time = [&](exchange_fn fn, std::vector<cx::node_values>& data) {
    return median_of_slowest(cx::time_batches(o.plan, sync, [&] { (ex.*fn)(data.data()); }));
  };
  const double gather_a2a = time(&cx::mpi_exchange::gather_alltoallv, x);
  const double gather_nb = time(&cx::mpi_exchange::gather_neighbours, x);
  const double scatter_a2a = time(&cx::mpi_exchange::scatter_add_alltoallv, y);
  const double scatter_nb = time(&cx::mpi_exchange::scatter_add_neighbours, y);

  const std::int64_t ghosts = sum(ex.ghosts()), messages = sum(ex.peers_sent_to());
  if (me != 0) return 0;
  squall::bench::figures out;
  out.add("nodes", ranks());
  out.add("mpi_gather_us", std::min(gather_a2a, gather_nb));
  out.add("mpi_scatter_add_us", std::min(scatter_a2a, scatter_nb));
  out.add("mpi_gather_a2av_us", gather_a2a);
  out.add("mpi_gather_p2p_us", gather_nb);
  out.add("mpi_scatter_add_a2av_us", scatter_a2a);
  out.add("mpi_scatter_add_p2p_us", scatter_nb);
  out.add("mpi_lists_ms", lists_ms);
  out.add("ghosts", static_cast<double>(ghosts));
  out.add("messages", static_cast<double>(messages));
  char title[160];
  std::snprintf(title, sizeof title,
                "chaos_exchange_mpi: the same exchange with Open MPI, %d processes (median of %d x %d, slowest rank)",
                ranks(), o.plan.trials, o.plan.reps);
  out.print(title, o.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::optional<cx::options> o;
  try {
    o = cx::parse_options(argc, argv, kUsage);
    if (o->partition.empty()) throw std::invalid_argument(std::string("--partition FILE is required\n") + kUsage);
  } catch (const std::invalid_argument& e) {  // every rank parses the same arguments: all stop
    if (rank() == 0) std::fprintf(stderr, "chaos_exchange_mpi: %s\n", e.what());
    o.reset();
  }
  int status = 2;
  try {
    if (o) status = run(*o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chaos_exchange_mpi (rank %d): %s\n", rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
