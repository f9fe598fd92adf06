// SPDX-License-Identifier: BSD-3-Clause
// Messages of collectives that arrived before (or while) this node waits for them, keyed
// by the collective's sequence number: every node numbers its collectives 0, 1, 2, ... in
// call order, so a fast node's next collective never mixes with a slow node's current one.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <squall/am.hpp>

namespace squall::coll {

enum class kind : std::uint32_t {
  barrier = 1, broadcast, reduce, allreduce, fence, finalize, gather, exchange, split_sum
};
const char* kind_name(kind k);

// One collective in progress on this node. Every message it sends carries its root (0 for the
// collectives that have none), and a node that receives a part from a node with another root
// ends the job saying so: nodes that disagree about a root would otherwise wait for ever or,
// in a broadcast, each keep its own value.
//
// A message for a collective this node has ended (or one left when it ended, found by the next
// receive) means the nodes disagree about that collective: the job ends, saying which. A
// collective left by an exception, or abandoned (allreduce_sum destroyed unfinished), drops
// its late messages.
class operation {
 public:
  explicit operation(kind k, int root = 0);
  ~operation();  // waits for this node's bulk sends to leave
  operation(const operation&) = delete;
  operation& operator=(const operation&) = delete;

  void send(int dest, std::uint32_t round, am::payload data);
  // Waits for the message of `round` from `src` and returns its bytes.
  std::vector<std::byte> receive(int src, std::uint32_t round);
  // Without waiting: takes that message into `out` if it is here (true), else false.
  bool try_receive(int src, std::uint32_t round, std::vector<std::byte>& out);
  // Whether it is here, taking nothing (with or without the node lock).
  bool arrived(int src, std::uint32_t round) const;
  // This node will not finish it: messages still to come for it are dropped.
  void abandon() { abandoned_ = true; }

 private:
  std::uint32_t wire_round(std::uint32_t round) const;
  void say_still_waiting(int src, std::int64_t seconds) const;

  kind kind_;
  int root_;
  int uncaught_;  // std::uncaught_exceptions() when it began
  bool abandoned_ = false;
  std::uint64_t seq_;
  std::vector<am::bulk_handle> bulk_;
};

// Under the node lock, from a wait outside the collectives (a channel round) for something
// of `peer`'s: a collective this node has not begun that `peer` has sent a part of, each one
// returned once. Messages between two nodes arrive in the order sent, so the peer went on
// without sending what this node waits for; unless that collective let it go on without
// this node (a leaf of a reduce), the wait never ends.
struct later_collective {
  std::uint64_t seq;
  const char* name;
};
std::optional<later_collective> peer_gone_on(int peer);

}  // namespace squall::coll
