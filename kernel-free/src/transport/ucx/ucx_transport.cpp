// SPDX-License-Identifier: BSD-3-Clause
#include "transport/ucx/ucx_transport.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <set>

#include "common/futex.hpp"
#include "common/log.hpp"
#include "stats/counters.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::ucx {

// The header of every UCX message (a type of namespace scope: send_state holds one).
struct wire_header {
  std::uint32_t from;
  std::uint32_t kind;
  std::uint64_t token;  // the receiver's token for this sender (see ucx_transport.hpp)
};

namespace {

const int messages_sent = stats::counter_slot("ucx.messages_sent");
const int bytes_sent = stats::counter_slot("ucx.bytes_sent");
const int messages_received = stats::counter_slot("ucx.messages_received");
const int bytes_received = stats::counter_slot("ucx.bytes_received");
const int sends_pending = stats::counter_slot("ucx.sends_pending");  // not complete when handed to UCX
const int sends_refused = stats::counter_slot("ucx.sends_refused");  // no room: the engine retries
const int rendezvous_received = stats::counter_slot("ucx.rendezvous_received");
const int messages_refused = stats::counter_slot("ucx.messages_refused");  // without the peer's token
const int io_wakeups = stats::counter_slot("ucx.io_wakeups");
const int peers_reached = stats::counter_slot("ucx.peers");

void count(int slot, std::uint64_t n = 1) { stats::counter_at(slot).fetch_add(n, std::memory_order_relaxed); }

constexpr unsigned am_id = 1;
constexpr std::uint32_t kind_packet = 1, kind_goodbye = 2, kind_heartbeat = 3, kind_large = 4;

// A packet this small is sent from a copy on the stack when UCX can complete it at once.
constexpr std::size_t immediate_bytes = 1024;
constexpr std::size_t max_address_bytes = 1 << 20;

thread_local bool in_io_thread = false;

void check(ucs_status_t s, const char* what) {
  if (s != UCS_OK) fatal("UCX: %s failed: %s", what, ucs_status_string(s));
}

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

}  // namespace

struct ucx_transport::arrival {
  peer* from = nullptr;
  // Not a vector: a large packet's megabytes need no zeroing before its data lands on them.
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0, capacity = 0;
  bool ready = false;  // under from->in_mu: a rendezvous packet is not, until its data came
};

struct ucx_transport::peer {
  ucx_transport* owner = nullptr;
  int node = -1;
  ucp_ep_h ep = nullptr;
  std::uint64_t token_in = 0;   // what this peer puts in its headers to us
  std::uint64_t token_out = 0;  // what we put in ours to it
  std::mutex in_mu;
  std::deque<std::unique_ptr<arrival>> arrived;
  std::atomic<std::size_t> bytes_in_flight{0};
  std::atomic<bool> want_room{false};
  std::atomic<bool> said_goodbye{false}, ended{false};
  std::atomic<std::uint64_t> heard{0};
  std::atomic<std::uint64_t> frames_out{0};
  std::uint64_t frames_out_seen = 0;  // the watchdog thread only
  // The buffer of the last large packet released, kept for the next (under in_mu): a fresh
  // one of megabytes costs page faults on every transfer.
  std::unique_ptr<std::byte[]> spare;
  std::size_t spare_capacity = 0;
};

struct ucx_transport::send_state {
  peer* to = nullptr;
  wire_header header{};
  std::vector<std::byte> bytes;  // the packet, kept until UCX is done with it
  // A large packet: the header with the packet's head behind it; the data stays the
  // caller's, and `done(ctx)` tells it when UCX has read it.
  std::vector<std::byte> large_header;
  const std::byte* large_data = nullptr;
  std::size_t large_bytes = 0;
  void (*done)(void*) = nullptr;
  void* ctx = nullptr;
};

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

