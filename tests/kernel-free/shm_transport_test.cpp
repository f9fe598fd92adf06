// SPDX-License-Identifier: BSD-3-Clause
// The shared-memory transport between two nodes of one job area, both in this process: small
// packets take the pair's mailbox line only on the sender's turn (it took the other side's
// last packet there), and packets of the mailbox and the ring arrive in the order sent -
// scripted, in a random single-threaded mix, and between two threads. And the routed
// transport of a job spanning hosts offers the mailbox lane for this host's nodes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <squall/am.hpp>

#include "common/futex.hpp"
#include "stats/counters.hpp"
#include "transport/shm/job_area.hpp"
#include "transport/routed_transport.hpp"
#include "transport/shm/shm_transport.hpp"

using squall::shm::job_area;
using squall::shm::mailbox;
using squall::shm::shm_transport;

namespace {

// Steps of the random and two-thread tests: under ThreadSanitizer a quarter (the races it
// looks for show in the first thousands; the CI pass runs four tests on two cores, where the
// two-thread test's 200,000 took 110 s).
#if defined(SQUALL_TSAN)
constexpr int kSteps = 50000;
#else
constexpr int kSteps = 200000;
#endif

struct two_nodes {
  two_nodes() : job(make_job()), t0(job, 0), t1(job, 1) {}
  static job_area make_job() {
    int fd = -1;
    job_area j = job_area::create(2, 1 << 16, &fd);
    ::close(fd);
    // Both count as polling, so no send rings a futex doorbell.
    for (int i = 0; i < 2; ++i) j.control(i).awake.store(1);
    return j;
  }
  job_area job;
  shm_transport t0, t1;
};

std::uint64_t mailbox_packets() {
  static const int slot = squall::stats::counter_slot("shm.mailbox_packets");
  return squall::stats::counter_at(slot).load();
}

// A packet of `size` bytes (at least 8) starting with its sequence number.
std::vector<std::byte> packet(std::uint64_t seq, std::size_t size) {
  std::vector<std::byte> p(size);
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<std::byte>((seq * 31 + i) & 0xff);
  std::memcpy(p.data(), &seq, sizeof seq);
  return p;
}

void send(shm_transport& t, int dest, std::uint64_t seq, std::size_t size) {
  const auto p = packet(seq, size);
  ASSERT_TRUE(t.try_send(dest, std::span(p).first(8), std::span(p).subspan(8)));
}

// The next packet from src must be `seq` of `size` bytes; nothing when seq is UINT64_MAX.
void expect_next(shm_transport& t, int src, std::uint64_t seq, std::size_t size) {
  const auto got = t.peek(src);
  ASSERT_EQ(got.size(), size) << "expected packet " << seq;
  const auto want = packet(seq, size);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), size), 0) << "packet " << seq;
  t.release(src);
}

TEST(ShmTransport, MailboxIsWrittenInTurnsAReplyTakingTheRequestsPlace) {
  two_nodes n;
  const std::uint64_t before = mailbox_packets();
  send(n.t1, 0, 100, 16);  // the ring: node 0 holds the first turn
  EXPECT_EQ(mailbox_packets() - before, 0u);
  expect_next(n.t0, 1, 100, 16);
  send(n.t0, 1, 1, 24);    // the mailbox: node 0's turn
  send(n.t0, 1, 2, 16);    // the ring: node 1 has not taken packet 1
  send(n.t0, 1, 3, 500);   // the ring: too large for the mailbox anyway
  EXPECT_EQ(mailbox_packets() - before, 1u);
  EXPECT_TRUE(n.t1.any_incoming());
  expect_next(n.t1, 0, 1, 24);
  expect_next(n.t1, 0, 2, 16);
  expect_next(n.t1, 0, 3, 500);
  EXPECT_TRUE(n.t1.peek(0).empty());
  EXPECT_FALSE(n.t1.any_incoming());

  send(n.t1, 0, 10, mailbox::max_packet);  // node 1 took packet 1: its turn, a full line
  EXPECT_EQ(mailbox_packets() - before, 2u);
  expect_next(n.t0, 1, 10, mailbox::max_packet);
  send(n.t0, 1, 4, 24);    // node 0 took node 1's reply: its turn again
  send(n.t0, 1, 5, 900);   // a ring packet after it
  send(n.t0, 1, 6, 8);     // the ring again
  EXPECT_EQ(mailbox_packets() - before, 3u);
  expect_next(n.t1, 0, 4, 24);
  expect_next(n.t1, 0, 5, 900);
  expect_next(n.t1, 0, 6, 8);
  EXPECT_FALSE(n.t1.any_incoming());
  send(n.t1, 0, 11, mailbox::max_packet + 1);  // node 1's turn, but one byte too many: the ring
  EXPECT_EQ(mailbox_packets() - before, 3u);
  expect_next(n.t0, 1, 11, mailbox::max_packet + 1);
}

