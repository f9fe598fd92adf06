// SPDX-License-Identifier: BSD-3-Clause
// Active messages across nodes: ordering, request/reply, aggregation, bulk transfer,
// handler atomicity, and the counters that prove each. Runs under squallrun -n 4 and -n 8.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <squall/squall.hpp>

namespace am = squall::am;

namespace {

// ---- ordering: node s sends 0..k-1 to every node; each receiver checks the sequence.
std::vector<std::int64_t> next_expected;  // by source
std::int64_t out_of_order = 0, ordered_received = 0;

void on_sequence(am::token& t, std::int64_t i) {
  if (next_expected[t.source()] != i) ++out_of_order;
  next_expected[t.source()] = i + 1;
  ++ordered_received;
}

TEST(ActiveMessages, DeliveredInOrderPerPair) {
  const int n = squall::nodes();
  next_expected.assign(n, 0);
  out_of_order = ordered_received = 0;
  squall::barrier();  // every node's state is reset before anyone sends
  constexpr int k = 3000;
  for (int i = 0; i < k; ++i) {
    for (int d = 0; d < n; ++d) am::send<on_sequence>(d, std::int64_t{i});
  }
  squall::fence();
  EXPECT_EQ(out_of_order, 0);
  EXPECT_EQ(ordered_received, std::int64_t{k} * n);
  squall::barrier();
}

// ---- request/reply
int replies = 0;
void on_answer(am::token&, int value) { replies += value; }
void on_question(am::token& t, int value) { t.reply<on_answer>(value * 2); }
std::int64_t on_square(am::token& t, std::int64_t x) { return x * x + t.source(); }
void on_touch(am::token&) {}

TEST(ActiveMessages, RequestReply) {
  const int n = squall::nodes(), me = squall::node();
  replies = 0;
  squall::barrier();
  for (int d = 0; d < n; ++d) am::send<on_question>(d, d + 1);
  const auto all_answered = [&] { return replies == n * (n + 1); };  // sum of 2*(d+1)
  am::wait_until(all_answered);  // a named predicate, const, as well as a temporary
  for (int d = 0; d < n; ++d) EXPECT_EQ(am::call<on_square>(d, std::int64_t{d + 7}), (d + 7) * (d + 7) + me);
  am::call<on_touch>((me + 1) % n);  // a void call returns once the handler ran
  squall::barrier();
}

// ---- aggregation: every message exactly once, and packets = ceil(messages / factor)
std::vector<std::int64_t> seen;  // count per (source, index)
constexpr int agg_messages = 4096;

void on_counted(am::token& t, std::int32_t index) { ++seen[t.source() * agg_messages + index]; }

class Aggregation : public testing::TestWithParam<unsigned> {};

TEST_P(Aggregation, EveryMessageExactlyOnceAndPacketsCounted) {
  const int n = squall::nodes(), me = squall::node();
  const unsigned factor = GetParam();
  seen.assign(static_cast<std::size_t>(n) * agg_messages, 0);
  am::set_aggregation(factor);
  squall::barrier();
  const auto before = squall::stats::take();
  const int dest = (me + 1) % n;
  for (int i = 0; i < agg_messages; ++i) am::send<on_counted>(dest, std::int32_t{i});
  am::flush();
  const auto after_send = squall::stats::take();
  squall::fence();
  const int src = (me - 1 + n) % n;
  for (int s = 0; s < n; ++s) {
    for (int i = 0; i < agg_messages; ++i) {
      ASSERT_EQ(seen[s * agg_messages + i], s == src ? 1 : 0) << "source " << s << " index " << i;
    }
  }
  // Only this test's sends happened between the two snapshots.
  // The progress thread sends a packet left partly filled for a millisecond (a node
  // preempted mid-loop, with more nodes than cores); each such flush adds one packet.
  const auto packets = after_send.get("am.packets_sent") - before.get("am.packets_sent");
  const auto timed = after_send.get("progress.timed_flushes") - before.get("progress.timed_flushes");
  const std::uint64_t ideal = (agg_messages + factor - 1) / factor;
  EXPECT_GE(packets, ideal);
  EXPECT_LE(packets, ideal + timed);
  if (timed == 0) {
    EXPECT_EQ(packets, ideal);
  }
  const auto h = after_send.handler("{anonymous}::on_counted");
  EXPECT_EQ(h.sent - before.handler("{anonymous}::on_counted").sent, std::uint64_t{agg_messages});
  am::set_aggregation(1);
  squall::barrier();
}

// Factor 2: a packet of two 24-byte records fits the mailbox line (56 bytes), so whoever takes
// it from there must run both records, not just the first.
INSTANTIATE_TEST_SUITE_P(Factors, Aggregation, testing::Values(1u, 2u, 16u, 256u));

// ---- aggregated sends of the program's thread are staged without the node lock; a
// handler's send to the same node (the progress thread's, while the program computes) must
// still come after every staged message the program had sent before it.
struct staged_order {
  std::vector<std::int64_t> main_seen;  // by source: the last program message received
  std::int64_t bad = 0, echoes = 0;
  std::atomic<std::int64_t> last_main{0};  // this node's last program message sent
};
staged_order staged;

void on_main_message(am::token& t, std::int64_t i) {
  if (i != staged.main_seen[t.source()] + 1) ++staged.bad;
  staged.main_seen[t.source()] = i;
}
void on_echo(am::token& t, std::int64_t m) {
  if (m > staged.main_seen[t.source()]) ++staged.bad;  // overtook a program message
  ++staged.echoes;
}
void on_trigger(am::token&) {
  const int n = squall::nodes();
  am::send<on_echo>((squall::node() + 1) % n, staged.last_main.load(std::memory_order_acquire));
}

TEST(Aggregation, StagedSendsStayAheadOfHandlerSendsThatFollowThem) {
  const int n = squall::nodes(), me = squall::node();
  staged.main_seen.assign(n, 0);
  staged.bad = staged.echoes = 0;
  staged.last_main = 0;
  am::set_aggregation(64);
  squall::barrier();
  const int dest = (me + 1) % n;
  constexpr std::int64_t k = 40000, every = 16;
  for (std::int64_t i = 1; i <= k; ++i) {
    am::send<on_main_message>(dest, i);
    staged.last_main.store(i, std::memory_order_release);
    if (i % every == 0) am::send<on_trigger>(dest);
    // Some computing between sends, so that the progress thread answers triggers while
    // messages wait in the stage.
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(200);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  squall::fence();
  EXPECT_EQ(staged.bad, 0);
  EXPECT_EQ(staged.main_seen[(me - 1 + n) % n], k);
  EXPECT_EQ(staged.echoes, k / every);
  am::set_aggregation(1);
  squall::barrier();
}

// ---- payloads of every size, sent and written in place, keep their order: a large one
// leaves at once as a packet of its own, after the partly filled packet before it, and
// waits in the queue when the ring is full (the receiver does not poll until the fence).
struct sized_stream {
  std::vector<std::int64_t> next;  // by source
  std::int64_t bad = 0, received = 0;
};
sized_stream sized;

std::size_t size_of_message(std::int64_t i) {
  static const std::size_t sizes[] = {0, 8, 100, 2047, 2048, 2049, 9000, 15000};
  return sizes[i % std::size(sizes)];
}
std::byte byte_of(std::int64_t i, std::size_t at) { return static_cast<std::byte>((i * 31 + at * 7) & 0xff); }

void on_sized(am::token& t, std::int64_t i, am::payload data) {
  bool ok = sized.next[t.source()] == i && data.size() == std::min(size_of_message(i), am::max_payload());
  for (std::size_t k = 0; ok && k < data.size(); ++k) ok = data[k] == byte_of(i, k);
  sized.bad += !ok;
  sized.next[t.source()] = i + 1;
  ++sized.received;
}

TEST(ActiveMessages, PayloadsOfEverySizeInOrderSentOrWrittenInPlace) {
  const int n = squall::nodes(), me = squall::node();
  sized.next.assign(n, 0);
  sized.bad = sized.received = 0;
  am::set_aggregation(16);
  squall::barrier();
  constexpr std::int64_t k = 400;  // about 2 MB to each node: rings fill
  std::vector<std::byte> buf(am::max_payload());
  for (std::int64_t i = 0; i < k; ++i) {
    const std::size_t size = std::min(size_of_message(i), am::max_payload());
    for (int d = 0; d < n; ++d) {
      const int to = (me + d) % n;
      if ((i / 3) % 2 == 0) {
        for (std::size_t b = 0; b < size; ++b) buf[b] = byte_of(i, b);
        am::send<on_sized>(to, i, am::payload(buf.data(), size));
      } else {
        am::send_written<on_sized>(
            to, size, [&](std::byte* out) {
              for (std::size_t b = 0; b < size; ++b) out[b] = byte_of(i, b);
            },
            i);
      }
    }
  }
  squall::fence();
  EXPECT_EQ(sized.bad, 0);
  EXPECT_EQ(sized.received, k * n);
  am::set_aggregation(1);
  squall::barrier();
}

// ---- bulk transfer
std::uint64_t bulk_checksum = 0, bulk_bytes = 0;
int bulk_count = 0;

void on_bulk(am::token& t, std::uint32_t tag, am::payload data) {
  std::uint64_t sum = tag + static_cast<std::uint64_t>(t.source());
  for (std::byte b : data) sum = sum * 31 + static_cast<std::uint8_t>(b);
  bulk_checksum += sum;
  bulk_bytes += data.size();
  ++bulk_count;
}

std::uint64_t expected_checksum(const std::vector<std::uint8_t>& v, std::uint32_t tag, int src) {
  std::uint64_t sum = tag + static_cast<std::uint64_t>(src);
  for (auto b : v) sum = sum * 31 + b;
  return sum;
}

std::vector<std::uint8_t> pattern(std::size_t size, int seed) {
  std::vector<std::uint8_t> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = static_cast<std::uint8_t>((i * 7 + seed * 13) ^ (i >> 9));
  return v;
}

TEST(BulkTransfer, AnySizeWithLocalAndRemoteCompletion) {
  const int n = squall::nodes(), me = squall::node();
  bulk_checksum = bulk_bytes = 0;
  bulk_count = 0;
  squall::barrier();
  const std::size_t sizes[] = {0, 1, am::max_payload() + 1, 3 * 1024 * 1024 + 5};
  const int dest = (me + 1) % n, src = (me - 1 + n) % n;
  std::uint64_t expect = 0, expect_bytes = 0;
  for (std::uint32_t k = 0; k < std::size(sizes); ++k) {
    auto mine = pattern(sizes[k], me);
    auto h = am::bulk_send<on_bulk>(dest, k, am::as_payload(mine.data(), mine.size()));
    h.wait_local();
    EXPECT_TRUE(h.local_done());
    h.wait_remote();
    EXPECT_TRUE(h.remote_done());
    expect += expected_checksum(pattern(sizes[k], src), k, src);
    expect_bytes += sizes[k];
  }
  squall::fence();
  EXPECT_EQ(bulk_count, static_cast<int>(std::size(sizes)));
  EXPECT_EQ(bulk_bytes, expect_bytes);
  EXPECT_EQ(bulk_checksum, expect);
  squall::barrier();
}

// Over UCX, a large transfer moves by rendezvous a socket buffer at a time, and only while a
// thread of each side progresses the worker: a wait keeps polling while its transport has such
// data on the move (transport::moving_data) instead of sleeping and leaving the transfer to the
// I/O thread's wake-ups (before, about 23 at the receiver per 4 MiB over UCX's TCP). At the
// sender the data is on the move from bulk_send until UCX has read the buffer, which is the
// transfer's local completion, so wait_local never sleeps: wait.sleeps counts the waits that
// went to sleep (on node 0 only this thread waits), and a wait about to sleep first looks again
// at what it waits for, which it finds done once the transport says nothing is moving. That
// holds however loaded the machine. Without the rule, a wait_local (0.7-4 ms here) sleeps
// whenever its spin (50 us; 5 us with more nodes than processors) runs out while nothing else
// happens: in 3-10 of these 128 transfers on 2 nodes, 13-32 on 4, 53-95 on 4 beside two busy
// loops. (A bound on the receiver's I/O thread wake-ups, which depend on whether it still spun
// when each transfer began, failed under load.)
int big_arrivals = 0;
void on_big(am::token&, am::payload p) {
  if (!p.empty() && p.front() == std::byte{7} && p.back() == std::byte{7}) ++big_arrivals;
}

TEST(BulkTransfer, UcxRendezvousMovesWhileTheWaitersPoll) {
  const char* transport = std::getenv("SQUALL_TRANSPORT");
  if (transport == nullptr || std::string(transport) != "ucx") GTEST_SKIP() << "SQUALL_TRANSPORT is not ucx";
  if (squall::nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  constexpr int transfers = 128;
  const int me = squall::node();
  big_arrivals = 0;
  squall::barrier();
  if (me == 0) {
    std::vector<std::byte> big(4 << 20, std::byte{7});
    std::uint64_t slept = 0;
    for (int i = 0; i < transfers; ++i) {
      auto h = am::bulk_send<on_big>(1, am::payload(big));
      const std::uint64_t before = squall::stats::take().get("wait.sleeps");
      h.wait_local();
      slept += squall::stats::take().get("wait.sleeps") - before;
      h.wait_remote();
    }
    EXPECT_EQ(slept, 0u) << "sleeps while the rendezvous moved the data, in " << transfers << " transfers";
  } else if (me == 1) {
    am::wait_until([] { return big_arrivals == transfers; });
  }
  EXPECT_EQ(big_arrivals, me == 1 ? transfers : 0);
  squall::barrier();
}

// ---- quiet sends (am::quiet_sends): every message is handled exactly once, in the
// receiver's own wait, though none woke a receiver that computed.
std::vector<std::int64_t> quiet_seen;  // by source: messages handled, in order
std::int64_t quiet_out_of_order = 0;
void on_quiet(am::token& t, std::int64_t i) {
  if (quiet_seen[t.source()] != i) ++quiet_out_of_order;
  quiet_seen[t.source()] = i + 1;
}

TEST(ActiveMessages, QuietSendsAreHandledExactlyOnceByTheReceiversWait) {
  const int n = squall::nodes();
  quiet_seen.assign(n, 0);
  quiet_out_of_order = 0;
  squall::barrier();
  constexpr int rounds = 40, per_round = 50;
  for (int r = 0; r < rounds; ++r) {
    {
      const am::quiet_sends quiet;
      for (int i = 0; i < per_round; ++i) {
        for (int d = 0; d < n; ++d) am::send<on_quiet>(d, std::int64_t{r * per_round + i});
      }
      am::flush();
    }
    // Compute without polling, as a CHAOS program between exchanges; then wait for every
    // peer's messages of this round, as its next exchange does.
    volatile double x = 0;
    for (int j = 0; j < 20000 * (1 + squall::node() % 2); ++j) x = x + j * 0.5;
    const std::int64_t want = std::int64_t{r + 1} * per_round;
    am::wait_until([&] {
      for (int s = 0; s < n; ++s) {
        if (quiet_seen[s] < want) return false;
      }
      return true;
    });
  }
  EXPECT_EQ(quiet_out_of_order, 0);
  for (int s = 0; s < n; ++s) EXPECT_EQ(quiet_seen[s], std::int64_t{rounds} * per_round) << "from node " << s;
  squall::barrier();
}

// ---- handlers are atomic: unsynchronised read-modify-writes from handlers run by the
// progress thread and by the waiting compute thread never lose an update.
std::uint64_t unguarded = 0;
void on_increment(am::token&, std::uint32_t times) {
  for (std::uint32_t i = 0; i < times; ++i) {
    const std::uint64_t v = unguarded;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    unguarded = v + 1;
  }
}

TEST(ActiveMessages, HandlersRunOneAtATime) {
  const int n = squall::nodes();
  unguarded = 0;
  squall::barrier();
  constexpr int rounds = 2000;
  for (int i = 0; i < rounds; ++i) {
    for (int d = 0; d < n; ++d) am::send<on_increment>(d, std::uint32_t{10});
    if (i % 100 == 0) {  // compute without polling: the progress thread serves meanwhile
      volatile double x = 0;
      for (int j = 0; j < 20000; ++j) x = x + j * 0.5;
    }
  }
  squall::fence();
  EXPECT_EQ(unguarded, std::uint64_t{rounds} * 10 * n);
  squall::barrier();
}

// ---- the progress thread serves requests while the program computes
std::atomic<int> served{0};
int on_serve(am::token&, int x) {
  served.fetch_add(1);
  return x + 1;
}

TEST(ActiveMessages, ProgressWhileComputing) {
  const char* thread = std::getenv("SQUALL_PROGRESS_THREAD");
  if (thread != nullptr && std::string(thread) == "0") GTEST_SKIP() << "no progress thread (SQUALL_PROGRESS_THREAD=0)";
  const int n = squall::nodes(), me = squall::node();
  served.store(0);
  squall::barrier();
  if (me == 0) {
    for (int d = 1; d < n; ++d) EXPECT_EQ(am::call<on_serve>(d, d), d + 1);
  } else {
    // Busy without entering the library until the request was served: only the progress
    // thread can serve it (the closing barrier must not be what answers it).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (served.load() == 0 && std::chrono::steady_clock::now() < give_up) {
    }
    EXPECT_EQ(served.load(), 1) << "not served while the program computed";
  }
  squall::barrier();
}

// Over the network (--transport tcp or ucx), a request to a computing node is handled by the
// network's I/O thread as soon as it took it in, not after waking the progress thread.
TEST(ActiveMessages, NetworkArrivalsAreHandledByTheIoThreadWhileComputing) {
  const char* transport = std::getenv("SQUALL_TRANSPORT");
  if (transport == nullptr || (std::string(transport) != "tcp" && std::string(transport) != "ucx")) {
    GTEST_SKIP() << "no peer over the network (SQUALL_TRANSPORT is not tcp or ucx)";
  }
  const int me = squall::node();
  if (squall::nodes() < 2) GTEST_SKIP() << "needs 2 nodes";
  served.store(0);
  squall::barrier();
  const std::uint64_t before = squall::stats::take().get("progress.handled_by_io_thread");
  // Several requests, each after a pause: any thread of node 1 that looks at the network may
  // take one in (a progress thread whose sleep timed out, on a loaded machine), but not all.
  constexpr int requests = 10;
  if (me == 0) {
    for (int i = 0; i < requests; ++i) {
      // Node 1 computes by then, and its progress thread has gone to sleep.
      const auto start = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(20)) {
      }
      EXPECT_EQ(am::call<on_serve>(1, i), i + 1);
    }
  } else if (me == 1) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (served.load() < requests && std::chrono::steady_clock::now() < give_up) {
    }
    EXPECT_EQ(served.load(), requests);
    EXPECT_GE(squall::stats::take().get("progress.handled_by_io_thread") - before, 1u);
  }
  squall::barrier();
}

