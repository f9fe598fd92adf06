// SPDX-License-Identifier: BSD-3-Clause
// The accepting half of connect_mesh: the handshakes of every incoming connection run at
// once, each with its own deadline, so that strangers that connect and say nothing cannot
// hold up the job's set-up. At most a bounded number are under way; beyond, new connections
// wait in the kernel's backlog until the oldest has had time to answer and is dropped. Every
// connection that fails is refused (refusals.hpp).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "transport/tcp/handshake.hpp"
#include "transport/tcp/mesh.hpp"

namespace squall::tcp {

// The next connection waiting on the listener, or -1 when there is none now.
int accept_connection(const listener& l);

class accepting {
 public:
  // Fills fds[peer] for each higher-numbered peer marked in over_tcp as it authenticates.
  accepting(int me, int n, const std::vector<bool>& over_tcp, const listener& l, const job_secret& secret,
            std::vector<int>& fds);
  // Refuses the handshakes still under way: the job's connections are all made.
  ~accepting();
  accepting(const accepting&) = delete;
  accepting& operator=(const accepting&) = delete;

  // Waits (at most until `deadline_ns`, and briefly) for connections and answers; returns
  // how many expected peers it connected.
  int step(std::int64_t deadline_ns);

 private:
  struct pending {
    int fd;
    endpoint from;
    std::int64_t started, deadline;
    acceptor_side side;
    std::array<std::byte, response_size> got{};
    std::size_t have = 0;
  };
  // Whether a new connection may be taken now (a full set makes room only after a grace).
  bool has_room(std::int64_t now) const;
  // Accepts what is waiting and sends each its challenge; returns how many expected peers it
  // connected (making room in a full set advances its oldest before dropping it).
  int take_new_connections();
  // Reads what arrived on p: -1 to keep waiting, else the connection is done with (refused,
  // or an expected peer: returns 1 then, 0 otherwise).
  int advance(pending& p);

  int me_, n_;
  const std::vector<bool>& over_tcp_;
  const listener& l_;
  const job_secret& secret_;
  std::vector<int>& fds_;
  std::deque<pending> pending_;  // oldest first
};

}  // namespace squall::tcp