TEST(ShmTransport, RingPacketsSentBeforeAMailboxPacketArriveFirst) {
  two_nodes n;
  send(n.t0, 1, 1, 300);  // ring
  send(n.t0, 1, 2, 300);  // ring
  send(n.t0, 1, 3, 8);    // mailbox, but after two ring packets
  expect_next(n.t1, 0, 1, 300);
  expect_next(n.t1, 0, 2, 300);
  expect_next(n.t1, 0, 3, 8);
  EXPECT_TRUE(n.t1.peek(0).empty());
}

// Both nodes send at random (sizes on both sides of the mailbox's limit) and take packets at
// random; every packet arrives once, in order, intact, and the mailbox carries many of them.
TEST(ShmTransport, RandomMixOfBothDirectionsStaysInOrder) {
  two_nodes n;
  shm_transport* node[2] = {&n.t0, &n.t1};
  std::uint64_t sent[2] = {0, 0}, received[2] = {0, 0};  // by sending node
  std::vector<std::size_t> sizes[2];
  std::mt19937 rng(3);
  const std::uint64_t before = mailbox_packets();
  for (int step = 0; step < kSteps; ++step) {
    const int who = static_cast<int>(rng() % 2);
    if (rng() % 2 == 0) {
      const std::size_t size = rng() % 4 != 0 ? 8 + rng() % 52 : 8 + rng() % 2000;
      const auto p = packet(sent[who], size);
      if (node[who]->try_send(1 - who, std::span(p).first(8), std::span(p).subspan(8))) {
        sizes[who].push_back(size);
        ++sent[who];
      }
    } else {
      const int src = 1 - who;
      const auto got = node[who]->peek(src);
      if (got.empty()) continue;
      ASSERT_LT(received[src], sent[src]);
      const std::size_t size = sizes[src][received[src]];
      ASSERT_EQ(got.size(), size) << "from node " << src << ", packet " << received[src];
      const auto want = packet(received[src], size);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), size), 0);
      node[who]->release(src);
      ++received[src];
    }
  }
  EXPECT_GT(received[0] + received[1], static_cast<std::uint64_t>(kSteps / 4));
  EXPECT_GT(mailbox_packets() - before, static_cast<std::uint64_t>(kSteps / 400));
}

// Node 0 streams and sometimes asks for an answer; node 1 answers each question and
// sometimes sends on its own; two threads, so the mailbox is read while it is written.
TEST(ShmTransport, TwoThreadsKeepOrderInBothDirections) {
  two_nodes n;
  constexpr std::uint64_t count = kSteps;
  std::uint64_t bad[2] = {0, 0};
  // A thread that can neither send nor receive waits for the other to move: it spins a
  // little, then sleeps on `moves` until the other wakes it. It used to yield instead, and
  // beside other busy processes each yield gave the processor away for a time slice: the
  // test took 98 s on two cores shared with four busy loops (1.3 s alone, under ASan), and
  // 260 s in a loaded ASan pass.
  std::atomic<std::uint32_t> moves{0};
  const auto moved = [&] {
    moves.fetch_add(1, std::memory_order_seq_cst);
    moves.notify_one();
  };
  auto run = [&](int me, std::uint64_t seed) {
    shm_transport& t = me == 0 ? n.t0 : n.t1;
    const int peer = 1 - me;
    std::mt19937 rng(seed);
    std::uint64_t next_out = 0, next_in = 0;
    std::vector<std::byte> buf;
    int idle = 0;
    while (next_out < count || next_in < count) {
      const std::uint32_t seen = moves.load(std::memory_order_seq_cst);
      bool stuck = next_out == count;  // nothing left to send
      if (next_out < count && rng() % 2 == 0) {
        const std::size_t size = rng() % 3 != 0 ? 8 + rng() % 52 : 8 + rng() % 600;
        const auto p = packet(next_out, size);
        if (t.try_send(peer, std::span(p).first(8), std::span(p).subspan(8))) {
          ++next_out;
          moved();
        } else {
          stuck = true;  // the peer must take packets first
        }
      }
      const auto got = t.peek(peer);
      if (got.empty()) {
        if (stuck && ++idle > 64) {
          moves.wait(seen, std::memory_order_seq_cst);
          idle = 0;
        }
        continue;
      }
      idle = 0;
      const auto want = packet(next_in, got.size());
      if (std::memcmp(got.data(), want.data(), got.size()) != 0) ++bad[me];
      ++next_in;
      t.release(peer);
      moved();
    }
  };
  const std::uint64_t before = mailbox_packets();
  std::thread other(run, 1, 5);
  run(0, 9);
  other.join();
  EXPECT_EQ(bad[0], 0u);
  EXPECT_EQ(bad[1], 0u);
  EXPECT_GT(mailbox_packets() - before, 0u);
}

}  // namespace

