// SPDX-License-Identifier: BSD-3-Clause
// Block tags and fault vectoring: exact fault counts for scripted access sequences, on the
// fault path SQUALL_FAULT_PATH selects.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <squall/squall.hpp>
#include <squall/memory.hpp>

#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::tag;
using memory::testing::counter_delta;
using memory::testing::touch_read;
using memory::testing::touch_write;


// Mappings (lines of /proc/self/maps) that overlap [base, base + bytes): the segment's own,
// whatever else the process maps meanwhile (a sanitizer's shadow memory does).
int maps_lines(const void* base, std::size_t bytes) {
  const auto from = reinterpret_cast<std::uintptr_t>(base), to = from + bytes;
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) {
    const std::uintptr_t start = std::stoull(line, nullptr, 16);
    const std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    n += start < to && end > from;
  }
  return n;
}

class AccessControl : public ::testing::Test {
 protected:
  void allocate(std::size_t blocks, std::size_t block_size = page) {
    seg = memory::allocate(blocks * block_size,
                           {.block_size = block_size, .handler = &proto, .initial = tag::invalid});
  }
  void TearDown() override { memory::free(seg); }
  std::byte* at(memory::block_index b, std::size_t offset = 0) { return seg.address_of(b) + offset; }

  memory::testing::raise_only proto;
  memory::segment seg;
};

// The bytes of memory the segment of `bytes` bytes has allocated (its memfd's blocks), found
// among this process's memfds by name and size.
std::size_t allocated_bytes_of_segment(std::size_t bytes) {
  std::size_t found = 0, allocated = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    struct stat st{};
    if (ec || target.find("memfd:squall-segment") == std::string::npos || ::stat(fd.path().c_str(), &st) != 0 ||
        static_cast<std::size_t>(st.st_size) != bytes) {
      continue;
    }
    ++found;
    allocated = static_cast<std::size_t>(st.st_blocks) * 512;
  }
  EXPECT_EQ(found, 1u) << "segments of " << bytes << " bytes";
  return allocated;
}

// segment_options::fill_around_faults: a fault on an Invalid block first allocates the pages
// of its aligned run, zero where nothing was written and keeping what was; a fault on an
// allowed block fills nothing.
TEST_F(AccessControl, AFaultFillsTheAlignedRunAroundItFirst) {
  constexpr std::size_t kBlocks = 1024, kRun = 512;
  seg = memory::allocate(kBlocks * page, {.block_size = page,
                                          .handler = &proto,
                                          .initial = tag::invalid,
                                          .fill_around_faults = kRun * page});
  seg.protocol_view(kRun + 100)[7] = std::byte{0xab};  // written before any fault
  EXPECT_EQ(allocated_bytes_of_segment(kBlocks * page), page);
  counter_delta d;
  touch_write(at(kRun + 88));
  EXPECT_EQ(d("memory.fills_around"), 1u);
  EXPECT_EQ(allocated_bytes_of_segment(kBlocks * page), kRun * page);  // blocks kRun to kBlocks
  touch_write(at(kRun + 88, 1));  // allowed: no fault, no fill
  EXPECT_EQ(d("memory.fills_around"), 1u);
  EXPECT_EQ(static_cast<int>(*at(kRun + 100, 7)), 0xab);  // a read fault; the byte kept
  EXPECT_EQ(static_cast<int>(*at(kRun + 101, 7)), 0);
  EXPECT_EQ(d("memory.fills_around"), 3u);
  EXPECT_EQ(proto.reads.load() + proto.writes.load(), 3);
}

TEST_F(AccessControl, ScriptedSequenceFaultsExactly) {
  allocate(4);
  counter_delta d;
  touch_read(at(0));      // read on Invalid
  touch_read(at(0, 9));   // allowed
  touch_write(at(0));     // write on ReadOnly
  touch_write(at(1));     // write on Invalid
  touch_read(at(1));      // allowed
  seg.set_tag(0, tag::invalid);
  touch_write(at(0, 5));  // write on Invalid
  seg.set_tag(1, tag::read_only);
  touch_read(at(1));      // allowed
  touch_write(at(1));     // write on ReadOnly
  EXPECT_EQ(d("memory.faults.read_invalid"), 1u);
  EXPECT_EQ(d("memory.faults.write_invalid"), 2u);
  EXPECT_EQ(d("memory.faults.write_readonly"), 2u);
  EXPECT_EQ(d("memory.tag_changes"), 7u);  // five by the handlers, two here
  EXPECT_GT(d("memory.fault_handler_ns"), 0u);
  EXPECT_EQ(proto.reads.load(), 1);
  EXPECT_EQ(proto.writes.load(), 4);
  EXPECT_EQ(seg.tag_of(0), tag::read_write);
  EXPECT_EQ(seg.tag_of(2), tag::invalid);
}

TEST_F(AccessControl, InvalidBlocksKeepTheirData) {
  allocate(2);
  touch_write(at(1, 100), 77);
  seg.set_tag(1, tag::invalid);
  EXPECT_EQ(seg.protocol_view(1)[100], std::byte{77});
  counter_delta d;
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(1, 100)), 77);
  EXPECT_EQ(d("memory.faults.read_invalid"), 1u);
}