ucx_transport::ucx_transport(int me, std::vector<int> sockets, const std::vector<bool>& same_host,
                             std::size_t max_packet, hooks h, std::int64_t deadline_ns)
    : me_(me), max_packet_(max_packet), hooks_(std::move(h)) {
  // A vanished host is noticed within seconds by the kernel's TCP keepalive, as by Squall's
  // TCP transport (UCX's default waits 10 s before the first probe), unless the user set
  // these. In the environment, since UCX reads its transports' settings there
  // (ucp_config_modify takes only its own); before any thread of this node that could read
  // it runs. (UCX's own keepalive, UCX_KEEPALIVE_INTERVAL, needs the peer's worker to answer:
  // at 2 s it took a peer busy computing for a lost one.)
  for (const char* setting : {"UCX_TCP_KEEPIDLE=2s", "UCX_TCP_KEEPINTVL=1s", "UCX_TCP_KEEPCNT=3"}) {
    const std::string s(setting), name = s.substr(0, s.find('='));
    ::setenv(name.c_str(), s.substr(name.size() + 1).c_str(), 0);
  }
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "reading its configuration (UCX_* variables)");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
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

  exchange_addresses(me, sockets, same_host, deadline_ns);

  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  kick_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0 || kick_fd_ < 0) {
    fatal("cannot create the UCX transport's epoll: %s", std::strerror(errno));
  }
  for (int fd : {worker_fd_, stop_fd_, kick_fd_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) fatal("epoll_ctl failed: %s", std::strerror(errno));
  }
  io_ = std::thread([this] { io_loop(); });
}

// Over each authenticated socket: our worker address and the token the peer must use, then
// the peer's; an endpoint to each peer from its address.
void ucx_transport::exchange_addresses(int me, std::vector<int>& sockets, const std::vector<bool>& same_host,
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
    fatal("node %d: exchanging UCX addresses with node %zu: %s %s", me, i, what, tcp::describe(r));
  };
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    const auto length = static_cast<std::uint32_t>(address_length);
    std::vector<std::byte> out(sizeof length + address_length + sizeof(std::uint64_t));
    std::memcpy(out.data(), &length, sizeof length);
    std::memcpy(out.data() + sizeof length, address, address_length);
    std::memcpy(out.data() + sizeof length + address_length, &peers_[i]->token_in, sizeof(std::uint64_t));
    if (auto r = tcp::write_full(sockets[i], out.data(), out.size(), deadline_ns); r != tcp::io_result::done) {
      fail(i, "sending", r);
    }
  }
  ucp_worker_release_address(worker_, address);
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    std::uint32_t length = 0;
    if (auto r = tcp::read_full(sockets[i], &length, sizeof length, deadline_ns); r != tcp::io_result::done) {
      fail(i, "receiving", r);
    }
    if (length == 0 || length > max_address_bytes) fatal("node %d: node %zu sent a UCX address of %u bytes", me, i, length);
    std::vector<std::byte> remote(length);
    peer& p = *peers_[i];
    if (auto r = tcp::read_full(sockets[i], remote.data(), length, deadline_ns); r != tcp::io_result::done) {
      fail(i, "receiving", r);
    }
    if (auto r = tcp::read_full(sockets[i], &p.token_out, sizeof p.token_out, deadline_ns); r != tcp::io_result::done) {
      fail(i, "receiving", r);
    }
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.address = reinterpret_cast<const ucp_address_t*>(remote.data());
    ep.err_mode = same_host[i] ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = on_ep_error;
    ep.err_handler.arg = &p;
    check(ucp_ep_create(worker_, &ep, &p.ep), "ucp_ep_create");
    count(peers_reached);
  }
  std::set<std::string> lanes;
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    if (sockets[i] < 0) continue;
    ::close(sockets[i]);
    sockets[i] = -1;
    for (const std::string& l : lanes_of(peers_[i]->ep)) lanes.insert(l);
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
  if (kick_fd_ >= 0) ::close(kick_fd_);
}

