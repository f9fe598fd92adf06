// SPDX-License-Identifier: BSD-3-Clause
// System calls and libc calls on shared memory work whatever the tags: the tags are raised
// through the protocol first, as a program access would, and an EFAULT is retried.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <squall/squall.hpp>
#include <squall/memory.hpp>

#include "test_protocols.hpp"

namespace {

using namespace squall;
using memory::testing::page;
using memory::tag;
using memory::testing::counter_delta;


class SharedIo : public ::testing::Test {
 protected:
  void SetUp() override {
    seg = memory::allocate(8 * page, {.handler = &proto, .initial = tag::invalid});
    ASSERT_EQ(::pipe(pipe_fds), 0);
    for (std::size_t i = 0; i < page; ++i) pattern[i] = static_cast<char>('a' + i % 26);
  }
  void TearDown() override {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    memory::free(seg);
  }
  char* at(memory::block_index b) { return reinterpret_cast<char*>(seg.address_of(b)); }
  // Puts the pattern in a block through the protocol view, leaving its tag.
  void fill(memory::block_index b) {
    seg.install(b, std::as_bytes(std::span(pattern, page)), seg.tag_of(b));
  }
  bool holds_pattern(memory::block_index b) {
    return std::memcmp(seg.protocol_view(b).data(), pattern, page) == 0;
  }
  std::FILE* temp_file_with_pattern(int copies) {
    std::FILE* f = std::tmpfile();
    for (int i = 0; i < copies; ++i) std::fwrite(pattern, 1, page, f);
    std::fflush(f);
    std::rewind(f);
    return f;
  }

  memory::testing::raise_only proto;
  memory::segment seg;
  int pipe_fds[2];
  char pattern[page];
};

TEST_F(SharedIo, ReadIntoInvalidAndReadOnlyBlocks) {
  seg.set_tag(1, tag::read_only);
  counter_delta d;
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  ASSERT_EQ(::read(pipe_fds[0], at(0), page), static_cast<ssize_t>(page));
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  ASSERT_EQ(::read(pipe_fds[0], at(1), page), static_cast<ssize_t>(page));
  EXPECT_TRUE(holds_pattern(0));
  EXPECT_TRUE(holds_pattern(1));
  EXPECT_EQ(d("memory.faults.write_invalid"), 1u);
  EXPECT_EQ(d("memory.faults.write_readonly"), 1u);
}

TEST_F(SharedIo, PreadAndFreadIntoInvalidBlocks) {
  std::FILE* f = temp_file_with_pattern(3);
  counter_delta d;
  ASSERT_EQ(::pread(fileno(f), at(0), page, page), static_cast<ssize_t>(page));
  // Three blocks at once: larger than stdio's buffer, so glibc reads straight into them.
  ASSERT_EQ(std::fread(at(2), page, 3, f), 3u);
  std::fclose(f);
  for (memory::block_index b : {0, 2, 3, 4}) EXPECT_TRUE(holds_pattern(b)) << b;
  EXPECT_EQ(d("memory.faults.write_invalid"), 4u);
}

TEST_F(SharedIo, RecvAndReadvIntoInvalidAndReadOnlyBlocks) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  seg.set_tag(2, tag::read_only);
  counter_delta d;
  ASSERT_EQ(::send(sv[1], pattern, page, 0), static_cast<ssize_t>(page));
  ASSERT_EQ(::recv(sv[0], at(2), page, MSG_WAITALL), static_cast<ssize_t>(page));
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  iovec iov[2] = {{at(4), page}, {at(5), page}};
  ssize_t got = 0;
  while (got < static_cast<ssize_t>(2 * page)) {
    const ssize_t n = ::readv(pipe_fds[0], iov, 2);
    ASSERT_GT(n, 0);
    got += n;
    for (auto& v : iov) {  // skip what arrived
      const std::size_t used = std::min<std::size_t>(v.iov_len, static_cast<std::size_t>(n));
      v.iov_base = static_cast<char*>(v.iov_base) + used;
      v.iov_len -= used;
    }
  }
  ::close(sv[0]);
  ::close(sv[1]);
  for (memory::block_index b : {2, 4, 5}) EXPECT_TRUE(holds_pattern(b)) << b;
  EXPECT_EQ(d("memory.faults.write_readonly"), 1u);
  EXPECT_EQ(d("memory.faults.write_invalid"), 2u);
}

