// SPDX-License-Identifier: BSD-3-Clause
#include "bootstrap/host_list.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>

#include "common/config.hpp"
#include "common/log.hpp"

namespace squall::boot {

std::vector<tcp::endpoint> host_layout::endpoints(int port_base) const {
  std::vector<tcp::endpoint> eps(static_cast<std::size_t>(nodes()));
  for (int i = 0; i < nodes(); ++i) eps[i] = {hosts[host_of(i)], static_cast<std::uint16_t>(port_base + i)};
  return eps;
}

std::optional<std::vector<std::uint32_t>> parse_host_list(const std::string& text, std::string& error) {
  if (text.empty()) {
    error = "the list is empty";
    return std::nullopt;
  }
  std::vector<std::uint32_t> hosts;
  // Every item between commas, the empty ones too (a comma too many, first or last).
  for (std::size_t start = 0, comma = 0; comma != std::string::npos; start = comma + 1) {
    comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    std::uint32_t a = 0;
    if (!tcp::parse_ipv4(item.c_str(), a)) {
      error = item.empty() ? "an empty item (a comma too many?)" : "'" + item + "' is not an IPv4 address";
      return std::nullopt;
    }
    if (std::find(hosts.begin(), hosts.end(), a) != hosts.end()) {
      error = item + " is listed twice";
      return std::nullopt;
    }
    hosts.push_back(a);
  }
  return hosts;
}

int find_this_host(const std::vector<std::uint32_t>& hosts) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return -1;
  int found = -1;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    bool mine = false;
    for (ifaddrs* i = list; i != nullptr && !mine; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      mine = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr) == hosts[h];
    }
    if (mine) found = found == -1 ? static_cast<int>(h) : -2;
  }
  freeifaddrs(list);
  return found;
}

std::optional<host_layout> host_layout_from_env(int job_nodes) {
  const char* text = std::getenv("SQUALL_HOSTS");
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::string error;
  auto hosts = parse_host_list(text, error);
  if (!hosts) fatal("SQUALL_HOSTS must list IPv4 addresses separated by commas: %s", error.c_str());
  host_layout l;
  l.hosts = std::move(*hosts);
  const int count = static_cast<int>(l.hosts.size());
  l.per_host = static_cast<int>(env_int("SQUALL_NODES_PER_HOST", 0, 1, 1 << 16));
  if (l.per_host == 0) fatal("SQUALL_HOSTS needs SQUALL_NODES_PER_HOST (start the program with squallrun --hosts)");
  if (l.nodes() != job_nodes) {
    fatal("SQUALL_HOSTS lists %d hosts of %d nodes, but the job has %d nodes", count, l.per_host, job_nodes);
  }
  return l;
}

}  // namespace squall::boot
