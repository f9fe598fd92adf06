// SPDX-License-Identifier: BSD-3-Clause
// Which transport carries each pair of nodes: shared memory between nodes on one host, the
// network between hosts (a job started by a cluster launcher may span several): Squall's TCP
// or UCX (SQUALL_NETWORK; by default UCX when Squall is built with it and the host has an
// RDMA device, else TCP). SQUALL_TRANSPORT=tcp or ucx makes every pair talk over that
// instead, so that one host can exercise and measure it.
// Each node with network peers listens on SQUALL_TCP_ADDR (default: 127.0.0.1 when all nodes
// share the host, else the first non-loopback IPv4 interface), port SQUALL_TCP_PORT + node
// (default: any free port); publishes its endpoint (in the job area under squallrun,
// through PMIx under a cluster launcher), and connects to its peers, proving the job's
// secret (made by squallrun, or by node 0 and handed over by the launcher). A job that
// squallrun --hosts spread over several hosts needs no exchange: node i listens on its
// host's address, port SQUALL_TCP_PORT + i (bootstrap/host_list.hpp), and every host's
// squallrun was given the same secret. Over UCX, those authenticated connections carry the
// UCX worker addresses and are then closed (transport/ucx/ucx_transport.hpp).
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "common/config.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "runtime/node.hpp"
#include "transport/routed_transport.hpp"
#include "transport/tcp/mesh.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/ucx/interface_stamp.hpp"
#include "transport/ucx/plugin.hpp"

namespace squall::rt {
namespace {

enum class network { none, tcp, ucx };

network from_name([[maybe_unused]] const char* variable, const char* v) {
  if (std::strcmp(v, "tcp") == 0) return network::tcp;
  if (std::strcmp(v, "ucx") == 0) {
#if SQUALL_HAVE_UCX
    return network::ucx;
#else
    fatal("%s=ucx: this Squall was built without UCX (install libucx-dev, as scripts/setup does, and rebuild)",
          variable);
#endif
  }
  return network::none;
}

// SQUALL_TRANSPORT=tcp|ucx: every pair over that network, even on one host.
network forced_network() {
  const char* v = std::getenv("SQUALL_TRANSPORT");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "shm") == 0) return network::none;
  const network n = from_name("SQUALL_TRANSPORT", v);
  if (n == network::none) fatal("SQUALL_TRANSPORT must be 'shm', 'tcp' or 'ucx' (got '%s')", v);
  return n;
}

bool host_has_rdma_device() {
  DIR* d = ::opendir("/sys/class/infiniband");
  if (d == nullptr) return false;
  bool any = false;
  while (const dirent* e = ::readdir(d)) any = any || e->d_name[0] != '.';
  ::closedir(d);
  return any;
}

// Between hosts: SQUALL_NETWORK=tcp|ucx|auto (default auto: UCX where it has an RDMA device
// to drive, since over plain TCP Squall's own transport is the faster one).
// SQUALL_NETWORK as set (none: auto); a bad value ends the program.
network network_setting() {
  const char* v = std::getenv("SQUALL_NETWORK");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) return network::none;
  const network n = from_name("SQUALL_NETWORK", v);
  if (n == network::none) fatal("SQUALL_NETWORK must be 'tcp', 'ucx' or 'auto' (got '%s')", v);
  return n;
}

network between_hosts() {
  const network n = network_setting();
  if (n != network::none) return n;
  return SQUALL_HAVE_UCX && host_has_rdma_device() ? network::ucx : network::tcp;
}