TEST_F(AccessControl, InstallSetsDataAndTagInOneStep) {
  allocate(3);
  std::vector<std::byte> data(page, std::byte{0xAB});
  counter_delta d;
  seg.install(2, data, tag::read_only);
  EXPECT_EQ(seg.tag_of(2), tag::read_only);
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(2, 4000)), 0xAB);  // no fault
  EXPECT_EQ(d("memory.faults.read_invalid"), 0u);
  touch_write(at(2));
  EXPECT_EQ(d("memory.faults.write_readonly"), 1u);
  data.assign(page, std::byte{0x11});
  seg.install(2, data, tag::read_write);  // over a mapped block
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(2, 1)), 0x11);
  seg.install(0, data, tag::invalid);
  EXPECT_EQ(seg.protocol_view(0)[5], std::byte{0x11});
  EXPECT_EQ(d("memory.installs"), 3u);
  EXPECT_EQ(d("memory.faults.read_invalid") + d("memory.faults.write_invalid"), 0u);
}

// set_tags maps a run of Invalid blocks at once: fresh ones read as zeros, ones with data keep
// it, ReadOnly ones fault on a write only, and nothing faults before that. It refuses a run
// with a block that is not Invalid, or that runs past the segment, and changes no tag then.
TEST_F(AccessControl, SetTagsMapsARunOfInvalidBlocksAtOnce) {
  allocate(8, 2 * page);
  touch_write(at(3, page + 7), 42);
  seg.set_tag(3, tag::invalid);
  counter_delta d;
  seg.set_tags(1, 5, tag::read_write);
  seg.set_tags(6, 8, tag::read_only);
  seg.set_tags(5, 5, tag::read_only);  // an empty run
  EXPECT_EQ(d("memory.tag_changes"), 6u);
  for (memory::block_index b = 1; b < 5; ++b) EXPECT_EQ(seg.tag_of(b), tag::read_write) << b;
  EXPECT_EQ(seg.tag_of(0), tag::invalid);
  EXPECT_EQ(seg.tag_of(5), tag::invalid);
  EXPECT_EQ(seg.tag_of(7), tag::read_only);
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(3, page + 7)), 42);
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(4, page + 100)), 0);
  for (memory::block_index b = 1; b < 5; ++b) touch_write(at(b, page), 9);
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(6, 3)), 0);
  EXPECT_EQ(d("memory.faults.read_invalid") + d("memory.faults.write_invalid") + d("memory.faults.write_readonly"), 0u);
  touch_write(at(7, page));
  EXPECT_EQ(d("memory.faults.write_readonly"), 1u);
  EXPECT_EQ(proto.reads.load() + proto.writes.load(), 2);  // block 3's first write, and this one

  EXPECT_THROW(seg.set_tags(0, 2, tag::read_write), usage_error);  // block 1 is ReadWrite
  EXPECT_THROW(seg.set_tags(5, 9, tag::read_write), usage_error);  // past the end
  EXPECT_THROW(seg.set_tags(5, 4, tag::read_write), usage_error);
  EXPECT_EQ(seg.tag_of(0), tag::invalid);
  EXPECT_EQ(seg.tag_of(5), tag::invalid);
}

TEST_F(AccessControl, BlocksOfSeveralPagesFaultOnce) {
  allocate(2, 4 * page);
  counter_delta d;
  touch_write(at(1, 3 * page + 1));
  for (std::size_t p = 0; p < 4; ++p) touch_write(at(1, p * page));
  EXPECT_EQ(d("memory.faults.write_invalid"), 1u);
  seg.set_tag(1, tag::read_only);
  for (std::size_t p = 0; p < 4; ++p) touch_read(at(1, p * page));
  touch_write(at(1, 2 * page));
  for (std::size_t p = 0; p < 4; ++p) touch_write(at(1, p * page));
  EXPECT_EQ(d("memory.faults.write_readonly"), 1u);
  EXPECT_EQ(d("memory.faults.read_invalid"), 0u);
}

TEST_F(AccessControl, ThousandsOfTagChangesAddNoMappings) {
  constexpr std::size_t blocks = 16384;
  allocate(blocks);
  const int lines = maps_lines(seg.base(), seg.size());
  counter_delta d;
  // The same script on a model of the tags gives the exact counts to expect.
  std::vector<tag> model(blocks, tag::invalid);
  std::uint64_t changes = 0, read_faults = 0;
  const tag cycle[] = {tag::read_write, tag::invalid, tag::read_only, tag::invalid};
  for (int round = 0; round < 4; ++round) {
    for (std::size_t b = round % 2; b < blocks; b += 2) {
      seg.set_tag(b, cycle[round]);
      changes += model[b] != cycle[round];
      model[b] = cycle[round];
    }
    for (std::size_t b = 0; b < blocks; b += 7) {
      touch_read(at(b));
      if (model[b] == tag::invalid) {
        ++read_faults;
        ++changes;
        model[b] = tag::read_only;
      }
    }
  }
  EXPECT_EQ(maps_lines(seg.base(), seg.size()), lines);
  EXPECT_EQ(d("memory.faults.read_invalid"), read_faults);
  EXPECT_EQ(d("memory.tag_changes"), changes);
  EXPECT_GT(read_faults, 1000u);
  for (std::size_t b = 0; b < blocks; ++b) ASSERT_EQ(seg.tag_of(b), model[b]) << b;
}

