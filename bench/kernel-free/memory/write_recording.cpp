// SPDX-License-Identifier: BSD-3-Clause
// write_recording: what it costs a protocol to learn which blocks a phase wrote, per block
// written, through Squall's API - the phase's stores (one to each block) plus the
// segment::take_written at its end - with the stores recorded by the kernel (a segment
// allocated with recorded_writes) and with them faulting (a store to a ReadOnly block runs the
// handler, which raises the block to ReadWrite; take_written lowers it again). Beside them in
// the same run, the floor: the same stores to ReadWrite blocks, untracked.
//
// ratio = recorded_us / faulted_us; medians of the trials. recorded = 1 when the kernel
// records (Linux 6.7+, SIGBUS fault path, SQUALL_RECORD_WRITES not 0); at 0 both columns fault.
#include <chrono>
#include <cstdio>
#include <vector>

#include <squall/memory.hpp>
#include <squall/squall.hpp>

#include "common/report.hpp"
#include "test_protocols.hpp"  // raise_only, the memory tests' protocol

namespace {

using squall::memory::block_index;
using squall::memory::block_range;
using squall::memory::segment;
using squall::memory::tag;

constexpr std::size_t page = 4096;
constexpr std::size_t blocks = 1024;  // stores per phase
constexpr int phases = 21;

void store_to_each(segment s, std::uint8_t value) {
  for (block_index b = 0; b < blocks; ++b) *reinterpret_cast<volatile std::uint8_t*>(s.address_of(b)) = value;
}

// Per block: one phase's stores, then (when `take`) the list of what was written.
double phase_us(segment s, std::vector<block_index>& written, std::uint8_t value, bool take) {
  const auto t0 = std::chrono::steady_clock::now();
  store_to_each(s, value);
  if (take && s.take_written(0, blocks, written) != blocks) {
    std::fprintf(stderr, "write_recording: take_written missed blocks\n");
    std::exit(1);
  }
  return squall::bench::seconds_since(t0) / blocks * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  squall::bench::command_line options("write_recording", argc, argv, squall::node());
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  squall::memory::testing::raise_only proto;
  const block_range all[1] = {{0, blocks}};
  const squall::memory::segment_options plain{.block_size = page, .handler = &proto, .initial = tag::read_write};
  squall::memory::segment_options with_recording = plain;
  with_recording.recorded_writes = all;
  segment recorded = squall::memory::allocate(blocks * page, with_recording);
  segment faulted = squall::memory::allocate(blocks * page, plain);
  segment floor = squall::memory::allocate(blocks * page, plain);
  std::vector<block_index> written(blocks);
  // Every page mapped, and every tracked block ReadOnly, before the first timed phase.
  for (segment s : {recorded, faulted, floor}) store_to_each(s, 1);
  recorded.take_written(0, blocks, written);
  faulted.take_written(0, blocks, written);

  std::vector<double> recorded_us, faulted_us, floor_us;
  for (int p = 0; p < phases; ++p) {  // the three in turn, each phase
    const auto value = static_cast<std::uint8_t>(p + 2);
    recorded_us.push_back(phase_us(recorded, written, value, true));
    faulted_us.push_back(phase_us(faulted, written, value, true));
    floor_us.push_back(phase_us(floor, written, value, false));
  }
  const bool kernel_records = recorded.writes_recorded(0);
  for (segment s : {recorded, faulted, floor}) squall::memory::free(s);

  const double r = squall::bench::median(recorded_us), f = squall::bench::median(faulted_us);
  squall::bench::figures out;
  out.add("recorded_us", r);
  out.add("faulted_us", f);
  out.add("floor_us", squall::bench::median(floor_us));
  out.add("recorded", kernel_records ? 1.0 : 0.0);
  out.add("ratio", r / f);
  if (squall::node() == 0) {
    out.print("write_recording: learning a phase's writes, per block stored to (median of phases)", json);
  }
  return 0;
}
