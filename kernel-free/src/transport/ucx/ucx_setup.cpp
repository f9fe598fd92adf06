// SPDX-License-Identifier: BSD-3-Clause
// The UCX transport's set-up (UCX's context and worker, addresses and tokens exchanged over
// the job's authenticated connections), liveness and orderly end.
#include "transport/ucx/ucx_transport.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "common/runtime_thread.hpp"
#include "transport/endings.hpp"
#include "transport/tcp/frames.hpp"
#include "transport/tcp/socket_io.hpp"
#include "transport/ucx/ucx_internal.hpp"

namespace squall::ucx {
namespace {

std::uint64_t random_token() {
  std::uint64_t t = 0;
  while (::getrandom(&t, sizeof t, 0) != static_cast<ssize_t>(sizeof t)) {
    if (errno != EINTR) fatal("getrandom for a UCX token failed: %s", std::strerror(errno));
  }
  return t;
}

// The UCX transports an endpoint's lanes use ("tcp/lo", "posix/memory", ...), from UCX's
// own description of the endpoint (UCX 1.13 has no query for them).
std::set<std::string> lanes_of(ucp_ep_h ep) {
  char* text = nullptr;
  std::size_t size = 0;
  FILE* f = ::open_memstream(&text, &size);
  std::set<std::string> out;
  if (f == nullptr) return out;
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  for (const char* p = text; (p = std::strstr(p, "lane[")) != nullptr;) {
    p = std::strchr(p, ':');
    if (p == nullptr) break;
    p = std::strchr(p + 1, ':');  // "lane[0]:  8:posix/memory.0 md[4] ..."
    if (p == nullptr) break;
    const char* end = p + 1;
    while (*end != '\0' && *end != ' ' && *end != '.') ++end;
    out.emplace(p + 1, end);
    p = end;
  }
  std::free(text);
  return out;
}

// Whether UCX_TLS lets UCX use its TCP transport: unset, "all", a list naming "tcp", or a
// list of exclusions ("^...") that leaves it in. Entries may carry a suffix (":aux").
bool tcp_lane_allowed(const char* tls) {
  if (tls == nullptr || *tls == '\0') return true;
  std::string_view list(tls);
  const bool excluding = list.front() == '^';
  if (excluding) list.remove_prefix(1);
  bool named = false;
  while (!list.empty()) {
    const std::string_view entry = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), entry.size() + 1));
    const std::string_view name = entry.substr(0, entry.find(':'));
    named = named || name == "tcp" || (!excluding && name == "all");
  }
  return excluding != named;
}

}  // namespace

namespace {

ucs_status_t on_am(void* arg, const void* header, std::size_t header_length, void* data, std::size_t length,
                   const ucp_am_recv_param_t* param) {
  static_cast<ucx_transport*>(arg)->on_message(header, header_length, data, length, param);
  return UCS_OK;
}

void on_ep_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
  auto* p = static_cast<ucx_transport::peer*>(arg);
  p->owner->on_peer_error(*p, status);
}

}  // namespace

ucx_transport::ucx_transport(int me, const std::vector<int>& sockets, const std::vector<bool>& same_host,
                             std::size_t max_packet, hooks h, std::int64_t deadline_ns)
    : me_(me), max_packet_(max_packet), hooks_(std::move(h)), failed_link_(hooks_.host_of) {
  // A vanished host is noticed within seconds by the kernel's TCP keepalive, as by Squall's
  // TCP transport (UCX's default waits 10 s before the first probe), unless the user set
  // these. In the environment, since UCX reads its transports' settings there
  // (ucp_config_modify takes only its own); before any thread of this node that could read
  // it runs. UCX's own keepalive is off (UCX_KEEPALIVE_INTERVAL=inf): it needs the peer's worker
  // to answer, and took peers that were only slow for lost ones ("Endpoint timeout": at a 2 s
  // interval on one host, and at its default under ThreadSanitizer across simulated hosts);
  // Squall's watchdog watches the peers' traffic and heartbeats instead (SQUALL_LIVENESS_S).
  // The TCP settings only where UCX_TLS lets UCX use TCP: otherwise UCX warns at start that
  // they are unused ("unused env variables: UCX_TCP_KEEPIDLE,..."), of variables the user
  // never set.
  const bool tcp = tcp_lane_allowed(std::getenv("UCX_TLS"));
  for (const char* setting :
       {"UCX_TCP_KEEPIDLE=2s", "UCX_TCP_KEEPINTVL=1s", "UCX_TCP_KEEPCNT=3", "UCX_KEEPALIVE_INTERVAL=inf"}) {
    const std::string s(setting), name = s.substr(0, s.find('='));
    if (!tcp && name.starts_with("UCX_TCP_")) continue;
    ::setenv(name.c_str(), s.substr(name.size() + 1).c_str(), 0);
  }
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "reading its configuration (UCX_* variables)");
  // The worker's lock a mutex, not UCX's default spinlock, unless the user chose: the I/O
  // thread shares its processor with the program thread (SQUALL_BIND), and spun on the lock
  // that thread held while preempted, a scheduler slice at a time (perf: 43% of the I/O
  // thread's samples in pthread_spin_lock, runs of 1-4 ms while the program waited).
  if (std::getenv("UCX_USE_MT_MUTEX") == nullptr) check(ucp_config_modify(config, "USE_MT_MUTEX", "y"), "ucp_config_modify");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP | UCP_FEATURE_RMA;  // RMA: ucx_reads.cpp
  const ucs_status_t init = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(init, "ucp_init");
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  check(ucp_worker_create(context_, &wp, &worker_), "ucp_worker_create");
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE | UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  check(ucp_worker_query(worker_, &attr), "ucp_worker_query");
  max_header_ = attr.max_am_header;
  if (attr.thread_mode != UCS_THREAD_MODE_MULTI) {
    fatal("UCX: this UCX library cannot serve several threads (built without multi-thread support)");
  }
  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                  UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = am_id;
  hp.cb = on_am;
  hp.arg = this;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  check(ucp_worker_set_am_recv_handler(worker_, &hp), "ucp_worker_set_am_recv_handler");
  check(ucp_worker_get_efd(worker_, &worker_fd_), "ucp_worker_get_efd");

  exchange_addresses(sockets, same_host, deadline_ns);

  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) {
    fatal("cannot create the UCX transport's epoll: %s", descriptor_failure(errno).c_str());
  }
  for (int fd : {worker_fd_, stop_fd_, parking_.kick_fd()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fatal("epoll_ctl failed: %s", std::strerror(errno));
  }
  io_ = start_runtime_thread("squall-ucx-io", [this] { io_loop(); });
}