// After a mailbox packet goes to a peer, a spinning waiter's look (worth_polling) skips that
// peer's mailbox for the set number of polls, and then sees the reply; the exact look
// (any_incoming), which decides whether a thread may sleep, sees it at once.
// A late waiter's nudge rings the doorbell of a peer only while that peer lingers (counts as
// polling without polling) and has not taken every packet of this node's.
TEST(ShmTransport, NudgeRingsOnlyALingeringPeerThatHasNotTakenOurPackets) {
  two_nodes n;
  auto& peer = n.job.control(1);
  auto doorbell = [&] { return peer.doorbell.load(); };
  std::uint32_t rung = doorbell();
  n.t0.nudge_peers();  // nothing sent
  peer.lingering.store(1);
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), rung) << "nothing of ours is waiting at node 1";

  send(n.t0, 1, 1, 500);  // the ring
  peer.lingering.store(0);
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), rung) << "node 1 polls (or was rung at the send)";
  peer.lingering.store(1);
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), ++rung) << "node 1 lingers and has not taken the ring packet";
  expect_next(n.t1, 0, 1, 500);
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), rung) << "node 1 took it";

  send(n.t0, 1, 2, 16);  // the mailbox: node 0 holds the first turn
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), ++rung) << "node 1 has not taken the mailbox packet";
  expect_next(n.t1, 0, 2, 16);
  n.t0.nudge_peers();
  EXPECT_EQ(doorbell(), rung) << "node 1 took it, though it has not answered";
}

