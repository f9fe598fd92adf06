// SPDX-License-Identifier: BSD-3-Clause
// The shared-memory packet ring on its own: order and content across wrap-arounds (packets
// copied in or written in place after a reservation), a full ring refusing a packet and
// asking to be told of room, and a producer and a consumer thread streaming packets of
// random sizes. And the job area that holds the rings: rings for this host's nodes only, and
// under a cluster launcher shared by name only with a file this user made for it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "transport/shm/job_area.hpp"
#include "transport/shm/ring.hpp"

using squall::shm::ring_consumer;
using squall::shm::ring_producer;

namespace {

struct ring_memory {
  explicit ring_memory(std::size_t bytes) : capacity(bytes) {
    base = mmap(nullptr, squall::shm::ring_stride(capacity), PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }
  ~ring_memory() { munmap(base, squall::shm::ring_stride(capacity)); }
  std::size_t capacity;
  void* base;
};

std::vector<std::byte> packet_for(std::uint64_t seq, std::size_t size) {
  std::vector<std::byte> p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<std::byte>((seq * 131 + i) & 0xff);
  return p;
}

TEST(Ring, FullRingRefusesAndAsksToBeWoken) {
  ring_memory m(1 << 12);
  ring_producer prod(m.base, m.capacity);
  ring_consumer cons(m.base, m.capacity);
  EXPECT_TRUE(cons.empty());
  const auto p = packet_for(1, 1000);
  int pushed = 0;
  while (prod.try_push(p)) ++pushed;
  EXPECT_EQ(pushed, 4);  // 4 x (8 + 1000) bytes fit in 4096 with the zeroed slot
  auto got = cons.peek();
  ASSERT_EQ(got.size(), 1000u);
  EXPECT_EQ(std::memcmp(got.data(), p.data(), p.size()), 0);
  EXPECT_TRUE(cons.release());    // the producer had asked to be told
  EXPECT_FALSE(prod.try_push(p));  // the next packet wraps and needs the space at the end too
  cons.peek();
  EXPECT_TRUE(cons.release());    // asked again
  EXPECT_TRUE(prod.try_push(p));
  cons.peek();
  EXPECT_FALSE(cons.release());   // nobody waiting now
}

TEST(Ring, OrderAndContentAcrossWrapArounds) {
  ring_memory m(1 << 13);
  ring_producer prod(m.base, m.capacity);
  ring_consumer cons(m.base, m.capacity);
  std::mt19937 rng(7);
  std::vector<std::size_t> sizes;  // by sequence number
  std::uint64_t received = 0;
  for (int step = 0; step < 40000; ++step) {
    const std::size_t size = 1 + rng() % (prod.max_packet() - 8);
    const std::uint64_t seq = sizes.size();
    const auto part1 = packet_for(seq, size / 2), part2 = packet_for(seq + 1000, size - size / 2);
    if (rng() % 2 == 0) {
      // Half the packets in one call, the others written in place after a reservation.
      if (rng() % 2 == 0) {
        if (prod.try_push(part1, part2)) sizes.push_back(size);
      } else if (std::byte* out = prod.try_reserve(size)) {
        if (!part1.empty()) std::memcpy(out, part1.data(), part1.size());  // (data() of an empty vector is null)
        std::memcpy(out + part1.size(), part2.data(), part2.size());
        prod.commit();
        sizes.push_back(size);
      }
    }
    while (rng() % 3 != 0) {
      auto got = cons.peek();
      if (got.empty()) break;
      ASSERT_LT(received, sizes.size());
      const std::size_t n = sizes[received];
      ASSERT_EQ(got.size(), n);
      const auto head = packet_for(received, n / 2), body = packet_for(received + 1000, n - n / 2);
      if (!head.empty()) {
        ASSERT_EQ(std::memcmp(got.data(), head.data(), head.size()), 0);
      }
      ASSERT_EQ(std::memcmp(got.data() + head.size(), body.data(), body.size()), 0);
      ++received;
      cons.release();
    }
  }
  EXPECT_GT(received, 5000u);  // many laps of the 8 KiB ring
}

TEST(Ring, ProducerAndConsumerThreads) {
  ring_memory m(1 << 16);
  ring_producer prod(m.base, m.capacity);
  ring_consumer cons(m.base, m.capacity);
  constexpr std::uint64_t count = 200000;
  std::thread producer([&] {
    std::mt19937 rng(11);
    for (std::uint64_t seq = 0; seq < count;) {
      auto p = packet_for(seq, 8 + rng() % 700);
      std::memcpy(p.data(), &seq, sizeof seq);
      while (!prod.try_push(p)) std::this_thread::yield();
      ++seq;
    }
  });
  std::uint64_t expected = 0, bad = 0;
  while (expected < count) {
    auto got = cons.peek();
    if (got.empty()) {
      std::this_thread::yield();
      continue;
    }
    std::uint64_t seq;
    std::memcpy(&seq, got.data(), sizeof seq);
    const auto want = packet_for(seq, got.size());
    if (seq != expected || std::memcmp(got.data() + 8, want.data() + 8, got.size() - 8) != 0) ++bad;
    ++expected;
    cons.release();
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_TRUE(cons.empty());
}

}  // namespace

namespace {

// A job of 6 nodes of which this host runs nodes 2 and 3: control lines for all six, and
// the 4 rings among 2 and 3 - not 36 - and their mailbox lines.
TEST(JobArea, HoldsRingsForThisHostsNodesOnly) {
  using squall::shm::job_area;
  constexpr std::size_t ring_bytes = 1 << 16;
  const std::vector<bool> here{false, false, true, true, false, false};
  int fd = -1;
  const job_area job = job_area::create(6, ring_bytes, &fd, here);
  ::close(fd);
  EXPECT_EQ(job.nodes(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(job.on_this_host(i), here[i]) << i;
  EXPECT_EQ(job_area::bytes_for(6, 2, ring_bytes) - job_area::bytes_for(6, 0, ring_bytes),
            4 * (squall::shm::ring_stride(ring_bytes) + sizeof(squall::shm::pair_line)));
  // The four rings are distinct and inside the area; a ring to another host's node is refused.
  const auto* r22 = static_cast<const char*>(job.ring(2, 2));
  EXPECT_EQ(static_cast<const char*>(job.ring(3, 3)) - r22, 3 * static_cast<std::ptrdiff_t>(squall::shm::ring_stride(ring_bytes)));
  EXPECT_NE(job.ring(2, 3), job.ring(3, 2));
  EXPECT_DEATH(job.ring(2, 4), "no shared-memory ring from node 2 to node 4: they are on different hosts");
  // One mailbox line per pair, the same from both ends, after the rings.
  EXPECT_EQ(job.mailbox_line(2, 3), job.mailbox_line(3, 2));
  EXPECT_NE(job.mailbox_line(2, 3), job.mailbox_line(2, 2));
  EXPECT_GT(reinterpret_cast<const char*>(job.mailbox_line(2, 2)), static_cast<const char*>(job.ring(3, 3)));
  EXPECT_DEATH(job.mailbox_line(3, 5), "no shared-memory mailbox between nodes 3 and 5");
}

// A name taken already is refused, whoever took it; so are a file of another user or open
// to others, and a link (another user could point it at a file of ours).
TEST(JobArea, NamedAreaMadeBySomeoneElseIsRefused) {
  using squall::shm::job_area;
  const std::string name = "/squall-test-" + std::to_string(::getpid());
  const int fd = job_area::create_named(name);
  EXPECT_DEATH(job_area::create_named(name), "cannot create the job's shared memory " + name + ": File exists");
  ::close(job_area::open_named(name));  // ours, 0600: fine
  ASSERT_EQ(::fchmod(fd, 0644), 0);
  EXPECT_DEATH(job_area::open_named(name), "belongs to uid [0-9]+ with mode 644, not to this user .* alone");
  ASSERT_EQ(::fchmod(fd, 0600), 0);
  if (::geteuid() == 0) {  // root can give it away
    ASSERT_EQ(::fchown(fd, 65534, 65534), 0);
    EXPECT_DEATH(job_area::open_named(name), "belongs to uid 65534 with mode 600, not to this user \\(uid 0\\)");
  }
  ::close(fd);
  const std::string link = name + "-link";
  ASSERT_EQ(::symlink(("/dev/shm" + name).c_str(), ("/dev/shm" + link).c_str()), 0);
  EXPECT_DEATH(job_area::open_named(link), "cannot open the job's shared memory " + link);
  EXPECT_DEATH(job_area::create_named(link), "cannot create the job's shared memory " + link);
  ::unlink(("/dev/shm" + link).c_str());
  ::shm_unlink(name.c_str());
}

}  // namespace