// Over each authenticated socket: our worker address and the token the peer must use, then
// the peer's; an endpoint to each peer from its address. Each goes as a frame (tcp/frames.hpp,
// kind_address): a peer that ended during set-up sent an ending frame instead (its set-up
// watch, or the stand-in of a node lost before it, launcher/stand_in.hpp), which names the
// node the job lost.
void ucx_transport::exchange_addresses(const std::vector<int>& sockets, const std::vector<bool>& same_host,
                                       std::int64_t deadline_ns) {
  ucp_address_t* address = nullptr;
  std::size_t address_length = 0;
  check(ucp_worker_get_address(worker_, &address, &address_length), "ucp_worker_get_address");
  peers_.resize(sockets.size());
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    auto p = std::make_unique<peer>();
    p->owner = this;
    p->node = static_cast<int>(i);
    p->token_in = random_token();
    peers_[i] = std::move(p);
  }
  auto fail = [&](std::size_t i, const char* what, tcp::io_result r) {
    if (hooks_.end_if_aborted) hooks_.end_if_aborted();  // the job lost a node meanwhile: that is why
    fatal("exchanging UCX addresses with node %zu: %s %s", i, what, tcp::describe(r).c_str());
  };
  // A send that failed is reported after the peer's frame is read: it may say why.
  std::vector<tcp::io_result> sent(sockets.size(), tcp::io_result::done);
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    const tcp::frame_header h{static_cast<std::uint32_t>(address_length + sizeof(std::uint64_t)), tcp::kind_address};
    std::vector<std::byte> out(sizeof h + h.length);
    std::memcpy(out.data(), &h, sizeof h);
    std::memcpy(out.data() + sizeof h, address, address_length);
    std::memcpy(out.data() + sizeof h + address_length, &peers_[i]->token_in, sizeof(std::uint64_t));
    sent[i] = tcp::write_full(sockets[i], out.data(), out.size(), deadline_ns);
  }
  ucp_worker_release_address(worker_, address);
  // Every peer's frame before any endpoint: an endpoint to a peer that ended meanwhile fails
  // (UCX over TCP connects at once) before a later peer's frame could say why.
  std::vector<std::vector<std::byte>> addresses(sockets.size());
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    tcp::frame_header h{};
    if (auto r = tcp::read_full(sockets[i], &h, sizeof h, deadline_ns); r != tcp::io_result::done) {
      sent[i] != tcp::io_result::done ? fail(i, "sending", sent[i]) : fail(i, "receiving", r);
    }
    const bool ending = h.kind == tcp::kind_ending && h.length <= max_packet_;
    const bool address_frame = h.kind == tcp::kind_address && h.length > sizeof(std::uint64_t) &&
                               h.length <= max_address_bytes + sizeof(std::uint64_t);
    if (!ending && !address_frame) {
      fatal("node %zu sent no UCX address (a frame of kind %u, %u bytes)", i, h.kind, h.length);
    }
    std::vector<std::byte>& body = addresses[i];
    body.resize(h.length);
    if (auto r = tcp::read_full(sockets[i], body.data(), body.size(), deadline_ns); r != tcp::io_result::done) {
      fail(i, "receiving", r);
    }
    if (ending) {
      report_ending(me_, static_cast<int>(i), static_cast<int>(sockets.size()), body, hooks_.lost, hooks_.hears);
      if (hooks_.end_if_aborted) hooks_.end_if_aborted();
      fatal("node %zu ended during set-up", i);  // not reached: the report aborts the job
    }
    if (sent[i] != tcp::io_result::done) fail(i, "sending", sent[i]);
  }
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    peer& p = *peers_[i];
    const std::vector<std::byte>& body = addresses[i];
    std::memcpy(&p.token_out, body.data() + body.size() - sizeof p.token_out, sizeof p.token_out);
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t*>(body.data());
    ep.err_mode = same_host[i] ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = on_ep_error;
    ep.err_handler.arg = &p;
    check(ucp_ep_create(worker_, &ep, &p.ep), "ucp_ep_create");
    count(peers_reached);
  }
  std::set<std::string> lanes;
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] >= 0) {
      for (const std::string& l : lanes_of(peers_[i]->ep)) lanes.insert(l);
    }
  }
  description_ = "ucx";
  const char* sep = ": ";
  for (const std::string& l : lanes) {
    description_ += sep + l;
    sep = ", ";
  }
}

