// SPDX-License-Identifier: BSD-3-Clause
// arrays: libarrays' costs on 2 nodes, 16 elements per node, as the Charm++ arrays paper
// measured them (seeds/charm-migratable-object-arrays.txt, Tables 1 and 2), beside the
// substrate's bare active-message round trip in the same run.
//
//   am_rtt_us             round trip of a small active message, node 0 -> node 1 -> node 0 (the
//                         handler on node 1 replies; node 1's program waits in am::wait_until),
//                         as bench/kernel-free/am_pingpong measures it
//   am_program_rtt_us     the same round trip, but node 1's handler only counts the ping and
//                         node 1's program thread, waiting in am::wait_until for the count,
//                         sends the answer: the substrate's part of running every message on
//                         the program thread, as libarrays does (a reference, not a target)
//   am_sized_rtt_us       the same round trip as am_rtt_us with B bytes of payload each way
//                         (--sized-bytes B, default 36: a libarrays invoke of `ping`, a 24-byte
//                         short header, a 4-byte key, 8 bytes of arguments). Like am_rtt_us's
//                         8 bytes, it fits the substrate's mailbox lane (56 bytes with the
//                         record header; kernel-free/TRANSPORTS.md): the bare active message
//                         of libarrays' size on libarrays' path (a reference, not a target)
//   message_us            ROUND TRIP between two elements, element 0 on node 0 and element 16 on
//                         node 1: two one-way entry-method messages (each element's method sends
//                         the next one to the other), both programs inside run_until. Compared
//                         like with like against am_rtt_us: target message_us <= 2 x am_rtt_us
//                         (`message_vs_am_rtt` <= 2); beside it, against the bare message of
//                         the same size (`message_vs_am_sized_rtt`, a reference). `ping` is an
//                         ordinary entry method: as its node waits idle, it runs from the
//                         substrate's handler with the node lock let go (squall/arrays/
//                         scheduler.hpp)
//   message_expedited_us  the same round trip with an entry method declared expedited
//                         (squall/arrays/entry.hpp, Charm++'s [expedited]), which runs inside
//                         the handler, under the node lock (`message_expedited_vs_am_rtt`, a
//                         reference)
//   local_message_us      ONE message between two elements of node 0 (a ping-pong between
//                         elements 0 and 1, time / messages): the paper's Table 1 overhead of
//                         preparing, scheduling and receiving a message. Target <= 0.5 us
//   migration_us          one hop of a small element (4 x int64 of state) between nodes 0 and 1:
//                         its method calls migrate_me(other node) and sends itself the next hop;
//                         time from one hop's method on one node to the next hop's method on the
//                         other (packed, shipped, unpacked, home informed, the message forwarded
//                         after it). Target <= 20 us (Charm++: 55-161 us, Table 2)
//   bcast_reduce_us       node 0 broadcasts to all 32 elements, each contributes 1 to a sum whose
//                         result goes to every node (on_every_node); time until node 0 has it
//   forwarded_message_us  one-way: node 0 sends to element 17, which it last saw on node 1 but
//                         which has migrated to node 0 since (its migration is already queued on
//                         node 0, not yet run); node 1 forwards the message back to node 0. Time
//                         from the send to the method running on node 0
//
// Medians of T trials (--trials T, default 7); each trial runs every measurement once, in
// turn. --iters K (default 10000) is the number of round trips of message_us and am_rtt_us;
// the others scale from it (local: 10 K messages, migration: K / 5 hops, forwarded and
// bcast_reduce: K / 10). --only NAME[,NAME...] (am, message, local, migration, forwarded,
// bcast_reduce) runs those, for a profiler; the others are null. Nodes beyond 2 hold
// their 16 elements and take part in the broadcast and the reduction only. Exits 1 when a
// count is wrong (a reduction that is not 16 x nodes, a forwarded message that was not
// forwarded).
#include <algorithm>
#include <memory_resource>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <squall/arrays.hpp>
#include <squall/squall.hpp>

#include "common/report.hpp"