// SQUALL_TCP_ADDR, SQUALL_TCP_PORT and (but under a PMIx launcher, whose node 0 makes the
// secret) SQUALL_JOB_SECRET are used only by a job with network peers, but checked in every
// job, as SQUALL_NETWORK is: a bad value is named on the first run, not first on a cluster.
void check_network_settings(const node_runtime& nd) {
  if (const char* addr = std::getenv("SQUALL_TCP_ADDR"); addr != nullptr && *addr != '\0') {
    std::uint32_t ipv4 = 0;
    if (!tcp::parse_ipv4(addr, ipv4)) fatal("SQUALL_TCP_ADDR must be an IPv4 address (got '%s')", addr);
  }
  env_int("SQUALL_TCP_PORT", 0, 0, 65535);
  const char* secret = std::getenv("SQUALL_JOB_SECRET");
  if (!nd.pmix && secret != nullptr && *secret != '\0') tcp::secret_from_env();
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

// Refuses a UCX module from another build (plugin.hpp): `stamp` is its interface stamp.
void check_stamp(const std::string& path, const char* stamp) {
  const std::string ours = SQUALL_UCX_INTERFACE_STAMP;
  if (stamp != nullptr && stamp == ours) return;
  const std::string what = stamp == nullptr ? "it has no interface stamp"
                                            : "interface " + std::string(stamp).substr(0, 12) + ", this library's " +
                                                  ours.substr(0, 12);
  fatal("UCX: %s is not the module of this Squall library (%s): it was built from other sources or with other "
        "flags; install the libsquall-ucx.so built with this library",
        path.c_str(), what.c_str());
}

// The UCX transport, from its module beside this library (transport/ucx/plugin.hpp). UCX's
// memory hooks stay off unless UCX_MEM_EVENTS asks for them: they would run inside every
// madvise of Squall's fault handlers, in signal context (the cost: no registration cache for
// RDMA transfers, which UCX then registers each time).
std::unique_ptr<network_transport> load_ucx(node_runtime& nd, const std::vector<int>& fds, const network_hooks& hooks,
                                            std::int64_t deadline) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&setup_transports), &self) == 0 || self.dli_fname == nullptr) {
    fatal("UCX: cannot find where the Squall library was loaded from");
  }
  std::string path = self.dli_fname;
  path = path.substr(0, path.rfind('/') + 1) + ucx::module_name;
  ::setenv("UCX_MEM_EVENTS", "no", 0);
  void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) fatal("UCX: cannot load %s: %s", path.c_str(), ::dlerror());
  check_stamp(path, static_cast<const char*>(::dlsym(module, ucx::stamp_symbol)));
  auto create = reinterpret_cast<ucx::create_fn>(::dlsym(module, ucx::create_symbol));
  if (create == nullptr) fatal("UCX: %s has no %s", path.c_str(), ucx::create_symbol);
  return std::unique_ptr<network_transport>(create(nd.me, &fds, &nd.on_this_host, nd.shm->max_packet(), &hooks, deadline));
}

}  // namespace

