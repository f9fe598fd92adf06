// SPDX-License-Identifier: BSD-3-Clause
// The location protocol (libarrays/PROTOCOL.md) run on a model: a few nodes, one element,
// channels in order per pair of nodes as Squall's active messages are, and a random schedule
// that interleaves sends, migrations, insertions, deletions and deliveries. Each node does
// what transition() says, as the runtime will. Checked: no transition errs, every message is
// delivered exactly once (messages to a deleted element wait at the home for the next one),
// none wanders (a hop bound), and after one round of messages every sender's cache is right:
// the next round takes one hop. Each test also checks that its storms reached the races it is
// about, since a model that never meets a race proves nothing about it.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "location.hpp"

namespace {

using namespace squall::arrays;
using S = location_state;
using K = event_kind;
using A = action;

// (state, at the home, event, action): which transitions the storms reached.
using reached_set = std::set<std::tuple<S, bool, K, A>>;

struct packet {
  enum kind { message, element, announce, update, deleted, insert, create } what;
  int id = -1;  // message: its number
  int sender = -1;
  bool forwarded = false;
  bool may_create = false;
  int hops = 0;
  int node = -1;  // update, deleted, insert: the node they name
  std::uint32_t epoch = 0;
};

struct model {
  int nodes;
  int home;
  bool two_part;  // migrations as announce (in order) + element (out of order, as bulk data)
  std::mt19937 rng;
  std::vector<location_entry> entry;
  std::vector<std::deque<packet>> held;
  std::map<std::pair<int, int>, std::deque<packet>> channel;  // (from, to) in order
  std::vector<std::pair<int, packet>> bulk;                    // (to, element), any order
  std::vector<int> delivered;                                  // per message id
  std::vector<int> hops;
  bool exists = false, insert_pending = false;  // the program's view, so that it never misuses
  std::uint32_t epoch_floor = 0;                 // the home's, as the runtime's (expire_some)
  std::string failure;
  reached_set& reached;