namespace {

namespace arrays = squall::arrays;
using Clock = std::chrono::steady_clock;

constexpr int per_node = 16;
// The elements the measurements use (block homes: 0..15 on node 0, 16..31 on node 1).
constexpr int ping_a = 0, ping_b = 16;      // message_us
constexpr int local_a = 0, local_b = 1;     // local_message_us
constexpr int traveller = 2;                // migration_us (home node 0)
constexpr int stale = 17;                   // forwarded_message_us (home node 1)

// What this node's entry methods have seen (the program thread's only: entry methods run on it).
// Ping-pongs and migration chains count down: node 0 runs the messages whose `left` is even
// and the last one (0), node 1 the odd ones down to 1.
std::int32_t lowest_left = 0;
std::uint64_t pokes = 0;  // forwarded_message_us: deliveries to `stale`
std::uint64_t reductions = 0;
std::int64_t reduced_value = 0;

void on_reduced(const std::int64_t& v) {
  reduced_value = v;
  ++reductions;
}

struct Elem : arrays::element<arrays::index1d> {
  std::array<std::int64_t, 4> state{};  // a small element

  // A ping-pong with `partner`: `left` messages still to go after this one. ping is an
  // ordinary entry method, ping_expedited is declared expedited (below).
  void ping(std::int32_t partner, std::int32_t left);
  void ping_expedited(std::int32_t partner, std::int32_t left);
  // A migration chain between nodes 0 and 1: move, and run the next hop there.
  void hop(std::int32_t left);
  void go(std::int32_t to) { migrate_me(to); }
  void poke() {
    ++state[2];
    ++pokes;
  }
  void step() { contribute(std::int64_t{1}, arrays::sum<std::int64_t>(), arrays::on_every_node<&on_reduced>()); }

  template <class A>
  void serialize(A& ar) {
    ar(state);
  }
};

}  // namespace

template <>
inline constexpr bool squall::arrays::expedited<&Elem::ping_expedited> = true;

