// SPDX-License-Identifier: BSD-3-Clause
// A job spread over several hosts by hand, without a cluster launcher: the same squallrun
// command runs on every host, given the list of hosts (one IPv4 address each) and the
// nodes per host. Host k runs nodes k*per_host .. (k+1)*per_host-1; the nodes of one host
// share memory, and node i listens for its TCP peers on its host's address, port
// SQUALL_TCP_PORT + i, so every node knows every endpoint without an exchange. squallrun
// passes the layout down in SQUALL_HOSTS (a,b,c: the hosts, in node order) and
// SQUALL_NODES_PER_HOST; which nodes share this host, the nodes read from the job area.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "transport/tcp/socket_io.hpp"

namespace squall::boot {

constexpr int default_host_list_port = 41000;  // SQUALL_TCP_PORT when unset with a host list

struct host_layout {
  std::vector<std::uint32_t> hosts;  // IPv4, host byte order
  int per_host = 1;

  int nodes() const { return static_cast<int>(hosts.size()) * per_host; }
  int host_of(int node) const { return node / per_host; }
  // Where node i listens: its host's address, port base + i.
  std::vector<tcp::endpoint> endpoints(int port_base) const;
};

// "10.0.0.1,10.0.0.2" -> the addresses; nullopt with `error` set when malformed or repeated.
std::optional<std::vector<std::uint32_t>> parse_host_list(const std::string& text, std::string& error);

// The index of the one listed address that belongs to an interface of this machine; -1 when
// none does, -2 when several do (then the host index must be given).
int find_this_host(const std::vector<std::uint32_t>& hosts);

// The layout squallrun passed down (SQUALL_HOSTS set), checked against the job's size;
// nullopt for a one-host job. Fatal, naming the variable, on a bad value.
std::optional<host_layout> host_layout_from_env(int job_nodes);

}  // namespace squall::boot