bool ucx_transport::send_frame(peer& p, std::uint32_t kind, std::span<const std::byte> head,
                               std::span<const std::byte> body, std::size_t body_size, const body_writer* write) {
  if (p.ended.load(std::memory_order_relaxed)) return true;  // the peer is gone and the job is ending: drop
  const std::size_t limit = 4 * max_packet_;
  if (kind == kind_packet && p.bytes_in_flight.load(std::memory_order_relaxed) > limit) {
    p.want_room.store(true, std::memory_order_seq_cst);
    // Completions may have drained it meanwhile: look again, or nobody would wake us.
    if (p.bytes_in_flight.load(std::memory_order_seq_cst) > limit) {
      count(sends_refused);
      return false;
    }
  }
  const std::size_t total = head.size() + body_size;
  const wire_header h{static_cast<std::uint32_t>(me_), kind, p.token_out};
  p.frames_out.fetch_add(1, std::memory_order_relaxed);
  count(messages_sent);
  count(bytes_sent, total);
  auto fill = [&](std::byte* out) {
    if (!head.empty()) std::memcpy(out, head.data(), head.size());
    if (write != nullptr) {
      (*write)(out + head.size());
    } else if (!body.empty()) {
      std::memcpy(out + head.size(), body.data(), body.size());
    }
  };
  std::unique_ptr<send_state> s;
  if (total <= immediate_bytes) {
    alignas(8) std::byte copy[immediate_bytes];
    fill(copy);
    ucp_request_param_t prm{};
    prm.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    const ucs_status_ptr_t r = ucp_am_send_nbx(p.ep, am_id, &h, sizeof h, copy, total, &prm);
    if (r == nullptr) return true;
    if (!UCS_PTR_IS_ERR(r)) fatal("UCX: a send forced to complete at once returned a request");
    // Whatever the reason UCX could not finish it at once, the send below retries it from a
    // copy that lives until UCX is done, and reports a failure there.
    s = std::make_unique<send_state>();
    s->bytes.assign(copy, copy + total);
  } else {
    s = std::make_unique<send_state>();
    s->bytes.resize(total);
    fill(s->bytes.data());
  }
  s->to = &p;
  s->header = h;
  // Eager, whatever the size: a packet is at most max_packet bytes, and a rendezvous costs
  // the receiver a round trip that waits for this node's CPU (a 64 KiB-block stress test on
  // 4 nodes over UCX's TCP: 7.9 s with rendezvous, 0.54 s eager).
  start_send(std::move(s), UCP_AM_SEND_FLAG_EAGER);
  return true;
}

// Hands UCX a send whose header and data `s` holds (or whose data the caller keeps, for a
// large packet); on_send_done ends it, at once or from UCX's completion.
void ucx_transport::start_send(std::unique_ptr<send_state> s, std::uint32_t flags) {
  peer& p = *s->to;
  const bool large = s->done != nullptr;
  const void* header = large ? static_cast<const void*>(s->large_header.data()) : &s->header;
  const std::size_t header_length = large ? s->large_header.size() : sizeof s->header;
  const void* data = large ? s->large_data : s->bytes.data();
  const std::size_t length = large ? s->large_bytes : s->bytes.size();
  p.bytes_in_flight.fetch_add(length, std::memory_order_relaxed);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  prm.flags = flags;
  prm.cb.send = [](void* request, ucs_status_t, void* user_data) {
    auto* state = static_cast<send_state*>(user_data);
    state->to->owner->on_send_done(state);
    ucp_request_free(request);
  };
  prm.user_data = s.get();
  send_state* raw = s.release();
  const ucs_status_ptr_t r = ucp_am_send_nbx(p.ep, am_id, header, header_length, data, length, &prm);
  if (r == nullptr) {
    on_send_done(raw);
  } else if (UCS_PTR_IS_ERR(r)) {
    const ucs_status_t failed = UCS_PTR_STATUS(r);
    on_send_done(raw);
    on_peer_error(p, failed);  // nothing is dropped unsaid: the job ends naming the peer
  } else {
    count(sends_pending);
  }
}

void ucx_transport::on_send_done(send_state* s) {
  peer& p = *s->to;
  const std::size_t size = s->bytes.size() + s->large_bytes;
  const std::size_t left = p.bytes_in_flight.fetch_sub(size, std::memory_order_seq_cst) - size;
  if (s->done != nullptr) s->done(s->ctx);
  delete s;
  if (left <= 4 * max_packet_ && p.want_room.exchange(false, std::memory_order_seq_cst)) hooks_.wake();
}

