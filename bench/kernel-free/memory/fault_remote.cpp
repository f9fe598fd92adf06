// SPDX-License-Identifier: BSD-3-Clause
// fault_remote: one 4 KiB read miss served from another node - node 0 reads a block whose
// home is node 1, and the toy home-based protocol (tests/kernel-free/memory/home_protocol.hpp)
// fetches it with a request message and a grant carrying the block - beside the floor
// measured in the same run between the same two processes: a bare userfaultfd SIGBUS fault
// whose signal handler asks node 1 over a raw shared-memory ping-pong (one flag each way,
// node 1 copying the 4 KiB page into a shared buffer), copies the page into the page cache
// and resolves the fault with UFFDIO_CONTINUE (write-protected, as a ReadOnly install).
//
// remote_miss_us and floor_us are medians over every miss of every trial; ratio is their
// quotient. floor_fault_us (the bare fault resolved locally) shows what the fault alone costs.
#include <cstdio>
#include <cstring>
#include <vector>

#include <squall/memory.hpp>
#include <squall/squall.hpp>

#include "common/report.hpp"
#include "home_protocol.hpp"
#include "remote_floor.hpp"

namespace {

using squall::memory::block_index;
using squall::memory::tag;
using squall::bench::remote_floor::page;
namespace bare = squall::bench::remote_floor::bare;
using squall::bench::remote_floor::exchange;
constexpr std::size_t blocks = 2048;  // misses per trial
constexpr int trials = 7;

bool stop = false;
void on_stop(squall::am::token&) { stop = true; }


}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  squall::bench::command_line options("fault_remote", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("fault_remote", squall::nodes(), me, false)) return 1;
  if (squall::memory::active_fault_path() != squall::memory::fault_path::sigbus && me == 0) {
    std::fprintf(stderr, "fault_remote: the fault path is not SIGBUS (SQUALL_FAULT_PATH); the floor would not compare\n");
  }
  toy_coherence::home_protocol proto(blocks);
  auto s = squall::memory::allocate(blocks * page, {.block_size = page,
                                                    .homes = squall::memory::home_policy::function([](block_index) { return 1; }),
                                                    .handler = &proto,
                                                    .initial = tag::invalid});
  if (me == 1) {
    for (block_index b = 0; b < blocks; ++b) std::memset(s.protocol_view(b).data(), 3, page);
  }
  exchange* x = me < 2 ? &squall::bench::remote_floor::shared_exchange(me) : nullptr;
  if (me >= 2) {  // nodes beyond 2 take part only in the collectives
    int pid = 0;
    squall::broadcast(pid);
    squall::barrier();
    squall::barrier();
  }
  if (me == 0) bare::set_up(*x, blocks);

  std::vector<double> miss_us, floor_us, fault_us;
  for (int t = 0; t < trials; ++t) {
    squall::barrier();
    if (me == 0) {
      // Drop the copies silently: the home still lists node 0 as a sharer, which costs a read
      // request nothing.
      for (block_index b = 0; b < blocks; ++b) s.set_tag(b, tag::invalid);
      squall::bench::remote_floor::time_misses(s.base(), blocks, miss_us);
      squall::am::send<on_stop>(1);
    } else if (me == 1) {
      stop = false;
      squall::am::wait_until([] { return stop; });
    }
    squall::barrier();
    if (me == 0) {
      bare::time_pass(true, floor_us);
      bare::time_pass(false, fault_us);
    } else if (me == 1) {
      bare::serve(*x, blocks);
    }
  }
  // Every byte arrived: the last miss of each kind read what the home holds.
  const bool right_bytes = me != 0 || (*reinterpret_cast<volatile char*>(s.base() + (blocks - 1) * page) == 3 &&
                                       *reinterpret_cast<volatile char*>(bare::view + (blocks - 1) * page) == 2);
  squall::memory::free(s);
  if (!right_bytes) {
    std::fprintf(stderr, "fault_remote: a miss read the wrong bytes\n");
    return 1;
  }
  if (me == 0) {
    squall::bench::figures f;
    const double miss = squall::bench::median(miss_us), floor = squall::bench::median(floor_us);
    f.add("remote_miss_us", miss);
    f.add("floor_us", floor);
    f.add("floor_fault_us", squall::bench::median(fault_us));
    f.add("ratio", miss / floor);
    f.print("fault_remote: 4 KiB read miss served by the home on node 1 (median of 7 x 2048 misses)",
            json);
  }
  return 0;
}