TEST_F(SharedIo, WriteAndFwriteFromInvalidBlocks) {
  for (memory::block_index b = 0; b < 4; ++b) fill(b);  // still Invalid
  counter_delta d;
  ASSERT_EQ(::write(pipe_fds[1], at(0), page), static_cast<ssize_t>(page));
  char back[page];
  ASSERT_EQ(::read(pipe_fds[0], back, page), static_cast<ssize_t>(page));
  EXPECT_EQ(std::memcmp(back, pattern, page), 0);
  std::FILE* f = std::tmpfile();
  ASSERT_EQ(std::fwrite(at(1), page, 3, f), 3u);
  std::fflush(f);
  std::vector<char> file(3 * page);
  ASSERT_EQ(::pread(fileno(f), file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
  std::fclose(f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::memcmp(file.data() + i * page, pattern, page), 0) << i;
  EXPECT_EQ(d("memory.faults.read_invalid"), 4u);
  EXPECT_EQ(d("memory.faults.write_invalid") + d("memory.faults.write_readonly"), 0u);
}

TEST_F(SharedIo, LibcMemcpyIntoAndOutOfInvalidBlocks) {
  fill(0);
  counter_delta d;
  char out[page];
  std::memcpy(out, at(0), page);
  std::memcpy(at(1), pattern, page);
  EXPECT_EQ(std::memcmp(out, pattern, page), 0);
  EXPECT_TRUE(holds_pattern(1));
  EXPECT_EQ(d("memory.faults.read_invalid"), 1u);
  EXPECT_EQ(d("memory.faults.write_invalid"), 1u);
}

// What the wrappers are for: the raw system call fails with EFAULT on the SIGBUS path (the
// kernel's access to an Invalid page does not reach a handler); on the thread path the
// handler thread serves the kernel's fault itself.
TEST_F(SharedIo, RawSystemCallReachesTheHandlerOnlyOnTheThreadPath) {
  counter_delta d;
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  const long n = ::syscall(SYS_read, pipe_fds[0], at(3), page);
  if (memory::active_fault_path() == memory::fault_path::sigbus) {
    EXPECT_EQ(n, -1);
    EXPECT_EQ(errno, EFAULT);
    EXPECT_EQ(d("memory.faults.write_invalid"), 0u);
  } else {
    EXPECT_EQ(n, static_cast<long>(page));
    EXPECT_TRUE(holds_pattern(3));
    EXPECT_EQ(d("memory.faults.write_invalid"), 1u);
  }
}

// A block whose tag allows the access but whose pages are unmapped (as after reclaim):
// the system call fails with EFAULT on the SIGBUS path, and is retried after mapping.
TEST_F(SharedIo, EfaultIsRetriedAfterMappingThePages) {
  seg.set_tag(6, tag::read_write);
  ASSERT_EQ(::madvise(at(6), page, MADV_DONTNEED), 0);
  counter_delta d;
  ASSERT_EQ(::write(pipe_fds[1], pattern, page), static_cast<ssize_t>(page));
  ASSERT_EQ(::read(pipe_fds[0], at(6), page), static_cast<ssize_t>(page));
  EXPECT_TRUE(holds_pattern(6));
  const bool sigbus = memory::active_fault_path() == memory::fault_path::sigbus;
  EXPECT_EQ(d("memory.syscall_retries"), sigbus ? 1u : 0u);
  EXPECT_EQ(proto.reads.load() + proto.writes.load(), 0);
}

}  // namespace