namespace {

const arrays::array<Elem>* the_array = nullptr;

template <auto Ping>
void pass_on(Elem& e, std::int32_t partner, std::int32_t left) {
  ++e.state[0];
  lowest_left = left;
  if (left == 0) return;
  (*the_array)[partner].call<Ping>(e.this_index()[0], left - 1);
}
void Elem::ping(std::int32_t partner, std::int32_t left) { pass_on<&Elem::ping>(*this, partner, left); }
void Elem::ping_expedited(std::int32_t partner, std::int32_t left) {
  pass_on<&Elem::ping_expedited>(*this, partner, left);
}

void Elem::hop(std::int32_t left) {
  ++state[1];
  lowest_left = left;
  if (left == 0) return;
  migrate_me(squall::node() == 0 ? 1 : 0);
  (*the_array)[this_index()].call<&Elem::hop>(left - 1);
}

// Migration, packed against in place (array::create_in_place), for a small element and
// for one whose heap holds `big_doubles` doubles: the same hop chain as Elem::hop.
constexpr std::size_t big_doubles = 512;  // 4 KiB of heap data
template <bool Big, bool InPlace>
struct Traveller : arrays::element<arrays::index1d> {
  std::array<std::int64_t, 4> state{};
  std::pmr::vector<double> data{&heap()};
  Traveller() {
    if (Big) data.assign(big_doubles, 1.5);
  }
  void hop(std::int32_t left);
  template <class A>
  void serialize(A& ar) {
    ar(state, data);
  }
};
template <bool Big, bool InPlace>
const arrays::array<Traveller<Big, InPlace>, arrays::index1d>* travellers = nullptr;
template <bool Big, bool InPlace>
void Traveller<Big, InPlace>::hop(std::int32_t left) {
  ++state[1];
  lowest_left = left;
  if (left == 0) return;
  migrate_me(squall::node() == 0 ? 1 : 0);
  (*travellers<Big, InPlace>)[this_index()].template call<&Traveller::hop>(left - 1);
}

// The bare active message, as bench/kernel-free/am_pingpong.
std::atomic<std::uint64_t> am_pongs{0};
std::atomic<bool> am_stop{false};
std::atomic<std::uint64_t> moved_flags{0};  // forwarded_message_us: node 1 says "it is on its way"

void on_am_pong(squall::am::token&, std::uint64_t) { am_pongs.fetch_add(1); }
void on_am_ping(squall::am::token& t, std::uint64_t i) { t.reply<on_am_pong>(i); }
void on_am_stop(squall::am::token&) { am_stop = true; }
void on_moved(squall::am::token&) { moved_flags.fetch_add(1); }
// am_sized_rtt_us: ping and pong carry a libarrays invoke's bytes as payload.
std::size_t sized_bytes = 36;
void on_am_sized_pong(squall::am::token&, squall::am::payload) { am_pongs.fetch_add(1); }
void on_am_sized_ping(squall::am::token& t, squall::am::payload p) { t.reply<on_am_sized_pong>(p); }
// am_program_rtt_us: the handler only counts; the program thread answers.
std::atomic<std::uint64_t> am_pings{0};
void on_am_program_ping(squall::am::token&, std::uint64_t) { am_pings.fetch_add(1); }

// A bare active-message round trip: node 0 sends with send_ping(i) and waits for node 1's
// handler to reply; node 1 waits in am::wait_until (polling) until told to stop.
template <class SendPing>
double time_handler_rtt(int me, int iterations, SendPing&& send_ping) {
  am_pongs = 0;
  am_stop = false;
  squall::barrier();
  const auto t0 = Clock::now();
  if (me == 0) {
    for (int i = 0; i < iterations; ++i) {
      send_ping(i);
      squall::am::wait_until([i] { return am_pongs.load() == static_cast<std::uint64_t>(i) + 1; });
    }
    squall::am::send<on_am_stop>(1);
    squall::am::flush(1);
  } else if (me == 1) {
    squall::am::wait_until([] { return am_stop.load(); });
  }
  const double us = squall::bench::seconds_since(t0) * 1e6 / iterations;
  squall::barrier();
  return us;
}

double time_am_rtt(int me, int iterations) {
  return time_handler_rtt(me, iterations, [](int i) { squall::am::send<on_am_ping>(1, static_cast<std::uint64_t>(i)); });
}

double time_am_sized_rtt(int me, int iterations) {
  std::vector<std::byte> bytes(sized_bytes);
  return time_handler_rtt(me, iterations, [&bytes](int) {
    squall::am::send<on_am_sized_ping>(1, squall::am::payload(bytes.data(), bytes.size()));
  });
}

// The same round trip with node 1's answer sent by its program thread, which sees the ping
// through a counter its handler raised, as libarrays runs entry methods: what the substrate
// itself costs a design that leaves the wait for every message (not a target; a reference).
double time_am_program_rtt(int me, int iterations) {
  am_pongs = 0;
  am_pings = 0;
  squall::barrier();
  const auto t0 = Clock::now();
  if (me == 0) {
    for (int i = 0; i < iterations; ++i) {
      squall::am::send<on_am_program_ping>(1, static_cast<std::uint64_t>(i));
      squall::am::wait_until([i] { return am_pongs.load() == static_cast<std::uint64_t>(i) + 1; });
    }
  } else if (me == 1) {
    for (int i = 0; i < iterations; ++i) {
      squall::am::wait_until([i] { return am_pings.load() > static_cast<std::uint64_t>(i); });
      squall::am::send<on_am_pong>(0, static_cast<std::uint64_t>(i));
    }
    squall::am::flush(0);
  }
  const double us = squall::bench::seconds_since(t0) * 1e6 / iterations;
  squall::barrier();
  return us;
}

// Starts a chain on node 0 (by a local call) and runs it to its end: node 0 until the last
// message (left == 0) ran there, node 1 (when the chain crosses) until its last (left == 1).
// Time per message (per `count`) on node 0.
template <class Start>
double time_chain(int me, int count, bool crosses, Start&& start) {
  lowest_left = INT32_MAX;
  squall::barrier();
  const auto t0 = Clock::now();
  if (me == 0) {
    start();
    arrays::run_until([] { return lowest_left == 0; });
  } else if (me == 1 && crosses) {
    arrays::run_until([] { return lowest_left == 1; });
  }
  const double us = squall::bench::seconds_since(t0) * 1e6 / count;
  arrays::quiesce();
  return us;
}

// 2 K messages between elements 0 (node 0) and 16 (node 1): time per round trip.
template <auto Ping>
double time_message_rtt(int me, int round_trips) {
  return time_chain(me, round_trips, true, [round_trips] {
    (*the_array)[ping_a].call<Ping>(std::int32_t{ping_b}, std::int32_t{2 * round_trips});
  });
}

// Messages between elements 0 and 1, both on node 0: time per message.
double time_local_message(int me, int messages) {
  return time_chain(me, messages, false, [messages] {
    (*the_array)[local_a].call<&Elem::ping>(std::int32_t{local_b}, std::int32_t{messages});
  });
}

// An even number of hops: the chain starts and ends on node 0. Time per hop.
double time_migration(int me, int hops) {
  return time_chain(me, hops, true, [hops] { (*the_array)[traveller].call<&Elem::hop>(std::int32_t{hops}); });
}

template <bool Big, bool InPlace>
double time_traveller(int me, int hops) {
  using T = Traveller<Big, InPlace>;
  return time_chain(me, hops, true, [hops] { (*travellers<Big, InPlace>)[0].template call<&T::hop>(std::int32_t{hops}); });
}

// The four travellers' arrays (collective), each with element 0 on node 0.
template <bool Big, bool InPlace>
void make_travellers(int me) {
  using T = Traveller<Big, InPlace>;
  static const auto a = InPlace ? arrays::array<T, arrays::index1d>::create_in_place({.slot_bytes = 8192, .slots_per_node = 4})
                                : arrays::array<T, arrays::index1d>::create();
  travellers<Big, InPlace> = &a;
  if (me == 0) a.insert(0, 0);
  arrays::quiesce();
}

// forwarded_message_us. Each round: node 1 migrates `stale` to node 0 and tells node 0 by a
// bare active message sent after the migration (messages between two nodes keep their order,
// so the migration is queued on node 0 when the flag arrives); node 0, still believing it on
// node 1, sends to it; node 1 forwards; node 0 runs the migration and then the message. Then
// node 0 sends the element back to node 1, which confirms its cache entry (node 1).
double time_forwarded(int me, int rounds, bool& right) {
  const auto elem = (*the_array)[stale];
  moved_flags = 0;
  pokes = 0;
  const std::uint64_t forwarded_before = arrays::counts().forwarded;
  squall::barrier();
  std::vector<double> us;
  if (me == 0) {
    for (int i = 0; i <= rounds; ++i) {  // round 0 warms up (node 0 has no entry for it yet)
      squall::am::wait_until([i] { return moved_flags.load() > static_cast<std::uint64_t>(i); });
      const auto t0 = Clock::now();
      elem.call<&Elem::poke>();
      arrays::run_until([i] { return pokes > static_cast<std::uint64_t>(i); });
      if (i > 0) us.push_back(squall::bench::seconds_since(t0) * 1e6);
      elem.call<&Elem::go>(std::int32_t{1});
      arrays::run_until([&elem] { return elem.local() == nullptr; });
    }
  } else if (me == 1) {
    for (int i = 0; i <= rounds; ++i) {
      arrays::run_until([&elem] { return elem.local() != nullptr; });
      elem.call<&Elem::go>(std::int32_t{0});
      arrays::run_until([&elem] { return elem.local() == nullptr; });
      squall::am::send<on_moved>(0);
      squall::am::flush(0);
    }
    arrays::run_until([&elem] { return elem.local() != nullptr; });
  }
  arrays::quiesce();
  if (me == 1) {
    const std::uint64_t forwarded = arrays::counts().forwarded - forwarded_before;
    if (forwarded < static_cast<std::uint64_t>(rounds)) {
      std::fprintf(stderr, "arrays: forwarded_message_us: node 1 forwarded %llu of %d messages\n",
                   static_cast<unsigned long long>(forwarded), rounds);
      right = false;
    }
  }
  return me == 0 ? squall::bench::median(us) : 0;
}

double time_bcast_reduce(int me, int cycles, bool& right) {
  reductions = 0;
  squall::barrier();
  const auto t0 = Clock::now();
  const std::int64_t expected = static_cast<std::int64_t>(per_node) * squall::nodes();
  for (int c = 0; c < cycles; ++c) {
    if (me == 0) the_array->broadcast<&Elem::step>();
    arrays::run_until([c] { return reductions > static_cast<std::uint64_t>(c); });
    if (reduced_value != expected) right = false;
  }
  const double us = squall::bench::seconds_since(t0) * 1e6 / cycles;
  arrays::quiesce();
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  int iterations = 10000, trials = 7;
  int sized = static_cast<int>(sized_bytes);
  squall::bench::command_line options("arrays", argc, argv, me);
  options.positive("--iters", iterations);
  options.positive("--trials", trials);
  options.positive("--sized-bytes", sized);
  const std::string only_list = options.text("--only", "");
  const bool json = options.flag("--json");
  if (!options.finish()) return 2;
  if (!squall::bench::has_two_nodes("arrays", n, me, false)) return 1;
  sized_bytes = static_cast<std::size_t>(sized);
  const int round_trips = iterations;
  const int local_messages = 10 * iterations;
  const int hops = std::max(2, iterations / 5 / 2 * 2);
  const int rounds = std::max(2, iterations / 10);
  const int cycles = std::max(2, iterations / 10);

  static const auto elements =
      arrays::array<Elem>::create(arrays::block_home(arrays::index1d{per_node * n}));
  the_array = &elements;
  for (int i = per_node * me; i < per_node * (me + 1); ++i) elements.insert(i);
  arrays::quiesce();
  make_travellers<false, true>(me);
  make_travellers<true, false>(me);
  make_travellers<true, true>(me);

  // --only NAME[,NAME...] runs those measurements (for a profiler); the others are null.
  std::vector<std::string> only;
  for (std::size_t at = 0; !only_list.empty() && at <= only_list.size();) {  // none: all of them
    const std::size_t comma = std::min(only_list.find(',', at), only_list.size());
    only.push_back(only_list.substr(at, comma - at));
    at = comma + 1;
  }
  const char* names[] = {"am", "message", "local", "migration", "forwarded", "bcast_reduce"};
  for (const std::string& o : only) {
    if (std::find(std::begin(names), std::end(names), o) == std::end(names)) {
      if (me == 0) {
        std::fprintf(stderr, "--only: '%s' is none of am, message, local, migration, forwarded, bcast_reduce\n", o.c_str());
      }
      return 2;
    }
  }
  const auto want = [&only](const char* name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };

  bool right = true;
  std::vector<double> am_us, am_program_us, am_sized_us, message_us, expedited_us, local_us, migration_us, forwarded_us, bcast_us;
  std::vector<double> in_place_us, big_packed_us, big_in_place_us;
  if (want("am")) time_am_rtt(me, std::max(1, round_trips / 10));  // warm-up
  if (want("message")) time_message_rtt<&Elem::ping>(me, std::max(1, round_trips / 10));
  for (int t = 0; t < trials; ++t) {
    if (want("am")) am_us.push_back(time_am_rtt(me, round_trips));
    if (want("am")) am_program_us.push_back(time_am_program_rtt(me, round_trips));
    if (want("am")) am_sized_us.push_back(time_am_sized_rtt(me, round_trips));
    if (want("message")) message_us.push_back(time_message_rtt<&Elem::ping>(me, round_trips));
    if (want("message")) expedited_us.push_back(time_message_rtt<&Elem::ping_expedited>(me, round_trips));
    if (want("local")) local_us.push_back(time_local_message(me, local_messages));
    if (want("migration")) migration_us.push_back(time_migration(me, hops));
    if (want("migration")) in_place_us.push_back(time_traveller<false, true>(me, hops));
    if (want("migration")) big_packed_us.push_back(time_traveller<true, false>(me, hops));
    if (want("migration")) big_in_place_us.push_back(time_traveller<true, true>(me, hops));
    if (want("forwarded")) forwarded_us.push_back(time_forwarded(me, rounds, right));
    if (want("bcast_reduce")) bcast_us.push_back(time_bcast_reduce(me, cycles, right));
  }
  if (want("bcast_reduce") && me == 0 && reduced_value != static_cast<std::int64_t>(per_node) * n) {
    std::fprintf(stderr, "arrays: the reduction gave %lld, not %d\n", static_cast<long long>(reduced_value), per_node * n);
    right = false;
  }
  right = squall::allreduce(right ? 0 : 1) == 0;
  if (me == 0) {
    squall::bench::figures f;
    const auto add = [&f](const char* key, const std::vector<double>& v) {
      if (v.empty()) {
        f.add_null(key);
      } else {
        f.add(key, squall::bench::median(v));
      }
    };
    const double am = squall::bench::median(am_us), msg = squall::bench::median(message_us);
    const double local = squall::bench::median(local_us), migration = squall::bench::median(migration_us);
    add("am_rtt_us", am_us);
    add("am_program_rtt_us", am_program_us);
    add("am_sized_rtt_us", am_sized_us);
    add("message_us", message_us);
    if (!am_us.empty()) {
      f.add("message_target_us", 2 * am);
    } else {
      f.add_null("message_target_us");
    }
    if (!am_us.empty() && !message_us.empty()) {
      f.add("message_vs_am_rtt", msg / am);
    } else {
      f.add_null("message_vs_am_rtt");
    }
    if (!am_sized_us.empty() && !message_us.empty()) {
      f.add("message_vs_am_sized_rtt", msg / squall::bench::median(am_sized_us));
    } else {
      f.add_null("message_vs_am_sized_rtt");
    }
    add("message_expedited_us", expedited_us);
    if (!am_us.empty() && !expedited_us.empty()) {
      f.add("message_expedited_vs_am_rtt", squall::bench::median(expedited_us) / am);
    } else {
      f.add_null("message_expedited_vs_am_rtt");
    }
    add("local_message_us", local_us);
    f.add("local_message_target_us", 0.5);
    add("migration_us", migration_us);
    f.add("migration_target_us", 20);
    add("migration_in_place_us", in_place_us);
    add("migration_big_packed_us", big_packed_us);
    add("migration_big_in_place_us", big_in_place_us);
    add("bcast_reduce_us", bcast_us);
    add("forwarded_message_us", forwarded_us);
    const auto verdict = [](const std::vector<double>& v, bool met) { return v.empty() ? "not run" : met ? "met" : "MISSED"; };
    std::printf(
        "arrays: %d nodes, %d elements per node; medians of %d trials\n"
        "  message_us and am_rtt_us are both ROUND TRIPS node 0 -> node 1 -> node 0 (two one-way messages);\n"
        "  message_us's entry method is ordinary (runs from the handler, the lock let go), message_expedited_us's\n"
        "  is expedited (runs in the handler, under the lock);\n"
        "  local_message_us is ONE message (one way) between two elements of node 0 (the paper's Table 1);\n"
        "  migration_us is per hop, forwarded_message_us one way (0 -> stale node 1 -> 0), bcast_reduce_us per cycle\n"
        "  migration_in_place_us: the small element in the shared address space (8 KiB slot, moved as bytes);\n"
        "  migration_big_{packed,in_place}_us: an element with 4 KiB of heap data, serialised vs moved in place\n"
        "  targets: message_us <= 2 x am_rtt_us = %.3f: %s; local_message_us <= 0.5: %s; migration_us <= 20: %s\n",
        n, per_node, trials, 2 * am, verdict(am_us.empty() ? am_us : message_us, msg <= 2 * am),
        verdict(local_us, local <= 0.5), verdict(migration_us, migration <= 20));
    // The spread of the trials (the text only): the floor itself moves with where the
    // hypervisor puts the two vCPUs.
    std::printf("  trials, min..max:");
    const std::pair<const char*, const std::vector<double>*> spread[] = {
        {"am_rtt", &am_us}, {"am_program_rtt", &am_program_us},
        {"am_sized_rtt", &am_sized_us}, {"message", &message_us}, {"message_expedited", &expedited_us}, {"local", &local_us},
        {"migration", &migration_us}, {"migration_in_place", &in_place_us}, {"migration_big_packed", &big_packed_us},
        {"migration_big_in_place", &big_in_place_us}, {"forwarded", &forwarded_us}, {"bcast_reduce", &bcast_us}};
    for (const auto& [name, v] : spread) {
      if (v->empty()) continue;
      std::printf(" %s %.3f..%.3f;", name, *std::min_element(v->begin(), v->end()), *std::max_element(v->begin(), v->end()));
    }
    std::printf("\n");
    const std::string title = "arrays: migratable object arrays (--iters " + std::to_string(iterations) + ")";
    f.print(title.c_str(), json);
  }
  if (!right && me == 0) std::fprintf(stderr, "arrays: a count was wrong (see above)\n");
  return right ? 0 : 1;
}
