// SPDX-License-Identifier: BSD-3-Clause
// tsm_miss: what a TSM miss costs between 2 nodes, on 4 KiB blocks homed on node 1, in the
// steady state of a producer (node 1, the home) and a consumer (node 0). Each trial node 1
// first writes every block, then node 0 takes:
//   read_miss_us   a read: request, the home lowers its own copy to ReadOnly, grant with the block
//   upgrade_us     a write to that ReadOnly copy: request, the home drops its copy, grant without bytes
//   write_miss_us  a write to a second array's block: request, grant with the block
//   exclusive_read_us, silent_upgrade_us
//                  in a third array, fresh each trial, that nobody holds: a read, granted
//                  exclusively (E), then a write to it, which raises the tag without a message
//   one_sided_read_us
//                  a read of a fourth array's block, which node 1 wrote after node 0 had read
//                  it: stache noted the block at node 1's write and reopened it at node 1's
//                  barrier, so node 0's miss copies it from node 1's memory after registering
//                  in its home word, without a message (libtsm/PROTOCOL.md, one-sided reads;
//                  left out where that is off: SQUALL_TSM_ONE_SIDED=0, SQUALL_HOME_VIEWS=0)
//   home_copy_us   the copy alone: node 0 copies a block from node 1's memory
//                  of a segment (memory::segment::copy_from_home: a home view on one host, else a
//                  remote read where the transport offers one; left out where neither is). A
//                  protocol that knows the home's copy is current can take this instead of a
//                  request and grant.
// beside the floor of fault_remote in the same run: a bare userfaultfd fault whose handler
// fetches the page from node 1 over a raw shared-memory ping-pong
// (bench/kernel-free/memory/remote_floor.hpp). The first trial warms the pages and is not
// counted. Figures are medians over every miss of the other trials; ratio = read_miss_us / floor_us.
#include <cstdio>
#include <vector>

#include <squall/memory.hpp>
#include <squall/squall.hpp>
#include <squall/tsm.hpp>

#include "common/report.hpp"
#include "remote_floor.hpp"

namespace {

namespace floor_ns = squall::bench::remote_floor;
namespace tsm = squall::tsm;
using floor_ns::page;

constexpr std::size_t blocks = 1024;  // misses of each kind per trial
constexpr int trials = 7;

std::byte* alloc_on_node_1() {
  return tsm::alloc<std::byte>(blocks * page, {.homes = squall::memory::home_policy::function([](std::size_t) { return 1; })});
}

// Node 0 writes 1, node 1 writes 2, into the first byte of every block.
void time_writes(std::byte* base, std::vector<double>& us) {
  const char value = static_cast<char>(squall::node() + 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    *reinterpret_cast<volatile char*>(base + b * page) = value;
    us.push_back(squall::bench::seconds_since(t0) * 1e6);
  }
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node();
  squall::bench::command_line options("tsm_miss", argc, argv, me);
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("tsm_miss", squall::nodes(), me, true)) return 1;
  if (squall::memory::active_fault_path() != squall::memory::fault_path::sigbus && me == 0) {
    std::fprintf(stderr, "tsm_miss: the fault path is not SIGBUS (SQUALL_FAULT_PATH); the floor would not compare\n");
  }
  floor_ns::exchange& x = floor_ns::shared_exchange(me);
  if (me == 0) floor_ns::bare::set_up(x, blocks);
  std::vector<double> read_us, upgrade_us, write_us, exclusive_read_us, silent_us, floor_us, unused;
  bool right = true;
  std::byte* a = alloc_on_node_1();
  std::byte* b = alloc_on_node_1();
  std::byte* c = alloc_on_node_1();  // written by node 1 and read by node 0 every trial
  std::vector<double> one_sided_us;
  std::uint64_t one_sided_reads = 0;
  // A plain segment (every block ReadWrite everywhere, no protocol) whose blocks are node 1's.
  const squall::memory::segment plain =
      squall::memory::allocate(blocks * page, {.homes = squall::memory::home_policy::function([](std::size_t) { return 1; })});
  std::vector<double> home_copy_us;
  bool copies = true;  // node 1's memory can be read from here (not with SQUALL_HOME_VIEWS=0 and no remote reads)
  for (int t = 0; t <= trials; ++t) {
    const bool counted = t > 0;
    if (me == 1) {  // the producer: its writes take every block back
      std::vector<double> ignored;
      time_writes(a, ignored);
      time_writes(b, ignored);
      time_writes(c, ignored);
    }
    tsm::barrier();
    if (me == 0) {  // node 1 serves from its barrier wait meanwhile
      const std::uint64_t before = tsm::counts_of(c).one_sided_reads;
      floor_ns::time_misses(c, blocks, counted ? one_sided_us : unused);
      if (counted) one_sided_reads += tsm::counts_of(c).one_sided_reads - before;
      right = right && *reinterpret_cast<volatile char*>(c + (blocks - 1) * page) == 2;
      floor_ns::time_misses(a, blocks, counted ? read_us : unused);
      right = right && *reinterpret_cast<volatile char*>(a + (blocks - 1) * page) == 2;
      time_writes(a, counted ? upgrade_us : unused);
      time_writes(b, counted ? write_us : unused);
    }
    std::byte* fresh = alloc_on_node_1();  // collective; nobody holds its blocks
    if (me == 0) {
      std::vector<double> ignored;
      floor_ns::time_misses(fresh, blocks, counted ? exclusive_read_us : ignored);
      time_writes(fresh, counted ? silent_us : ignored);
    }
    tsm::free(fresh);  // collective
    tsm::barrier();
    if (me == 0) {
      floor_ns::bare::time_pass(true, counted ? floor_us : unused);
    } else {
      floor_ns::bare::serve(x, blocks);
    }
    if (me == 1) {
      for (std::size_t k = 0; k < blocks; ++k) plain.protocol_view(k)[0] = static_cast<std::byte>(t + 1);
    }
    squall::barrier();
    for (std::size_t k = 0; me == 0 && copies && k < blocks; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      copies = plain.copy_from_home(k);
      if (counted && copies) home_copy_us.push_back(squall::bench::seconds_since(t0) * 1e6);
      right = right && (!copies || plain.protocol_view(k)[0] == static_cast<std::byte>(t + 1));
    }
    squall::barrier();
  }
  squall::memory::free(plain);
  tsm::free(c);
  tsm::free(b);
  tsm::free(a);
  if (!right) {
    std::fprintf(stderr, "tsm_miss: node 0 did not read node 1's write\n");
    return 1;
  }
  if (me == 0) {
    squall::bench::figures f;
    const double read = squall::bench::median(read_us), floor = squall::bench::median(floor_us);
    f.add("read_miss_us", read);
    f.add("write_miss_us", squall::bench::median(write_us));
    f.add("upgrade_us", squall::bench::median(upgrade_us));
    f.add("exclusive_read_us", squall::bench::median(exclusive_read_us));
    f.add("silent_upgrade_us", squall::bench::median(silent_us));
    // Every counted miss one-sided, or the figure would mix the two kinds.
    if (one_sided_reads == one_sided_us.size()) f.add("one_sided_read_us", squall::bench::median(one_sided_us));
    if (copies) f.add("home_copy_us", squall::bench::median(home_copy_us));
    f.add("floor_us", floor);
    f.add("ratio", read / floor);
    f.print("tsm_miss: 4 KiB blocks homed on node 1, misses from node 0 (median of 7 x 1024 of each)",
            json);
  }
  return 0;
}