bool ucx_transport::try_send_large(int dest, std::span<const std::byte> head, std::span<const std::byte> data,
                                   void (*done)(void*), void* ctx) {
  peer& p = *peers_[dest];
  if (p.ended.load(std::memory_order_relaxed)) {  // the peer is gone and the job is ending: drop
    done(ctx);
    return true;
  }
  if (p.bytes_in_flight.load(std::memory_order_relaxed) > 4 * max_packet_) {
    p.want_room.store(true, std::memory_order_seq_cst);
    if (p.bytes_in_flight.load(std::memory_order_seq_cst) > 4 * max_packet_) {
      count(sends_refused);
      return false;
    }
  }
  auto s = std::make_unique<send_state>();
  s->to = &p;
  s->large_header.resize(sizeof(wire_header) + head.size());
  const wire_header h{static_cast<std::uint32_t>(me_), kind_large, p.token_out};
  std::memcpy(s->large_header.data(), &h, sizeof h);
  std::memcpy(s->large_header.data() + sizeof h, head.data(), head.size());
  s->large_data = data.data();
  s->large_bytes = data.size();
  s->done = done;
  s->ctx = ctx;
  p.frames_out.fetch_add(1, std::memory_order_relaxed);
  count(messages_sent);
  count(bytes_sent, head.size() + data.size());
  start_send(std::move(s), UCP_AM_SEND_FLAG_RNDV);  // zero-copy where the fabric allows, whatever the size
  return true;
}

bool ucx_transport::try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) {
  return send_frame(*peers_[dest], kind_packet, head, body, body.size(), nullptr);
}

bool ucx_transport::try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                                     body_writer write) {
  return send_frame(*peers_[dest], kind_packet, head, {}, body_size, &write);
}

void ucx_transport::on_message(const void* header, std::size_t header_length, void* data, std::size_t length,
                               const ucp_am_recv_param_t* param) {
  const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  wire_header h{};
  peer* p = nullptr;
  if (header_length >= sizeof h) {
    std::memcpy(&h, header, sizeof h);
    if (h.from < peers_.size() && peers_[h.from] != nullptr && peers_[h.from]->token_in == h.token) {
      p = peers_[h.from].get();
    }
  }
  const std::size_t head_length = header_length - (p != nullptr ? sizeof h : 0);
  const bool well_formed = h.kind == kind_large ? head_length > 0 && head_length <= large_head_bytes
                                                : head_length == 0 && h.kind >= kind_packet && h.kind <= kind_heartbeat &&
                                                      (h.kind != kind_packet || length <= max_packet_);
  if (p == nullptr || !well_formed) {
    // Not from a peer that proved the job's secret (or not a frame of ours): never read.
    if (stats::counter_at(messages_refused).fetch_add(1, std::memory_order_relaxed) < 3) {
      warn("refused a UCX message (%zu bytes) that carried no valid token of this job's peers", length);
    }
    if (rendezvous) ucp_am_data_release(worker_, data);
    return;
  }
  p->heard.fetch_add(1, std::memory_order_relaxed);
  count(messages_received);
  count(bytes_received, length);
  if (h.kind == kind_goodbye) {
    p->said_goodbye.store(true);
    return;
  }
  if (h.kind == kind_heartbeat) return;
  auto a = std::make_unique<arrival>();
  a->from = p;
  arrival* raw = a.get();
  a->size = head_length + length;
  if (h.kind == kind_large) {
    std::lock_guard g(p->in_mu);
    if (p->spare_capacity >= a->size) {
      a->bytes = std::move(p->spare);
      a->capacity = p->spare_capacity;
      p->spare_capacity = 0;
    }
  }
  if (a->bytes == nullptr) {
    a->bytes.reset(new std::byte[a->size == 0 ? 1 : a->size]);
    a->capacity = a->size;
  }
  // A large packet's head came in the header: the packet is that head, then the data.
  if (head_length != 0) std::memcpy(a->bytes.get(), static_cast<const std::byte*>(header) + sizeof h, head_length);
  if (!rendezvous) {
    if (length != 0) std::memcpy(a->bytes.get() + head_length, data, length);
    a->ready = true;
    {
      std::lock_guard g(p->in_mu);
      p->arrived.push_back(std::move(a));
    }
    queued_.fetch_add(1, std::memory_order_seq_cst);
    if (in_io_thread) arrived_here_ = true;
    return;
  }
  // Rendezvous: the packet keeps its place in the order now, and is ready once its data came.
  count(rendezvous_received);
  incomplete_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard g(p->in_mu);
    p->arrived.push_back(std::move(a));
  }
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  prm.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user_data) {
    auto* got = static_cast<arrival*>(user_data);
    if (status != UCS_OK) fatal("UCX: receiving a rendezvous message from node %d failed: %s", got->from->node,
                                ucs_status_string(status));
    got->from->owner->on_arrival_complete(*got->from);
    ucp_request_free(request);
  };
  prm.user_data = raw;
  const ucs_status_ptr_t r = ucp_am_recv_data_nbx(worker_, data, raw->bytes.get() + head_length, length, &prm);
  if (UCS_PTR_IS_ERR(r)) {
    fatal("UCX: receiving a rendezvous message from node %d failed: %s", p->node, ucs_status_string(UCS_PTR_STATUS(r)));
  }
  if (r == nullptr) on_arrival_complete(*p);
}