ucx_transport::~ucx_transport() {
  stop_io_thread();
  for (auto& p : peers_) {
    if (!p || p->ep == nullptr) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t r = ucp_ep_close_nbx(p->ep, &prm);
    while (r != nullptr && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS) {
      ucp_worker_progress(worker_);
    }
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) ucp_request_free(r);
  }
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}


std::uint64_t ucx_transport::frames_heard(int node) const { return peers_[node]->heard.load(std::memory_order_relaxed); }

bool ucx_transport::in_use(int node) const {
  const peer& p = *peers_[node];
  return !p.said_goodbye.load() && !p.ended.load();
}

// The watchdog's thread; never once shutdown began, which closes the endpoints under it.
void ucx_transport::say_alive() {
  std::lock_guard g(alive_mu_);
  if (closing_.load()) return;
  for (auto& p : peers_) {
    if (!p) continue;
    const std::uint64_t out = p->frames_out.load(std::memory_order_relaxed);
    if (out == p->frames_out_seen) send_frame(*p, kind_heartbeat, {}, {}, 0, nullptr);
    p->frames_out_seen = p->frames_out.load(std::memory_order_relaxed);
  }
}

void ucx_transport::drain_sends(std::int64_t deadline) {
  for (auto& p : peers_) {
    while (p && !p->ended.load() && p->bytes_in_flight.load() != 0 && now_ns() < deadline) {
      if (!progress_once()) ::usleep(100);
    }
  }
}

// fatal's last words, from any thread: an ending message to every peer still there. UCX
// completes so small a send at once, or the worker is progressed here for a moment (unless
// another thread progresses it, which may be this one, ending from a callback). Not once
// shutdown began: it closes the endpoints, and every node passed finalize's barrier.
void ucx_transport::say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) {
  const std::int64_t deadline = now_ns() + 100'000'000;
  std::unique_lock g(alive_mu_, std::defer_lock);  // the watchdog's thread may be the one ending
  while (!g.try_lock()) {
    if (now_ns() >= deadline) return;
    ::usleep(100);
  }
  if (closing_.load()) return;
  const std::vector<std::byte> body = ending_body(lost_node, silent_ms, why, max_packet_);
  for (auto& p : peers_) {
    if (p) send_frame(*p, kind_ending, {}, body, body.size(), nullptr);
  }
  drain_sends(deadline);
}

void ucx_transport::shutdown(std::int64_t timeout_ns) {
  {
    std::lock_guard g(alive_mu_);  // no heartbeat is being sent, and none will be
    closing_.store(true);
  }
  for (auto& p : peers_) {
    if (p) send_frame(*p, kind_goodbye, {}, {}, 0, nullptr);
  }
  const std::int64_t deadline = now_ns() + timeout_ns;
  for (auto& p : peers_) {
    while (p && !p->said_goodbye.load() && !p->ended.load() && now_ns() < deadline) {
      if (!progress_once()) ::usleep(100);
    }
  }
  drain_sends(deadline);  // our goodbye, and everything before it, before the endpoints close
  stopping_.store(true);  // from here a peer's endpoint closing is no loss
  for (auto& p : peers_) {
    if (!p || p->ep == nullptr) continue;
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    prm.flags = UCP_EP_CLOSE_FLAG_FORCE;  // the goodbyes are through: nothing left to flush
    const ucs_status_ptr_t r = ucp_ep_close_nbx(p->ep, &prm);
    while (r != nullptr && !UCS_PTR_IS_ERR(r) && ucp_request_check_status(r) == UCS_INPROGRESS && now_ns() < deadline) {
      std::lock_guard g(progress_mu_);
      ucp_worker_progress(worker_);
    }
    if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
      if (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_request_cancel(worker_, r);
      ucp_request_free(r);
    }
    p->ep = nullptr;
  }
  stop_io_thread();
}


}  // namespace squall::ucx