  model(int n, unsigned seed, bool two, reached_set& r) : nodes(n), two_part(two), rng(seed), entry(n), held(n), reached(r) {
    home = pick(n);
    for (int i = 0; i < n; ++i) entry[i].home = (i == home);
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  void send(int from, int to, packet p) { channel[{from, to}].push_back(p); }

  outcome look(int self, const event& ev) {
    outcome o = transition(entry[self], ev);
    reached.insert({entry[self].state, entry[self].home, ev.kind, o.act});
    return o;
  }

  // Runs one event at `self`; returns the outcome after acting on it.
  outcome step(int self, const event& ev, const packet* msg = nullptr) {
    outcome o = look(self, ev);
    if (o.act == A::error) {
      if (failure.empty())
        failure = std::string(name(ev.kind)) + " at node " + std::to_string(self) + " in " + name(entry[self].state) + ": " + o.why;
      return o;
    }
    entry[self] = o.entry;
    if (o.inform_home) {
      if (ev.kind == K::deleted_here)
        send(self, home, {.what = packet::deleted, .node = self, .epoch = o.entry.epoch});
      else
        send(self, home, {.what = packet::update, .node = self, .epoch = o.entry.epoch});
    }
    switch (o.act) {
      case A::deliver:
      case A::deliver_and_update:
        delivered[msg->id]++;
        hops[msg->id] = msg->hops;
        if (o.act == A::deliver_and_update && msg->sender != self)
          send(self, msg->sender, {.what = packet::update, .node = self, .epoch = o.entry.epoch});
        break;
      case A::forward: pass_on(self, o.entry.node, *msg); break;
      case A::forward_home: pass_on(self, home, *msg); break;
      case A::buffer: held[self].push_back(*msg); break;
      case A::flush: flush(self); break;
      case A::create_on_demand:
        exists = true;
        flush(self);
        delivered[msg->id]++;
        hops[msg->id] = msg->hops;
        break;
      default: break;
    }
    return o;
  }

  void pass_on(int self, int to, packet m) {
    m.forwarded = m.forwarded || m.sender != self;  // a forward, not the sender's own first send
    m.hops++;
    send(self, to, m);
  }

  // Held messages and, at the home, held insertions, in the order they came.
  void flush(int self) {
    std::deque<packet> q;
    q.swap(held[self]);
    for (const packet& p : q) receive(self, p);
  }

  void on_message(int self, const packet& m) {
    step(self, {m.may_create ? K::message_may_create : K::message_arrived, -1, 0, m.forwarded}, &m);
  }

  void new_message(int from, bool may_create) {
    packet m{.what = packet::message, .id = static_cast<int>(delivered.size()), .sender = from, .may_create = may_create};
    delivered.push_back(0);
    hops.push_back(-1);
    on_message(from, m);
  }

  void receive(int self, const packet& p) {
    switch (p.what) {
      case packet::message: on_message(self, p); break;
      case packet::element: step(self, {K::migration_landed, -1, p.epoch}); break;
      case packet::announce: step(self, {K::migration_announced, -1, p.epoch}); break;
      case packet::update: step(self, {K::routing_update, p.node, p.epoch}); break;
      case packet::deleted: step(self, {K::deleted_at, p.node, p.epoch}); break;
      case packet::insert: place(p.node); break;  // a request reaching the home
      case packet::create:
        step(self, {K::created_here, -1, p.epoch});
        insert_pending = false;
        break;
    }
  }

  // The program on node `at` inserts the element on node `on`: through the home, which
  // places it (created_at) and sends the creation before flushing what it held.
  void insert(int at, int on) {
    exists = insert_pending = true;
    if (at != home) {  // the request travels to the home in order with at's other messages
      send(at, home, {.what = packet::insert, .node = on});
      return;
    }
    place(on);
  }
  void place(int on) {
    if (on == home) {
      if (look(home, {K::created_here}).act == A::buffer) {
        held[home].push_back({.what = packet::insert, .node = on});
        return;
      }
      step(home, {K::created_here});
      insert_pending = false;
      return;
    }
    outcome o = look(home, {K::created_at, on});
    if (o.act == A::error) {
      failure = std::string("created_at: ") + o.why;
      return;
    }
    if (o.act == A::buffer) {  // the last element's deletion is still on its way
      held[home].push_back({.what = packet::insert, .node = on});
      return;
    }
    entry[home] = o.entry;
    send(home, on, {.what = packet::create, .epoch = o.entry.epoch});
    if (o.act == A::flush) flush(home);
  }

  void migrate(int from, int to) {
    outcome o = step(from, {K::migrated_away, to});
    if (o.act == A::error) return;
    if (!two_part) {
      send(from, to, {.what = packet::element, .epoch = o.entry.epoch});
      return;
    }
    send(from, to, {.what = packet::announce, .epoch = o.entry.epoch});
    bulk.push_back({to, {.what = packet::element, .epoch = o.entry.epoch}});
  }

  int where() const {
    for (int i = 0; i < nodes; ++i)
      if (entry[i].state == S::local) return i;
    return -1;
  }

  // One random step; false when nothing is in flight and `quiet` asks for no new work.
  bool tick(bool quiet, bool on_demand) {
    std::vector<std::pair<int, int>> busy;
    for (auto& [pair, q] : channel)
      if (!q.empty()) busy.push_back(pair);
    int choice = pick(10);
    if (!quiet && choice < 4) {
      int at = pick(nodes), here = where();
      switch (pick(4)) {
        case 0: new_message(at, on_demand); break;
        case 1:
          if (here >= 0 && nodes > 1) migrate(here, (here + 1 + pick(nodes - 1)) % nodes);
          break;
        case 2:
          if (here >= 0 && pick(3) == 0) {
            step(here, {K::deleted_here});
            exists = false;
          }
          break;
        case 3:
          if (!on_demand && !exists && !insert_pending) insert(at, pick(nodes));
          break;
      }
      return true;
    }
    // Bulk data may come before its announcement; the runtime uses it once announced.
    std::vector<std::size_t> usable;
    for (std::size_t i = 0; i < bulk.size(); ++i)
      if (entry[bulk[i].first].state == S::arriving) usable.push_back(i);
    if (!usable.empty() && (busy.empty() || choice == 9)) {
      std::size_t i = usable[std::uniform_int_distribution<std::size_t>(0, usable.size() - 1)(rng)];
      auto [to, p] = bulk[i];
      bulk.erase(bulk.begin() + static_cast<std::ptrdiff_t>(i));
      receive(to, p);
      return true;
    }
    if (busy.empty()) return !quiet;
    auto pair = busy[std::uniform_int_distribution<std::size_t>(0, busy.size() - 1)(rng)];
    packet p = channel[pair].front();
    channel[pair].pop_front();
    receive(pair.second, p);
    return true;
  }

  void drain() {
    for (int i = 0; i < 100000 && failure.empty(); ++i)
      if (!tick(true, false)) return;
    if (failure.empty()) failure = "the model did not settle: a message is going round";
  }

  // At a quiescent point the runtime may forget what nodes merely cache, and the home's record
  // of no element; it makes the home's entry again at the array's epoch floor, the largest
  // epoch it forgot (with epoch 0 instead, this model fails: a node still remembering the last
  // element refuses the next one's creation as older).
  void expire_some() {
    for (int i = 0; i < nodes; ++i) {
      if (!pick(2)) continue;
      const outcome o = step(i, {K::cache_expired});
      if (i == home && o.act == A::record) {
        epoch_floor = std::max(epoch_floor, o.entry.epoch);
        entry[i] = {S::none, true, -1, epoch_floor};
      }
    }
  }
};

void run(int nodes, unsigned seed, bool two_part, bool on_demand, reached_set& reached) {
  model m(nodes, seed, two_part, reached);
  SCOPED_TRACE(testing::Message() << nodes << " nodes, seed " << seed << (two_part ? ", two-part migrations" : "")
                                  << (on_demand ? ", created on demand" : ""));
  for (int phase = 0; phase < 3 && m.failure.empty(); ++phase) {
    for (int i = 0; i < 300 && m.failure.empty(); ++i) m.tick(false, on_demand);
    m.drain();
    m.expire_some();
  }
  // The element exists at the end, so that every message has somewhere to go.
  if (m.failure.empty() && !m.exists) {
    if (on_demand)
      m.new_message(m.pick(nodes), true);
    else
      m.insert(m.pick(nodes), m.pick(nodes));
    m.drain();
  }
  ASSERT_EQ(m.failure, "");
  for (std::size_t id = 0; id < m.delivered.size(); ++id) {
    ASSERT_EQ(m.delivered[id], 1) << "message " << id;
    ASSERT_LE(m.hops[id], 2 + 3 * 300) << "message " << id;
  }
  EXPECT_TRUE(m.bulk.empty());
  for (auto& q : m.held) EXPECT_TRUE(q.empty());

  // Two rounds from every node: the first corrects the caches, the second goes straight there.
  for (int round = 0; round < 2; ++round) {
    std::size_t first = m.delivered.size();
    for (int i = 0; i < nodes; ++i) m.new_message(i, on_demand);
    m.drain();
    ASSERT_EQ(m.failure, "");
    for (std::size_t id = first; id < m.delivered.size(); ++id) {
      ASSERT_EQ(m.delivered[id], 1);
      if (round == 1) {
        EXPECT_LE(m.hops[id], 1) << "a stale cache survived a round of messages";
      }
    }
  }
}

void expect_reached(const reached_set& reached, std::initializer_list<std::tuple<S, bool, K, A>> races) {
  for (auto [s, home, k, a] : races)
    EXPECT_TRUE(reached.count({s, home, k, a}))
        << "never reached: " << name(s) << (home ? " at the home" : "") << " on " << name(k) << " -> " << name(a);
}

TEST(LocationModel, ExactlyOnceUnderMigrationInsertionAndDeletion) {
  reached_set reached;
  for (int nodes : {1, 2, 3, 5, 8})
    for (unsigned seed = 1; seed <= 150; ++seed) run(nodes, seed, false, false, reached);
  expect_reached(reached, {
      {S::remote, false, K::message_arrived, A::forward},           // a stale cache
      {S::local, false, K::message_arrived, A::deliver_and_update},  // ... corrected
      {S::remote, false, K::routing_update, A::ignore},              // old news, refused
      {S::remote, true, K::routing_update, A::ignore},
      {S::buffering, true, K::created_here, A::flush},               // early messages
      {S::buffering, true, K::created_at, A::flush},
      {S::remote, true, K::created_at, A::buffer},                   // insertion before the deletion's news
      {S::remote, true, K::deleted_at, A::flush},
  });
}

TEST(LocationModel, ExactlyOnceWithAnnouncedTwoPartMigrations) {
  reached_set reached;
  for (int nodes : {2, 3, 5, 8})
    for (unsigned seed = 1; seed <= 150; ++seed) run(nodes, seed, true, false, reached);
  expect_reached(reached, {
      {S::arriving, false, K::message_arrived, A::buffer},
      {S::arriving, true, K::message_arrived, A::buffer},
      {S::arriving, false, K::migration_landed, A::flush},
      {S::arriving, false, K::routing_update, A::ignore},
  });
}

TEST(LocationModel, ExactlyOnceWithCreationOnDemand) {
  reached_set reached;
  for (int nodes : {1, 2, 4, 8})
    for (unsigned seed = 1; seed <= 150; ++seed) run(nodes, seed, seed % 2 == 0, true, reached);
  expect_reached(reached, {
      {S::none, true, K::message_may_create, A::create_on_demand},
      {S::none, false, K::message_may_create, A::forward_home},
      {S::arriving, false, K::message_may_create, A::buffer},
  });
}

}  // namespace