TEST_F(AccessControl, PagesTheKernelDroppedAreMappedWithoutTheProtocol) {
  allocate(2);
  touch_write(at(0), 5);
  ASSERT_EQ(::madvise(at(0), page, MADV_DONTNEED), 0);  // as page reclaim would
  counter_delta d;
  EXPECT_EQ(*reinterpret_cast<volatile std::uint8_t*>(at(0)), 5);
  touch_write(at(0));
  EXPECT_EQ(d("memory.mapped_on_touch"), 1u);
  EXPECT_EQ(proto.reads.load() + proto.writes.load(), 1);  // only the first write
}

TEST_F(AccessControl, FaultPathFollowsTheConfiguration) {
  allocate(1);
  const char* path = std::getenv("SQUALL_FAULT_PATH");
  const bool thread = path != nullptr && std::strcmp(path, "thread") == 0;
  EXPECT_EQ(memory::active_fault_path(), thread ? memory::fault_path::thread : memory::fault_path::sigbus);
}

struct thread_recorder : memory::testing::raise_only {
  std::atomic<long> handler_thread{0};
  void read_fault(memory::segment s, memory::block_index b) override {
    handler_thread = ::syscall(SYS_gettid);
    raise_only::read_fault(s, b);
  }
};

TEST(FaultPath, HandlersRunInTheFaultingThreadOnlyOnTheSigbusPath) {
  thread_recorder rec;
  auto s = memory::allocate(page, {.handler = &rec, .initial = tag::invalid});
  touch_read(s.base());
  const bool same = rec.handler_thread == ::syscall(SYS_gettid);
  EXPECT_EQ(same, memory::active_fault_path() == memory::fault_path::sigbus);
  memory::free(s);
}

// Threads waiting in the kernel on a fault of this process (thread path).
int threads_waiting_on_faults() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream wchan(task.path() / "wchan");
    std::string where;
    if (std::getline(wchan, where) && where == "handle_userfault") ++n;
  }
  return n;
}

// Its read fault on block 0 is held until `expected` threads wait in the kernel on faults.
struct held_first_fault : memory::testing::raise_only {
  int expected = 0;
  std::atomic<bool> holding{false};
  std::atomic<bool> all_waited{false};
  void read_fault(memory::segment s, memory::block_index b) override {
    if (b == 0) {
      holding = true;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (threads_waiting_on_faults() < expected && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      all_waited = threads_waiting_on_faults() >= expected;
    }
    raise_only::read_fault(s, b);
  }
};

// On the thread path, reports that queue while the fault thread is busy are read together;
// the first for block 1 wakes every thread waiting on it, so the others are not served.
TEST(FaultPath, ReportsOfThreadsAlreadyWokenAreNotServed) {
  if (memory::active_fault_path() != memory::fault_path::thread) GTEST_SKIP() << "thread path only";
  constexpr int readers = 4;
  held_first_fault proto;
  proto.expected = 1 + readers;
  auto s = memory::allocate(3 * page, {.block_size = page, .handler = &proto, .initial = tag::invalid});
  counter_delta d;
  std::thread first([&] { touch_read(s.address_of(0)); });
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&] {
      while (!proto.holding) std::this_thread::yield();
      touch_read(s.address_of(1));
    });
  }
  first.join();
  for (auto& th : threads) th.join();
  // The fault thread serves reports in order: once this one is served, it is done with the
  // duplicates (their threads ran on as soon as block 1 was woken).
  touch_read(s.address_of(2));
  ASSERT_TRUE(proto.all_waited) << "the readers of block 1 never all waited on their faults";
  EXPECT_EQ(proto.reads.load(), 3);
  EXPECT_EQ(d("memory.faults.read_invalid"), 3u);
  EXPECT_EQ(d("memory.reports_not_served"), static_cast<std::uint64_t>(readers - 1));
  EXPECT_EQ(d("memory.mapped_on_touch"), 0u);
  memory::free(s);
}

TEST_F(AccessControl, ThreadsFaultingTogetherAreEachServed) {
  constexpr std::size_t blocks = 64;
  allocate(blocks);
  counter_delta d;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (std::size_t b = static_cast<std::size_t>(t); b < blocks; b += 4) touch_write(at(b, 8), static_cast<std::uint8_t>(b));
      for (std::size_t b = 0; b < blocks; ++b) touch_read(at(b, 8));
    });
  }
  for (auto& th : threads) th.join();
  for (std::size_t b = 0; b < blocks; ++b) EXPECT_EQ(static_cast<std::size_t>(*at(b, 8)), b);
  EXPECT_EQ(proto.writes.load(), static_cast<int>(blocks));
  EXPECT_EQ(d("memory.faults.write_invalid") + d("memory.faults.write_readonly"), blocks);
}

}  // namespace