// A thread asleep on node 1's doorbell as a sleeper of class `who` (as runtime/waiting.cpp's
// sleep_on_doorbell), until woken or 5 s have passed.
struct doorbell_sleeper {
  doorbell_sleeper(squall::shm::node_control& c, squall::shm::doorbell_sleeper who) : control(c) {
    const std::uint32_t seen = c.doorbell.load();
    if (who == squall::shm::program_waiter) c.waiters_asleep.fetch_add(1);
    c.sleepers.fetch_add(1);
    thread = std::thread([this, seen, who] {
      squall::futex_wait_class(&control.doorbell, seen, 5'000'000'000, who);
      woken.store(true);
    });
    if (who == squall::shm::program_waiter) program = true;
  }
  ~doorbell_sleeper() {
    control.doorbell.fetch_add(1);
    squall::futex_wake_all(&control.doorbell);
    thread.join();
    control.sleepers.fetch_sub(1);
    if (program) control.waiters_asleep.fetch_sub(1);
  }
  // Whether the thread has been woken, given `ms` milliseconds to wake.
  bool woken_within(int ms) const {
    for (int i = 0; i < ms && !woken.load(); ++i) ::usleep(1000);
    return woken.load();
  }
  squall::shm::node_control& control;
  std::thread thread;
  std::atomic<bool> woken{false};
  bool program = false;
};

TEST(ShmTransport, ARingWakesTheProgramsWaitersWhileAnySleepAndQuietSendsWakeNothingElse) {
  two_nodes n;
  auto& peer = n.job.control(1);
  peer.awake.store(0);  // nobody of node 1 polls: every send rings
  // Give the sleepers time to be in the kernel before each send: a ring that comes first
  // would only make their futex wait return at once, which the checks would take for a wake.
  auto settle = [] { ::usleep(20'000); };
  std::uint64_t seq = 0;
  // One packet from node 0 to node 1, quiet or not, taken at once.
  auto ring = [&](bool quiet) {
    {
      std::optional<squall::am::quiet_sends> scope;
      if (quiet) scope.emplace();
      send(n.t0, 1, seq, 500);
    }
    expect_next(n.t1, 0, seq++, 500);
  };
  {
    doorbell_sleeper progress(peer, squall::shm::progress_thread);
    settle();
    ring(true);
    EXPECT_FALSE(progress.woken_within(50)) << "a quiet send woke a progress thread";
    ring(false);
    EXPECT_TRUE(progress.woken_within(5000)) << "a send did not wake the progress thread";
  }
  for (const bool quiet : {true, false}) {
    doorbell_sleeper progress(peer, squall::shm::progress_thread);
    doorbell_sleeper waiter(peer, squall::shm::program_waiter);
    settle();
    ring(quiet);
    EXPECT_TRUE(waiter.woken_within(5000)) << "a send (quiet: " << quiet << ") did not wake a program thread asleep in a wait";
    EXPECT_FALSE(progress.woken_within(50)) << "the progress thread was woken beside a program thread in a wait";
  }
}

TEST(ShmTransport, NeitherNudgeNorPokeCallsOnAPeerForQuietPackets) {
  two_nodes n;
  auto& peer = n.job.control(1);
  peer.lingering.store(1);
  const std::uint32_t rung = peer.doorbell.load();
  {
    const squall::am::quiet_sends quiet;
    send(n.t0, 1, 1, 500);
  }
  n.t0.nudge_peers();
  EXPECT_EQ(peer.doorbell.load(), rung) << "a lingering peer was nudged for a quiet packet";
  send(n.t0, 1, 2, 500);
  n.t0.nudge_peers();
  EXPECT_EQ(peer.doorbell.load(), rung + 1) << "the packet after it is not quiet: node 1 is nudged";
  expect_next(n.t1, 0, 1, 500);
  expect_next(n.t1, 0, 2, 500);
}

TEST(Mailbox, QuietPollsDelayOnlyTheSpinningLook) {
  two_nodes n;
  n.t0.set_mailbox_tuning(3, 3, /*demote=*/true);  // the hint changes nothing delivered
  send(n.t0, 1, 1, 16);
  expect_next(n.t1, 0, 1, 16);
  send(n.t1, 0, 2, 16);  // the reply, in the mailbox
  EXPECT_TRUE(n.t0.any_incoming());
  for (int poll = 0; poll < 3; ++poll) EXPECT_FALSE(n.t0.worth_polling()) << "poll " << poll;
  EXPECT_TRUE(n.t0.worth_polling());
  EXPECT_TRUE(n.t0.any_incoming());
  expect_next(n.t0, 1, 2, 16);
  // A packet in the ring is never held back.
  n.t0.set_mailbox_tuning(1000, 1000, /*demote=*/false);
  send(n.t0, 1, 3, 16);
  expect_next(n.t1, 0, 3, 16);
  send(n.t1, 0, 4, 200);
  EXPECT_TRUE(n.t0.worth_polling());
  expect_next(n.t0, 1, 4, 200);
}

namespace {
// Node 0 sends into a bare mailbox pair and looks; node 1's reply comes `late` looks after
// node 0's quiet window, and the next look finds it. Returns the window this send had.
int round_trip(squall::shm::mailbox& m0, squall::shm::mailbox& m1, int late) {
  const std::byte b{1};
  const auto nothing = [](std::byte*) {};
  m0.send(std::span(&b, 1), 0, nothing, 0);
  const int window = m0.quiet_looks();
  int looks = 0;
  for (; looks < window + late; ++looks) EXPECT_FALSE(m0.worth_looking()) << "look " << looks + 1;
  m1.take(m1.incoming());
  m1.send(std::span(&b, 1), 0, nothing, 0);
  EXPECT_TRUE(m0.worth_looking()) << "look " << looks + 1;
  m0.take(m0.incoming());
  return window;
}
}  // namespace

TEST(Mailbox, QuietWindowFollowsHowLateTheReplyComes) {
  squall::shm::pair_line line{};
  squall::shm::mailbox m0, m1;
  m0.attach(&line, 0);
  m1.attach(&line, 1);
  m0.set_quiet_polls(2, 10);
  m1.set_quiet_polls(2, 10);
  const auto windows = [&](int rounds, int late) {
    std::vector<int> w;
    for (int i = 0; i < rounds; ++i) w.push_back(round_trip(m0, m1, late));
    return w;
  };
  EXPECT_EQ(windows(3, 0), (std::vector<int>{2, 2, 2})) << "replies at the first look: the window stays at least";
  EXPECT_EQ(windows(6, 6), (std::vector<int>{2, 4, 6, 8, 10, 10}))
      << "replies 6 looks after it: it opens two looks a send, up to most";
  EXPECT_EQ(windows(6, 0), (std::vector<int>{10, 8, 6, 5, 4, 3}))
      << "replies waiting at the first look: it closes by a quarter a send";
  EXPECT_EQ(windows(3, 1), (std::vector<int>{2, 3, 4})) << "never past the look before the reply, nor under least";
  // A reply taken without a spinning look (by a poll, or a thread that slept) teaches nothing.
  const std::byte b{1};
  const auto nothing = [](std::byte*) {};
  m0.send(std::span(&b, 1), 0, nothing, 0);
  m1.take(m1.incoming());
  m1.send(std::span(&b, 1), 0, nothing, 0);
  ASSERT_NE(m0.incoming(), 0u);
  m0.take(m0.incoming());
  const int before = m0.quiet_looks();
  m0.send(std::span(&b, 1), 0, nothing, 0);
  EXPECT_EQ(m0.quiet_looks(), before);
}

namespace {
// A transport to other hosts that carries nothing (only its mailbox lane is asked for).
class no_wire final : public squall::transport {
 public:
  bool try_send(int, std::span<const std::byte>, std::span<const std::byte>) override { return false; }
  bool try_send_written(int, std::span<const std::byte>, std::size_t, squall::body_writer) override { return false; }
  std::span<const std::byte> peek(int) override { return {}; }
  void release(int) override {}
  bool any_incoming() override { return false; }
  std::size_t max_packet() const override { return 1 << 16; }
};
}  // namespace

// In a job spanning hosts the routed transport offers the shared-memory mailbox lane to the
// nodes of this host, and none to the others (nor to a node of this host reached over TCP).
TEST(RoutedTransport, OffersTheMailboxLaneToNodesOnThisHostOnly) {
  two_nodes n;
  no_wire tcp;
  EXPECT_EQ(n.t0.mailbox_lane(1), &n.t0);
  EXPECT_EQ(tcp.mailbox_lane(1), nullptr);
  squall::routed_transport mixed(n.t0, tcp, {false, false, true});
  EXPECT_EQ(mixed.mailbox_lane(1), &n.t0);
  EXPECT_EQ(mixed.mailbox_lane(2), nullptr);
  squall::routed_transport all_tcp(n.t0, tcp, {false, true});
  EXPECT_EQ(all_tcp.mailbox_lane(1), nullptr);
}

// Two threads of a host (a node's watchdog, another node's transport) may end the job at the
// same moment: the job area keeps one of them whole - its node, its reason and its silence -
// never one's node with the other's words (a probe saw "node 0 was lost ()").
TEST(JobArea, OfTwoAbortsAtOnceOneIsKeptWhole) {
  constexpr int rounds = 2000;
  int torn = 0;
  for (int round = 0; round < rounds && torn == 0; ++round) {
    int fd = -1;
    job_area job = job_area::create(2, 1 << 12, &fd);
    ::close(fd);
    std::atomic<int> ready{0};
    auto end_job = [&](int node) {
      const std::string why = std::string(150, static_cast<char>('a' + node)) + " node " + std::to_string(node);
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      job.abort(node, why.c_str(), squall::shm::node_lost, static_cast<std::uint32_t>(1000 + node));
    };
    std::thread other(end_job, 1);
    end_job(0);
    other.join();
    const auto& h = job.header();
    const int lost = h.lost_node.load();
    const std::string kept = h.reason;
    const bool whole = (lost == 0 || lost == 1) &&
                       kept == std::string(150, static_cast<char>('a' + lost)) + " node " + std::to_string(lost) &&
                       h.silent_ms.load() == static_cast<std::uint32_t>(1000 + lost);
    if (!whole) {
      ++torn;
      ADD_FAILURE() << "round " << round << ": node " << lost << ", silent " << h.silent_ms.load() << ", reason '"
                    << kept << "'";
    }
  }
}