namespace {
// The node with peers across the network, and, while its connections are made, the watch that
// holds those made so far (the transport does not exist yet); then, while the UCX transport
// exchanges addresses over them, the connections themselves.
std::atomic<node_runtime*> networked{nullptr};
std::atomic<tcp::setup_watch*> connecting{nullptr};
std::atomic<const std::vector<int>*> handing_over{nullptr};

// The node this node's job lost, how long it had been silent (0: it ended), and why, once
// the job was aborted (on this host).
bool job_loss(const node_runtime& nd, int& lost, std::uint32_t& silent_ms, std::string& why) {
  const auto& h = nd.job.header();
  if (h.abort.load() == shm::not_aborted) return false;
  lost = h.lost_node.load();
  silent_ms = h.silent_ms.load();
  why = h.reason;
  return true;
}

// How long a node of this host that the network reports ended is left to this host's own
// witness: squallrun (or, under a PMIx launcher, the watchdog's pidfd) sees its process end
// and says how ("was killed by signal 9 (Killed)"), which a closed connection or a peer's word
// cannot. Over shared memory that verdict was the only one; over TCP the connection's close,
// or a peer's ending frame, came first and was what every node said.
constexpr std::int64_t local_witness_wait_ns = 1'000'000'000;

// A loss the network reports: a peer's, or a peer's verdict about another node (kept with the
// silence it saw, for the peers this node tells in turn).
void report_loss(node_runtime& nd, int node, const std::string& why, std::uint32_t silent_ms) {
  if (silent_ms == 0 && node != nd.me && nd.on_this_host[static_cast<std::size_t>(node)]) {
    // Asleep on this node's doorbell, which the job's abort rings (any other ring: look again).
    auto& doorbell = nd.control().doorbell;
    const std::int64_t deadline = now_ns() + local_witness_wait_ns;
    for (std::int64_t now = now_ns(); nd.job.header().abort.load() == shm::not_aborted && now < deadline;
         now = now_ns()) {
      const std::uint32_t rung = doorbell.load();
      if (nd.job.header().abort.load() != shm::not_aborted) break;
      futex_wait(&doorbell, rung, deadline - now);
    }
  }
  nd.job.abort(node, why.c_str(), shm::node_lost, silent_ms);
}

// Whether this node heard from `node` after a peer last did, the peer saying that `node` has
// been silent for `silent_ms`. Had `node` stopped, this node's last sign of life from it would
// be at most an idle link's quiet older than the peer's (node_runtime::longest_quiet_ns); one
// more recent than that shows `node` alive, and the peer cut off from it.
bool hears(const node_runtime& nd, int node, std::uint32_t silent_ms) {
  if (nd.heard_at.empty()) return false;
  const std::int64_t at = nd.heard_at[static_cast<std::size_t>(node)].load();
  return at != 0 && now_ns() - at + node_runtime::longest_quiet_ns < std::int64_t{silent_ms} * 1'000'000;
}

// fatal's last words (common/log.hpp): the peers across the network would see only this
// node's connections close, and blame it. They learn the node the job lost, when that is why
// this one ends, or else this node's own message.
void tell_network_peers(const char* message) {
  node_runtime* nd = networked.load();
  if (nd == nullptr) return;
  int lost = nd->me;
  std::uint32_t silent_ms = 0;
  std::string why = message;
  job_loss(*nd, lost, silent_ms, why);
  if (nd->net) {
    nd->net->say_ending(lost, silent_ms, why);
  } else if (tcp::setup_watch* w = connecting.load()) {
    w->say_ending(lost, silent_ms, why);
  } else if (const std::vector<int>* fds = handing_over.load()) {
    const std::vector<std::byte> frame = tcp::ending_frame(lost, silent_ms, why, nd->shm->max_packet());
    for (const int fd : *fds) {
      if (fd >= 0) tcp::say_ending_on(fd, frame);  // the exchange reads it in place of an address
    }
  }
}

// By node, a number for its host (network_hooks::host_of): this host's nodes by the job area,
// the others by their endpoints' addresses. Nodes of one host that listen on different
// addresses count as on hosts of their own: a link's verdict on one of them is then reported
// at once, as it was before host-mates' verdicts were waited for.
std::vector<int> host_numbers(const node_runtime& nd, const std::vector<tcp::endpoint>& endpoints) {
  std::vector<int> host(static_cast<std::size_t>(nd.n));
  std::map<std::uint32_t, int> by_address;
  for (int i = 0; i < nd.n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    host[k] = nd.on_this_host[k] ? nd.me : by_address.try_emplace(endpoints[k].ipv4, i).first->second;
  }
  return host;
}

// Makes the connections to the node's network peers, watching them meanwhile
// (tcp/setup_watch.hpp): a peer that ends is reported, and a loss on this host ends the set-up
// once the peers it can reach have been told.
std::vector<int> connect_watched(node_runtime& nd, const std::vector<bool>& far, const std::vector<tcp::endpoint>& endpoints,
                                 const tcp::listener& l, const tcp::job_secret& secret, std::int64_t timeout_ns) {
  node_runtime* self = &nd;
  tcp::setup_watch watch(
      nd.me, nd.n, nd.shm->max_packet(),
      {[self](int node, const std::string& why, std::uint32_t silent_ms) { report_loss(*self, node, why, silent_ms); },
       [self](int node, std::uint32_t silent_ms) { return hears(*self, node, silent_ms); },
       [self](int& lost, std::uint32_t& silent_ms, std::string& why) { return job_loss(*self, lost, silent_ms, why); },
       [self] { self->check_abort(); }});
  connecting.store(&watch);
  auto fds = tcp::connect_mesh(nd.me, far, endpoints, l, secret, timeout_ns, nd.config.liveness_s, watch);
  nd.check_abort();  // aborted meanwhile: the peers just reached are told why (through the watch)
  connecting.store(nullptr);
  return fds;
}
}  // namespace

