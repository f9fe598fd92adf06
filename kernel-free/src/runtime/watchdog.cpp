// SPDX-License-Identifier: BSD-3-Clause
// The watchdog: one thread per node, asleep in poll(2) but for a look every quarter second
// (more often with a short liveness period), that notices what a wait cannot, at no cost to the
// message path:
//   - the launcher dying (mpirun, its daemon, squallrun): the node ends with a message
//     instead of running on as an orphan;
//   - a same-host peer's process ending before finalize, under a PMIx launcher (squallrun
//     watches its children itself, and knows their exit status): through a pidfd;
//   - a same-host peer that has not joined the job (squall::init) SQUALL_LIVENESS_S seconds
//     after this node did: a warning, since this node's init waits for it (it may have
//     ended, or stopped, before its init; under squallrun the launcher sees the former);
//   - a peer that shows no life for SQUALL_LIVENESS_S seconds (stopped, or swapped out):
//     each watchdog bumps its node's heartbeat word in the job area; a peer on another host
//     shows life by any bytes on its TCP link, and idle links carry heartbeat frames.
// A lost or silent peer aborts the job (the job area's abort flag), which every node of this
// host reports and exits on (node_runtime::check_abort). Since the watchdog, not the
// program, keeps the heartbeat, a node computing for long without entering the library is
// alive; only a stopped process is not. A traced process (a debugger) is never reported, and
// a watchdog that was itself held up (the whole job stopped, or starved of a processor)
// starts counting afresh.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/descriptor_failure.hpp"
#include "common/futex.hpp"
#include "common/log.hpp"
#include "common/runtime_thread.hpp"
#include "runtime/node.hpp"

namespace squall::rt {
namespace {

constexpr std::int64_t second_ns = 1'000'000'000;
constexpr std::int64_t max_tick_ns = 250'000'000;

int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// Whether a debugger (or strace) traces process `pid`: its stops are then deliberate.
bool traced(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char line[256];
  bool yes = false;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "TracerPid:", 10) == 0) {
      yes = std::atoi(line + 10) != 0;
      break;
    }
  }
  std::fclose(f);
  return yes;
}

struct peer {
  int node = -1;
  bool local = false;      // on this host: its heartbeat word, its pid
  bool watched = false;    // seen running (local) or connected (TCP), and not yet done
  std::size_t pidfd_slot = 0;  // its pidfd's place in the poll set (0: none)
  std::uint64_t seen = 0;  // its heartbeat, or the count of reads from it
  std::int64_t since = 0;  // when `seen` last changed
  bool said_unjoined = false;  // warned that it has not joined the job
};

class watchdog {
 public:
  watchdog(node_runtime& nd, int stop_fd) : nd_(nd), started_(now_ns()) {
    const std::int64_t liveness_ns = nd.config.liveness_s * second_ns;
    tick_ns_ = liveness_ns > 0 ? std::min(max_tick_ns, liveness_ns / 8) : max_tick_ns;
    fds_.push_back({stop_fd, POLLIN, 0});
    const int launcher_fd = open_pidfd(nd.launcher);
    fds_.push_back({launcher_fd, POLLIN, 0});  // a negative fd is skipped by poll
    for (int i = 0; i < nd.n; ++i) {
      if (i == nd.me) continue;
      const bool local = nd.on_this_host[i];
      if (!local && !(nd.net && nd.net->reaches(i))) continue;
      peer p;
      p.node = i;
      p.local = local;
      peers_.push_back(p);
    }
  }

  void run() {
    std::int64_t last = now_ns(), last_said = last;
    for (;;) {
      const int r = ::poll(fds_.data(), fds_.size(), static_cast<int>(tick_ns_ / 1'000'000));
      if (r < 0 && errno != EINTR) fatal("the watchdog's poll failed: %s", std::strerror(errno));
      if (fds_[0].revents != 0) return;
      nd_.check_abort();
      const std::int64_t now = now_ns();
      // Held up itself: the peers may have been too, and get a fresh period.
      const bool held_up = now - last > 2 * tick_ns_ + max_tick_ns;
      last = now;
      nd_.control().heartbeat.fetch_add(1, std::memory_order_relaxed);
      if (fds_[1].revents != 0 || ::getppid() != nd_.launcher) {
        fatal("the launcher that started this node (pid %d) ended; exiting", static_cast<int>(nd_.launcher));
      }
      for (peer& p : peers_) watch(p, now, held_up);
      if (nd_.net && now - last_said >= nd_.heartbeat_ns.load(std::memory_order_relaxed)) {
        nd_.net->say_alive();
        last_said = now;
      }
    }
  }

