// SPDX-License-Identifier: BSD-3-Clause
// Small helpers for the TCP transport's sockets: addresses, options, and reads and writes
// of a whole buffer against a deadline (the set-up phase; the transport itself is
// non-blocking).
#pragma once
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace squall::tcp {

struct endpoint {
  std::uint32_t ipv4 = 0;  // host byte order
  std::uint16_t port = 0;
};
std::string to_string(const endpoint& e);
// Parses a dotted IPv4 address; false if it is not one.
bool parse_ipv4(const char* text, std::uint32_t& out);
sockaddr_in to_sockaddr(const endpoint& e);
// The first IPv4 address of an interface that is up and not loopback (127.0.0.1 if none).
std::uint32_t first_interface_address();
endpoint peer_of(int fd);

// Non-blocking and TCP_NODELAY: every connection, from its start.
void configure_connection(int fd);
// Keepalive probes while a connector waits for the acceptor's challenge, so that a connection
// the other end does not have is found in about 15 s. On a lossy network a connector may
// believe itself connected to an acceptor that never was (the last packet of TCP's own
// handshake lost, then every repeat of the acceptor's): it would wait for a challenge that
// cannot come until SQUALL_TCP_TIMEOUT. Off again once the challenge is in: five lost probes
// must not end a connection the acceptor counts as made.
void probe_for_a_dead_peer(int fd, bool on);
// Once the job's connections are made: keepalive and a TCP user timeout that end the
// connection once its peer has been unreachable for about `silence_s` seconds (the nodes'
// SQUALL_LIVENESS_S; the watchdog, which reads the heartbeats, says so first). 0: never, as
// the watchdog then never reports a silent node (a debugger may hold a process).
void detect_loss_after(int fd, int silence_s);
void set_nonblocking(int fd);

// Connects fd (made non-blocking) to e before `deadline_ns` (CLOCK_MONOTONIC): 0, or the
// errno of the failure, ETIMEDOUT at the deadline. A blocking connect would wait for the
// kernel's SYN retries (about 2 minutes) towards a host that drops them.
int connect_before(int fd, const endpoint& e, std::int64_t deadline_ns);

enum class io_result { done, timeout, closed, error };
// Reads or writes exactly `len` bytes of a non-blocking socket before `deadline_ns`
// (CLOCK_MONOTONIC).
io_result read_full(int fd, void* buf, std::size_t len, std::int64_t deadline_ns);
io_result write_full(int fd, const void* buf, std::size_t len, std::int64_t deadline_ns);
// What r means, for a message; an error's names errno, so call it at once after the read or write.
std::string describe(io_result r);

}  // namespace squall::tcp