// ---- deferred calls: run once, at or after their deadline, by the progress thread while
// the program computes without entering the library.
std::atomic<int> deferred_ran{0};
std::atomic<std::int64_t> deferred_ran_at{0};
void on_deferred(void* ctx) {
  deferred_ran_at.store(am::clock_ns());
  deferred_ran.fetch_add(*static_cast<int*>(ctx));
}

TEST(ActiveMessages, DeferredCallRunsOnceWhenDue) {
  static int one = 1;
  deferred_ran.store(0);
  const std::int64_t deadline = am::clock_ns() + 20'000'000;  // 20 ms
  am::call_at(deadline, on_deferred, &one);
  // Busy without entering the library: only the progress thread can run it.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (deferred_ran.load() == 0 && std::chrono::steady_clock::now() < give_up) {
  }
  EXPECT_EQ(deferred_ran.load(), 1);
  EXPECT_GE(deferred_ran_at.load(), deadline);
  am::poll();
  EXPECT_EQ(deferred_ran.load(), 1);  // once
  bool ran_locked = false;
  am::run_locked([](void* flag) { *static_cast<bool*>(flag) = true; }, &ran_locked);
  EXPECT_TRUE(ran_locked);
  squall::barrier();
}

// ---- run_unlocked_in_handler: from the handler of a small packet that came through the
// mailbox lane, on a program thread in a wait, the function runs with the node lock let go
// (another thread of the node takes it meanwhile), outside a handler and out of the wait (the
// node is served meanwhile); anywhere else the call runs nothing and says so.
std::atomic<int> unlocked_runs{0}, refused{0}, pings_handled{0}, pongs{0}, probes{0};
void on_probe(am::token&) { probes.fetch_add(1); }
void on_inside(am::token& t) { t.reply<on_probe>(); }  // node 0 answers "inside" with a probe
void on_unlocked_pong(am::token&) { pongs.fetch_add(1); }
std::vector<std::thread> lockers;  // joined by the test, after the handlers
void run_while_another_thread_locks(void*) {
  // Outside a handler now: a second call is refused.
  if (am::run_unlocked_in_handler([](void*) {}, nullptr)) ADD_FAILURE() << "ran nested";
  auto locked = std::make_shared<std::atomic<bool>>(false);
  lockers.emplace_back([locked] { am::run_locked([&locked] { *locked = true; }); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!*locked && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  EXPECT_TRUE(locked->load()) << "another thread could not take the node lock while the function ran";
  // Node 0 answers "inside" with a probe: the node is served while this function runs (by
  // its progress thread), as while its program computes.
  const int probes_before = probes.load();
  am::send<on_inside>(0);
  am::flush(0);
  while (probes.load() == probes_before && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  EXPECT_GT(probes.load(), probes_before) << "the node was not served while the function ran";
  unlocked_runs.fetch_add(1);
}
void on_unlocked_ping(am::token&, am::payload) {
  if (!am::run_unlocked_in_handler(run_while_another_thread_locks, nullptr)) refused.fetch_add(1);
  pings_handled.fetch_add(1);
}

TEST(ActiveMessages, RunUnlockedInHandlerOnlyForAMailboxPacketInAWait) {
  const int n = squall::nodes(), me = squall::node();
  EXPECT_FALSE(am::run_unlocked_in_handler([](void*) {}, nullptr)) << "outside a handler";
  unlocked_runs = 0;
  refused = 0;
  pings_handled = 0;
  pongs = 0;
  probes = 0;
  squall::barrier();
  const std::array<std::byte, 8> small{};
  const std::vector<std::byte> large(4096);
  constexpr int rounds = 20;
  if (me == 0 && n > 1) {
    for (int i = 0; i < rounds; ++i) {
      const bool big = i >= rounds / 2;  // a ring packet: refused
      am::send<on_unlocked_ping>(1, big ? am::payload(large.data(), large.size()) : am::payload(small.data(), small.size()));
      am::flush(1);
      am::wait_until([i] { return pongs.load() == i + 1; });
    }
  } else if (me == 1) {
    // Node 1's program thread answers each ping, as a program sends: through the mailbox lane
    // when it holds the lane's turn, which goes back to node 0 with it.
    for (int i = 0; i < rounds; ++i) {
      am::wait_until([i] { return pings_handled.load() == i + 1; });
      am::send<on_unlocked_pong>(0);
    }
    am::flush(0);
    for (auto& t : lockers) t.join();
    lockers.clear();
    EXPECT_EQ(unlocked_runs.load() + refused.load(), rounds);
    EXPECT_GE(refused.load(), rounds / 2) << "the large packets came through a ring";
    // Where the lane carries packets and the program thread is the one that polls (not the
    // progress thread, as it may be when nodes outnumber processors and waits sleep), the
    // small pings ran unlocked.
    const bool lane = squall::stats::take().counters["shm.mailbox_packets"] != 0;
    if (lane && static_cast<unsigned>(n) <= std::thread::hardware_concurrency()) {
      EXPECT_GT(unlocked_runs.load(), 0) << "no small packet ran unlocked";
    }
  }
  squall::barrier();
}

// ---- counters: sends and receives balance across the job
void on_noop(am::token&, std::uint64_t) {}

TEST(Counters, SentEqualsReceivedAcrossTheJob) {
  const int n = squall::nodes(), me = squall::node();
  squall::fence();
  const auto before = squall::stats::take().handler("{anonymous}::on_noop");
  squall::barrier();  // no node sends before every node took its snapshot
  for (int i = 0; i < 100 * (me + 1); ++i) am::send<on_noop>((me + i) % n, std::uint64_t(i));
  squall::fence();
  const auto after = squall::stats::take().handler("{anonymous}::on_noop");
  const std::uint64_t mine[2] = {after.sent - before.sent, after.received - before.received};
  std::uint64_t total[2];
  squall::allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(total));
  EXPECT_EQ(mine[0], std::uint64_t(100 * (me + 1)));
  EXPECT_EQ(total[0], std::uint64_t(100 * n * (n + 1) / 2));
  EXPECT_EQ(total[0], total[1]);
  EXPECT_EQ(after.sent_bytes - before.sent_bytes, mine[0] * sizeof(std::uint64_t));
}

// ---- handler names: one spelling of an unnamed namespace, whichever compiler named it
std::atomic<int> spelled_runs{0};
void on_spelled(am::token&, std::uint64_t) { spelled_runs.fetch_add(1); }
struct clang_spelling {  // how clang's __PRETTY_FUNCTION__ names a handler in an unnamed namespace
  static constexpr std::string_view name() { return "(anonymous namespace)::on_spelled"; }
};

TEST(HandlerNames, AnUnnamedNamespaceIsSpelledOneWay) {
  const int me = squall::node();
  const auto before = squall::stats::take().handler("{anonymous}::on_spelled");
  am::send_named<on_spelled, clang_spelling>(me, std::uint64_t{1});
  squall::fence();
  EXPECT_EQ(spelled_runs.load(), 1);
  const auto snap = squall::stats::take();
  EXPECT_EQ(snap.handler("{anonymous}::on_spelled").sent - before.sent, 1u);
  EXPECT_EQ(snap.handler("(anonymous namespace)::on_spelled").received - before.received, 1u);
  for (const auto& h : snap.handlers) EXPECT_EQ(h.name.find("(anonymous namespace)"), std::string::npos) << h.name;
}

}  // namespace