// A rendezvous packet's data arrived: the oldest one not ready is it (UCX completes them in
// the order they were started on one endpoint), so mark that one.
void ucx_transport::on_arrival_complete(peer& p) {
  {
    std::lock_guard g(p.in_mu);
    for (auto& a : p.arrived) {
      if (!a->ready) {
        a->ready = true;
        break;
      }
    }
  }
  incomplete_.fetch_sub(1, std::memory_order_relaxed);
  queued_.fetch_add(1, std::memory_order_seq_cst);
  if (in_io_thread) arrived_here_ = true;
}

std::span<const std::byte> ucx_transport::peek(int src) {
  peer* p = peers_[src].get();
  if (p == nullptr) return {};
  std::lock_guard g(p->in_mu);
  if (p->arrived.empty() || !p->arrived.front()->ready) return {};
  const arrival& a = *p->arrived.front();
  return {a.bytes.get(), a.size};  // stays put while callbacks append behind it
}

void ucx_transport::release(int src) {
  peer& p = *peers_[src];
  std::unique_ptr<arrival> done;
  {
    std::lock_guard g(p.in_mu);
    done = std::move(p.arrived.front());
    p.arrived.pop_front();
    if (done->capacity > max_packet_ && done->capacity > p.spare_capacity) {
      p.spare = std::move(done->bytes);
      p.spare_capacity = done->capacity;
    }
  }
  queued_.fetch_sub(1, std::memory_order_relaxed);
}

bool ucx_transport::progress_once() {
  std::unique_lock l(progress_mu_, std::try_to_lock);
  return l.owns_lock() && ucp_worker_progress(worker_) != 0;
}

bool ucx_transport::any_incoming() {
  // A packet behind a rendezvous one still coming is counted but cannot be taken yet: then
  // the worker must progress for the data to come.
  if (queued_.load(std::memory_order_seq_cst) != 0 && incomplete_.load(std::memory_order_relaxed) == 0) return true;
  progress_once();
  return queued_.load(std::memory_order_seq_cst) != 0;
}

// The I/O thread must watch now. Parked, it is rung. In epoll_wait, it is kicked out to arm
// the worker again: a thread of the node may have progressed the worker since it armed, and
// UCX then signals nothing more until it is armed again (unlike a socket, which stays
// readable; without the kick a reply over UCX's shared memory waited for the 100 ms timeout).
void ucx_transport::node_sleeps() {
  if (io_in_epoll_.load(std::memory_order_seq_cst)) {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(kick_fd_, &one, sizeof one);
    return;
  }
  parking_.wake_if_parked();
}