void setup_transports(node_runtime& nd) {
  nd.shm = std::make_unique<shm::shm_transport>(nd.job, nd.me);
  nd.transport = nd.shm.get();
  const network forced = forced_network();
  network_setting();  // used only by a job spanning hosts, but checked in every job
  check_network_settings(nd);
  std::vector<bool> far(static_cast<std::size_t>(nd.n));
  bool other_hosts = false, any_far = false;
  for (int i = 0; i < nd.n; ++i) {
    other_hosts = other_hosts || !nd.on_this_host[i];
    far[i] = i != nd.me && (forced != network::none || !nd.on_this_host[i]);  // a node's own messages stay in its ring
    any_far = any_far || far[i];
  }
  if (!any_far) return;
  nd.heard_at = std::vector<std::atomic<std::int64_t>>(static_cast<std::size_t>(nd.n));
  networked.store(&nd);
  set_last_words(tell_network_peers);
  const std::int64_t timeout_ns = std::int64_t{nd.config.connect_timeout_s} * 1'000'000'000;
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
  auto fds = connect_watched(nd, far, endpoints, l, secret, deadline - now_ns());
  node_runtime* self = &nd;
  const network_hooks hooks{[self] { self->shm->ring_doorbell(self->me); },
                            [self] { return serve_arrivals(*self); },
                            [self](int node, const std::string& why, std::uint32_t silent_ms) {
                              report_loss(*self, node, why, silent_ms);
                            },
                            [self](int node, std::uint32_t silent_ms) { return hears(*self, node, silent_ms); },
                            &nd.control().awake, nd.me, [self] { self->check_abort(); },
                            host_numbers(nd, endpoints)};
  if ((forced == network::none ? between_hosts() : forced) == network::ucx) {
    handing_over.store(&fds);
    nd.net = load_ucx(nd, fds, hooks, deadline);
    handing_over.store(nullptr);
    for (const int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  } else {
    nd.net = std::make_unique<tcp::tcp_transport>(std::move(fds), nd.shm->max_packet(), std::move(l), hooks);
  }
  nd.routed = std::make_unique<routed_transport>(*nd.shm, *nd.net, std::move(far));
  // A lingering thread counts as polling without polling; peers on this host see that in
  // the job area and nudge it when their reply is late, but a peer across the network can do
  // neither, and the network's I/O thread stays out of the way of a thread that counts as
  // polling: replies then waited for the progress thread's watch (a TSM litmus test on 2
  // nodes over TCP: 10.1 s lingering, 0.12 s not). So no lingering by default with such
  // peers; it costs a tight ping-pong over TCP on one host 12.0 against 10.2 us a round trip
  // (medians of 5 alternated runs).
  if (const char* v = std::getenv("SQUALL_LINGER_US"); v == nullptr || *v == '\0') nd.config.linger_ns = 0;
  nd.transport = nd.routed.get();
}

void close_transports(node_runtime& nd) {
  set_last_words(nullptr);
  networked.store(nullptr);
  // The wait for the peers' goodbyes ends when they are all in: its limit matters only on a
  // slow or lossy link, where a node that stopped waiting and closed would reset a peer still
  // ending (a goodbye behind TCP's retransmissions). As long as silence is allowed, then.
  if (nd.net) nd.net->shutdown(std::max<std::int64_t>(5, nd.config.liveness_s) * 1'000'000'000);
  if (nd.pmix) nd.pmix->finalize();
}

}  // namespace squall::rt
