// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/setup_watch.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "common/runtime_thread.hpp"
#include "transport/tcp/accepting.hpp"
#include "transport/endings.hpp"
#include "transport/tcp/frames.hpp"

namespace squall::tcp {
namespace {

constexpr int look_ms = 100;                     // how often `aborted` is asked
// An aborted node ends after this without a new connection: long enough for the nodes of a
// host started a moment after the others (a loaded machine) to reach it and be told (with
// 1 s, a dead node 0's host mate had ended before a loaded third host came), and shorter than
// squallrun's grace (SQUALL_GRACE, 3 s), so that the node ends saying why, not killed.
constexpr std::int64_t idle_ns = 2'000'000'000;

void wake(int fd) {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto w = ::write(fd, &one, sizeof one);
}

}  // namespace

setup_watch::setup_watch(int me, int nodes, std::size_t max_body, hooks h)
    : me_(me), nodes_(nodes), max_body_(max_body), hooks_(std::move(h)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) fatal("cannot create the set-up watch's eventfd: %s", descriptor_failure(errno).c_str());
  thread_ = start_runtime_thread("squall-setup", [this] { run(); });
}

setup_watch::~setup_watch() {
  stopping_.store(true);
  wake(wake_fd_);
  thread_.join();
  ::close(wake_fd_);
  answering_.reset();  // refuses the handshakes it has under way
  for (const int fd : answered_) {
    if (fd >= 0) ::close(fd);
  }
}

void setup_watch::made(int node, int fd) {
  {
    std::lock_guard g(mu_);
    if (std::any_of(conns_.begin(), conns_.end(), [&](const connection& c) { return c.node == node; })) return;
    conns_.push_back({node, fd, peer_of(fd)});
    last_made_ = now_ns();
  }
  wake(wake_fd_);  // told at once if the job was aborted
}

void setup_watch::answer_on(const listener& l, const job_secret& secret, const std::vector<bool>& over_tcp) {
  std::lock_guard g(mu_);
  listener_ = &l;
  secret_ = &secret;
  over_tcp_ = over_tcp;
}

int setup_watch::answer_waiting() {
  {
    std::lock_guard g(mu_);
    if (listener_ == nullptr) return -1;
    if (!answering_) {
      answered_.assign(static_cast<std::size_t>(nodes_), -1);
      answering_ = std::make_unique<accepting>(me_, nodes_, over_tcp_, *listener_, *secret_, answered_);
    }
  }
  answering_->step(now_ns());  // what has arrived, without waiting
  for (int peer = 0; peer < nodes_; ++peer) {
    if (answered_[static_cast<std::size_t>(peer)] >= 0) made(peer, answered_[static_cast<std::size_t>(peer)]);
  }
  return listener_->fd();
}

std::vector<std::byte> ending_frame(int lost_node, std::uint32_t silent_ms, const std::string& why, std::size_t max_body) {
  const std::vector<std::byte> body = ending_body(lost_node, silent_ms, why, max_body);
  const frame_header h{static_cast<std::uint32_t>(body.size()), kind_ending};
  std::vector<std::byte> frame(sizeof h + body.size());
  std::memcpy(frame.data(), &h, sizeof h);
  std::memcpy(frame.data() + sizeof h, body.data(), body.size());
  return frame;
}

void say_ending_on(int fd, std::span<const std::byte> frame) {
  [[maybe_unused]] auto s = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_WR);
}

void setup_watch::say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why) {
  const std::vector<std::byte> frame = ending_frame(lost_node, silent_ms, why, max_body_);
  std::lock_guard g(mu_);
  for (connection& c : conns_) {
    if (c.told || c.closed) continue;
    c.told = true;
    say_ending_on(c.fd, frame);
  }
}

void setup_watch::run() {
  std::int64_t aborted_at = 0;
  int listening = -1;  // once aborted, the listener (answer_on)
  std::vector<pollfd> set;
  std::vector<std::size_t> of;  // the connection of each pollfd after the wake and listener
  while (!stopping_.load()) {
    set.assign(1, {wake_fd_, POLLIN, 0});
    if (listening >= 0) set.push_back({listening, POLLIN, 0});
    of.clear();
    {
      std::lock_guard g(mu_);
      for (std::size_t i = 0; i < conns_.size(); ++i) {
        if (conns_[i].closed) continue;
        set.push_back({conns_[i].fd, POLLRDHUP, 0});  // not POLLIN: what a live peer sends is the transport's
        of.push_back(i);
      }
    }
    if (::poll(set.data(), set.size(), look_ms) < 0 && errno != EINTR) {
      fatal("poll failed while watching the TCP connections being made: %s", std::strerror(errno));
    }
    if (set[0].revents != 0) {
      std::uint64_t v;
      [[maybe_unused]] auto r = ::read(wake_fd_, &v, sizeof v);
    }
    if (stopping_.load()) return;
    const std::size_t first = set.size() - of.size();  // the first connection's pollfd
    for (std::size_t k = first; k < set.size(); ++k) {
      if (set[k].revents == 0) continue;
      connection c;
      {
        std::lock_guard g(mu_);
        conns_[of[k - first]].closed = true;
        c = conns_[of[k - first]];
      }
      read_closed(c);
    }
    int lost = -1;
    std::uint32_t silent_ms = 0;
    std::string why;
    if (!hooks_.aborted(lost, silent_ms, why)) continue;
    const std::int64_t now = now_ns();
    if (aborted_at == 0) aborted_at = now;
    listening = answer_waiting();
    say_ending(lost, silent_ms, why);
    std::int64_t last_made;
    {
      std::lock_guard g(mu_);
      last_made = last_made_;
    }
    if (now - std::max(aborted_at, last_made) >= idle_ns) hooks_.end();
  }
}

void setup_watch::read_closed(const connection& c) {
  std::vector<std::byte> in(2 * (sizeof(frame_header) + max_body_));
  std::size_t len = 0;
  std::string why = "was closed before the node finished";
  for (bool more = true; more;) {
    const ssize_t r = ::recv(c.fd, in.data() + len, in.size() - len, MSG_DONTWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) why = std::string("failed: ") + std::strerror(errno);
      break;
    }
    len += static_cast<std::size_t>(r);
    std::size_t at = 0;
    frame_header h;
    std::span<const std::byte> body;
    for (frame_result f; more && (f = read_frame(std::span(in.data() + at, len - at), max_body_, h, body)) !=
                                     frame_result::incomplete;) {
      if (f == frame_result::corrupt) {
        more = false;
      } else if (h.kind == kind_ending) {
        report_ending(me_, c.node, nodes_, body, hooks_.lost, hooks_.hears);
        return;
      } else {
        at += sizeof h + h.length;  // the node had begun to run: what it sent meanwhile is moot
      }
    }
    std::memmove(in.data(), in.data() + at, len - at);
    len -= at;
  }
  const std::string from = c.peer.ipv4 == 0 && c.peer.port == 0 ? "" : " from " + to_string(c.peer);
  hooks_.lost(c.node, "its TCP connection" + from + " " + why, 0);
}

}  // namespace squall::tcp