void ucx_transport::io_loop() {
  in_io_thread = true;
  constexpr std::int64_t parked_ns = 10'000'000;
  constexpr int epoll_ms = 100;
  epoll_event events[3];
  while (!stopping_.load()) {
    // A thread of the node that polls progresses the worker itself: stay out of its way.
    if (parking_.park_while_polled(*hooks_.polling, stopping_, parked_ns)) continue;
    ucs_status_t armed;
    {
      std::lock_guard g(progress_mu_);
      arrived_here_ = false;
      while (ucp_worker_progress(worker_) != 0) {
      }
      armed = ucp_worker_arm(worker_);
    }
    if (arrived_here_) hooks_.wake();  // packets this thread took in: the node must run them
    if (armed == UCS_ERR_BUSY) continue;  // more arrived meanwhile
    check(armed, "ucp_worker_arm");
    io_in_epoll_.store(true, std::memory_order_seq_cst);
    // A thread that went to sleep between our look at `polling` and here found us neither
    // parked nor in epoll_wait: look again.
    const int k = hooks_.polling->load(std::memory_order_seq_cst) != 0 ? 0 : ::epoll_wait(epoll_fd_, events, 3, epoll_ms);
    io_in_epoll_.store(false, std::memory_order_seq_cst);
    if (k < 0 && errno != EINTR) fatal("epoll_wait failed in the UCX transport: %s", std::strerror(errno));
    if (k > 0) count(io_wakeups);
    for (int i = 0; i < k; ++i) {
      if (events[i].data.fd == kick_fd_) {
        std::uint64_t drained;
        [[maybe_unused]] auto r = ::read(kick_fd_, &drained, sizeof drained);
      }
    }
  }
}

void ucx_transport::stop_io_thread() {
  if (!io_.joinable()) return;
  stopping_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(stop_fd_, &one, sizeof one);
  parking_.wake();
  io_.join();
}

void ucx_transport::on_peer_error(peer& p, ucs_status_t status) {
  if (p.ended.exchange(true)) return;
  // Once this node is in shutdown every node has passed finalize's barrier: a peer that
  // closes (or dies) now takes nothing from anyone. Waiting for its goodbye instead is not
  // enough: a peer that had ours, and closed, may reset the link before its goodbye was read
  // here ("Endpoint timeout" at the end of a ping-pong, now and then).
  if (p.said_goodbye.load() || closing_.load()) return;
  hooks_.lost(p.node, std::string("its UCX endpoint failed: ") + ucs_status_string(status));
}

std::uint64_t ucx_transport::frames_heard(int node) const { return peers_[node]->heard.load(std::memory_order_relaxed); }

bool ucx_transport::in_use(int node) const {
  const peer& p = *peers_[node];
  return !p.said_goodbye.load() && !p.ended.load();
}

void ucx_transport::say_alive() {
  for (auto& p : peers_) {
    if (!p) continue;
    const std::uint64_t out = p->frames_out.load(std::memory_order_relaxed);
    if (out == p->frames_out_seen) send_frame(*p, kind_heartbeat, {}, {}, 0, nullptr);
    p->frames_out_seen = p->frames_out.load(std::memory_order_relaxed);
  }
}

void ucx_transport::shutdown(std::int64_t timeout_ns) {
  closing_.store(true);
  for (auto& p : peers_) {
    if (p) send_frame(*p, kind_goodbye, {}, {}, 0, nullptr);
  }
  const std::int64_t deadline = now_ns() + timeout_ns;
  for (auto& p : peers_) {
    while (p && !p->said_goodbye.load() && !p->ended.load() && now_ns() < deadline) {
      if (!progress_once()) ::usleep(100);
    }
  }
  // Our goodbye, and everything before it, must have left before the endpoints close.
  for (auto& p : peers_) {
    while (p && !p->ended.load() && p->bytes_in_flight.load() != 0 && now_ns() < deadline) {
      if (!progress_once()) ::usleep(100);
    }
  }
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