 private:
  void watch(peer& p, std::int64_t now, bool held_up) {
    const shm::node_control& c = nd_.job.control(p.node);
    if (p.local && c.state.load() == shm::finalized) {
      stop_watching(p);
      return;
    }
    if (!p.watched) {
      if (p.local && c.state.load() != shm::running) return say_if_unjoined(p, now);
      if (!p.local && !nd_.net->in_use(p.node)) return;
      p.watched = true;
      p.seen = beat(p);
      p.since = now;
      if (p.local && nd_.pmix) open_process(p);
      return;
    }
    if (p.pidfd_slot != 0 && fds_[p.pidfd_slot].revents != 0) lost(p, "its process ended before squall::finalize");
    if (!p.local && !nd_.net->in_use(p.node)) {
      stop_watching(p);  // it said goodbye (or failed, which the transport reported)
      return;
    }
    const std::uint64_t b = beat(p);
    if (b != p.seen && !nd_.heard_at.empty()) nd_.heard_at[static_cast<std::size_t>(p.node)].store(now);
    if (b != p.seen || held_up) {
      p.seen = b;
      p.since = now;
      return;
    }
    const std::int64_t silent_ns = now - p.since;
    // A peer across the network that has sent nothing yet is still making its own
    // connections, which on a lossy network take a while: it has the set-up's time too.
    const int limit_s = nd_.config.liveness_s + (!p.local && b == 0 ? nd_.config.connect_timeout_s : 0);
    if (nd_.config.liveness_s == 0 || silent_ns < limit_s * second_ns) return;
    if (traced(::getpid()) || (p.local && traced(c.pid.load()))) {
      p.since = now;  // a debugger holds one of us: its stops are no failure
      return;
    }
    const auto seconds = static_cast<long long>(silent_ns / second_ns);
    const std::string why = format("has not answered for %lld s (stopped? SQUALL_LIVENESS_S)", seconds);
    nd_.job.abort(p.node, why.c_str(), shm::node_unresponsive,
                  static_cast<std::uint32_t>(std::min<std::int64_t>(silent_ns / 1'000'000, UINT32_MAX)));
    nd_.check_abort();
  }

  // A same-host peer not yet in the job a liveness period after this node joined it: said
  // once, and the wait goes on (a peer may have long work to do before its init).
  void say_if_unjoined(peer& p, std::int64_t now) {
    const std::int64_t limit_ns = nd_.config.liveness_s * second_ns;
    if (p.said_unjoined || limit_ns == 0 || now - started_ < limit_ns) return;
    p.said_unjoined = true;
    warn("node %d has not joined the job %lld s after this node did (has it ended, or stopped, before calling "
         "squall::init?); still waiting for it",
         p.node, static_cast<long long>((now - started_) / second_ns));
  }

  std::uint64_t beat(const peer& p) const {
    return p.local ? nd_.job.control(p.node).heartbeat.load(std::memory_order_relaxed) : nd_.net->frames_heard(p.node);
  }

  // A same-host peer under a PMIx launcher, which (unlike squallrun) tells the others
  // nothing when it dies.
  void open_process(peer& p) {
    const pid_t pid = nd_.job.control(p.node).pid.load();
    const int fd = open_pidfd(pid);
    if (fd < 0 && errno == ESRCH) lost(p, "its process ended before squall::finalize");
    if (fd < 0) {
      warn("cannot watch node %d's process %d (pidfd_open: %s); its death is noticed only as silence",
           p.node, static_cast<int>(pid), std::strerror(errno));
      return;
    }
    p.pidfd_slot = fds_.size();
    fds_.push_back({fd, POLLIN, 0});
  }

  void stop_watching(peer& p) {
    p.watched = false;
    if (p.pidfd_slot != 0) {
      ::close(fds_[p.pidfd_slot].fd);
      fds_[p.pidfd_slot].fd = -1;
      p.pidfd_slot = 0;
    }
  }

  void lost(const peer& p, const char* why) {
    // It may have finalized between our looks.
    if (nd_.job.control(p.node).state.load() == shm::finalized) return;
    nd_.job.abort(p.node, why);
    nd_.check_abort();
  }

  node_runtime& nd_;
  std::int64_t started_;  // when this node joined the job (its watchdog started)
  std::int64_t tick_ns_ = max_tick_ns;
  std::vector<pollfd> fds_;  // the stop eventfd, the launcher's pidfd, peers' pidfds
  std::vector<peer> peers_;
};

}  // namespace

std::int64_t heartbeat_period_ns(int liveness_s) {
  return liveness_s > 0 ? std::min(second_ns, liveness_s * second_ns / 4) : second_ns;
}

void start_watchdog(node_runtime& nd) {
  nd.heartbeat_ns.store(heartbeat_period_ns(nd.config.liveness_s));  // the job's shortest, once init knows it
  nd.watchdog_stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (nd.watchdog_stop_fd < 0) fatal("cannot create the watchdog's eventfd: %s", descriptor_failure(errno).c_str());
  nd.watchdog = start_runtime_thread("squall-watchdog", [&nd] { watchdog(nd, nd.watchdog_stop_fd).run(); });
}

void stop_watchdog(node_runtime& nd) {
  if (!nd.watchdog.joinable()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto w = ::write(nd.watchdog_stop_fd, &one, sizeof one);
  nd.watchdog.join();
  ::close(nd.watchdog_stop_fd);
  nd.watchdog_stop_fd = -1;
}

}  // namespace squall::rt
