// SPDX-License-Identifier: BSD-3-Clause
// Which transport carries each pair of nodes: shared memory between nodes on one host, TCP
// between hosts (a job started by a cluster launcher may span several). SQUALL_TRANSPORT=tcp
// makes every pair talk over TCP instead, so that one host can exercise and measure it.
// Each node with TCP peers listens on SQUALL_TCP_ADDR (default: 127.0.0.1 when all nodes
// share the host, else the first non-loopback IPv4 interface), port SQUALL_TCP_PORT + node
// (default: any free port); publishes its endpoint (in the job area under squallrun,
// through PMIx under a cluster launcher), and connects to its peers, proving the job's
// secret (made by squallrun, or by node 0 and handed over by the launcher). A job that
// squallrun --hosts spread over several hosts needs no exchange: node i listens on its
// host's address, port SQUALL_TCP_PORT + i (bootstrap/host_list.hpp), and every host's
// squallrun was given the same secret.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/config.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"
#include "transport/routed_transport.hpp"
#include "transport/tcp/mesh.hpp"

namespace squall::rt {
namespace {

bool tcp_requested() {
  const char* v = std::getenv("SQUALL_TRANSPORT");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "shm") == 0) return false;
  if (std::strcmp(v, "tcp") == 0) return true;
  fatal("SQUALL_TRANSPORT must be 'shm' or 'tcp' (got '%s')", v);
}

tcp::endpoint listen_endpoint(int me, bool other_hosts) {
  tcp::endpoint e;
  const char* addr = std::getenv("SQUALL_TCP_ADDR");
  if (addr == nullptr || *addr == '\0') {
    e.ipv4 = other_hosts ? tcp::first_interface_address() : 0x7f000001;
  } else if (!tcp::parse_ipv4(addr, e.ipv4)) {
    fatal("SQUALL_TCP_ADDR must be an IPv4 address (got '%s')", addr);
  }
  const auto base = env_int("SQUALL_TCP_PORT", 0, 0, 65535);
  if (base != 0 && base + me > 65535) fatal("SQUALL_TCP_PORT=%lld leaves no port for node %d", static_cast<long long>(base), me);
  e.port = static_cast<std::uint16_t>(base == 0 ? 0 : base + me);
  return e;
}

// Waits until every node published its endpoint in the job area.
std::vector<tcp::endpoint> published_endpoints(const node_runtime& nd, std::int64_t deadline) {
  std::vector<tcp::endpoint> eps(static_cast<std::size_t>(nd.n));
  for (int i = 0; i < nd.n; ++i) {
    auto& c = nd.job.control(i);
    while (c.tcp_port.load(std::memory_order_acquire) == 0) {
      nd.check_abort();
      if (now_ns() > deadline) fatal("node %d never published its TCP endpoint (SQUALL_TCP_TIMEOUT)", i);
      ::usleep(1000);
    }
    eps[i] = {c.tcp_ipv4.load(), static_cast<std::uint16_t>(c.tcp_port.load())};
  }
  return eps;
}

}  // namespace

void setup_transports(node_runtime& nd) {
  nd.shm = std::make_unique<shm::shm_transport>(nd.job, nd.me);
  nd.transport = nd.shm.get();
  const bool forced = tcp_requested();
  std::vector<bool> far(static_cast<std::size_t>(nd.n));
  bool other_hosts = false, any_far = false;
  for (int i = 0; i < nd.n; ++i) {
    other_hosts = other_hosts || !nd.on_this_host[i];
    far[i] = i != nd.me && (forced || !nd.on_this_host[i]);  // a node's own messages stay in its ring
    any_far = any_far || far[i];
  }
  if (!any_far) return;
  const std::int64_t timeout_ns = env_int("SQUALL_TCP_TIMEOUT", 30, 1, 3600) * 1'000'000'000;
  const std::int64_t deadline = now_ns() + timeout_ns;
  const tcp::job_secret secret = nd.pmix ? nd.pmix->agree_on_secret() : tcp::secret_from_env();
  std::vector<tcp::endpoint> endpoints;
  if (nd.hosts) {  // fixed endpoints: the host's address, a port per node
    const int base = static_cast<int>(env_int("SQUALL_TCP_PORT", boot::default_host_list_port, 1, 65535));
    if (base + nd.n - 1 > 65535) fatal("SQUALL_TCP_PORT=%d leaves no port for node %d", base, nd.n - 1);
    endpoints = nd.hosts->endpoints(base);
  }
  tcp::listener l(nd.hosts ? endpoints[nd.me] : listen_endpoint(nd.me, other_hosts));
  if (nd.pmix) {
    endpoints = nd.pmix->exchange_endpoints(l.where());
  } else if (!nd.hosts) {
    nd.control().tcp_ipv4.store(l.where().ipv4);
    nd.control().tcp_port.store(l.where().port, std::memory_order_release);
    endpoints = published_endpoints(nd, deadline);
  }
  auto fds = tcp::connect_mesh(nd.me, far, endpoints, l, secret, deadline - now_ns());
  node_runtime* self = &nd;
  tcp::tcp_transport::hooks hooks{
      [self] { self->shm->ring_doorbell(self->me); },
      [self](int node, const std::string& why) { self->job.abort(node, why.c_str()); },
      &nd.control().awake};
  nd.tcp = std::make_unique<tcp::tcp_transport>(std::move(fds), nd.shm->max_packet(), std::move(l),
                                                std::move(hooks));
  nd.routed = std::make_unique<routed_transport>(*nd.shm, *nd.tcp, std::move(far));
  nd.transport = nd.routed.get();
}

void close_transports(node_runtime& nd) {
  if (nd.tcp) nd.tcp->shutdown(5'000'000'000);
  if (nd.pmix) nd.pmix->finalize();
}

}  // namespace squall::rt
