// SPDX-License-Identifier: BSD-3-Clause
// Setting up a job's TCP connections: every node listens, publishes its endpoint (how is
// the bootstrap's business), then connects to each lower-numbered TCP peer and accepts
// each higher-numbered one, authenticating every connection (handshake.hpp). Connects go
// only downwards, so node 0 only accepts and no two nodes wait for each other.
#pragma once
#include <cstdint>
#include <vector>

#include "transport/tcp/secret.hpp"
#include "transport/tcp/setup_watch.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {

class listener {
 public:
  // Listens on `where` (port 0: any free port); fatal with the address on failure.
  explicit listener(endpoint where);
  listener(listener&& o) noexcept : fd_(o.fd_), where_(o.where_) { o.fd_ = -1; }
  listener& operator=(listener&&) = delete;
  ~listener();
  int fd() const { return fd_; }
  endpoint where() const { return where_; }  // with the port actually bound

 private:
  int fd_ = -1;
  endpoint where_;
};

// Returns a connected, authenticated, non-blocking socket per peer marked in `over_tcp`
// (-1 for the others), each ending once its peer is unreachable for about `silence_s`
// seconds (detect_loss_after). Fatal, naming the node and address, when a peer cannot be
// reached or never connects within `timeout_ns`. Connections that fail the handshake
// meanwhile are closed and counted (tcp.connections_refused). Each connection made is handed
// to `watch` at once.
std::vector<int> connect_mesh(int me, const std::vector<bool>& over_tcp, const std::vector<endpoint>& endpoints,
                              const listener& l, const job_secret& secret, std::int64_t timeout_ns, int silence_s,
                              setup_watch& watch);

// Accepts a connection that arrived after set-up and refuses it: the job's connections
// are all made. Returns false when there was none.
bool refuse_late_connection(const listener& l);

}  // namespace squall::tcp
