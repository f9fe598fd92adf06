// SPDX-License-Identifier: BSD-3-Clause
// tcp_pingpong_mpi: the peer of tcp_pingpong, Open MPI's own ping-pong, run as
// `mpirun -np 2 ... --mca btl self,tcp tcp_pingpong_mpi` (bench/tcp/tcp_pingpong does). Rank 0
// measures, rank 1 answers, with the same exchanges as tcp_pingpong_am:
//   mpi_rtt_us  MPI_Send of 8 bytes, MPI_Send of 8 bytes back;
//   mpi_bw_gbs  MPI_Send of --bulk-bytes, each acknowledged by 8 bytes back before the next.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "pingpong.hpp"

namespace {

namespace tp = squall::bench::tcp_pingpong;

constexpr const char* usage = "usage: mpirun -np 2 tcp_pingpong_mpi [options]\n";

void send_u64(std::uint64_t v, int to) { MPI_Send(&v, 1, MPI_UINT64_T, to, 0, MPI_COMM_WORLD); }
std::uint64_t recv_u64(int from) {
  std::uint64_t v = 0;
  MPI_Recv(&v, 1, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return v;
}

[[noreturn]] void abort_with(const std::string& what) {
  std::fprintf(stderr, "tcp_pingpong_mpi: %s\n", what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // not reached
}

// Rank 1: echoes every small message, acknowledges every transfer with its number (or all
// ones when it arrived damaged).
void serve(const tp::plan& p) {
  for (std::uint64_t i = 0; i < p.total_round_trips(); ++i) send_u64(recv_u64(0), 0);
  std::vector<std::byte> buf(p.bulk_bytes);
  for (std::uint64_t k = 0; k < p.total_transfers(); ++k) {
    MPI_Recv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    send_u64(tp::marked(buf.data(), buf.size(), k) ? k : ~std::uint64_t{0}, 0);
  }
}

// Rank 0: the same sequence, timed.
tp::output measure(const tp::plan& p) {
  static_assert(tp::message_bytes == sizeof(std::uint64_t));
  std::uint64_t next = 0;
  const double rtt = tp::median_seconds_per_op(p.trials, p.iters, [&](int count) {
    for (int i = 0; i < count; ++i) {
      send_u64(++next, 1);
      if (recv_u64(1) != next) abort_with("the echo of a small message came back wrong");
    }
  });
  std::vector<std::byte> buf(p.bulk_bytes);
  std::uint64_t k = 0;
  const double per_transfer = tp::median_seconds_per_op(p.trials, p.bulk_iters, [&](int count) {
    for (int i = 0; i < count; ++i, ++k) {
      tp::mark(buf.data(), buf.size(), k);
      MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      if (recv_u64(1) != k) abort_with("transfer " + std::to_string(k) + " arrived damaged");
    }
  });
  tp::output out;
  out.add("mpi_rtt_us", tp::rtt_us(rtt));
  out.add("mpi_bw_gbs", tp::gb_per_s(p, per_transfer));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const tp::plan p = tp::parse_plan(argc, argv);
    if (size != 2) throw std::invalid_argument("needs 2 processes, not " + std::to_string(size));
    if (rank == 0) measure(p).print("tcp_pingpong_mpi: rank 0 <-> rank 1, median over trials", p.json);
    else serve(p);
  } catch (const std::invalid_argument& e) {
    // Every rank parses the same arguments, so every rank stops here.
    if (rank == 0) std::fprintf(stderr, "tcp_pingpong_mpi: %s\n%s%s", e.what(), usage, tp::plan_usage);
    status = 2;
  }
  MPI_Finalize();
  return status;
}
