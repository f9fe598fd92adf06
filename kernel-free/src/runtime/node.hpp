// SPDX-License-Identifier: BSD-3-Clause
// The state of this node's runtime between init and finalize, and the checks every API
// call makes before touching it.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "am/engine.hpp"
#include "runtime/node_lock.hpp"
#include "stats/forms.hpp"
#include "bootstrap/host_list.hpp"
#include "bootstrap/pmix_bootstrap.hpp"
#include "transport/shm/job_area.hpp"
#include "transport/shm/shm_transport.hpp"
#include "transport/network_transport.hpp"

namespace squall::rt {

struct settings {
  unsigned aggregation = 1;        // SQUALL_AGGREGATION
  std::int64_t wait_spin_ns = 0;   // SQUALL_SPIN_US: spin before sleeping in a wait
  std::int64_t progress_spin_ns = 0;  // SQUALL_PROGRESS_SPIN_US
  bool progress_thread = true;     // SQUALL_PROGRESS_THREAD
  std::int64_t linger_ns = 0;      // SQUALL_LINGER_US: a waiter stays counted as polling
  bool oversubscribed = false;     // SQUALL_OVERSUBSCRIBED: processors shared (more nodes on the host than it has)
  bool poke = true;                // SQUALL_POKE: a late waiter pokes computing peers (common/poke.hpp)
  bool lock_bias = true;           // SQUALL_LOCK_BIAS (runtime/node_lock.hpp)
  int quiet_polls = 4;             // SQUALL_QUIET_POLLS (transport/shm/mailbox.hpp)
  int most_quiet_polls = 32;       // SQUALL_QUIET_POLLS_MAX (the same)
  bool mailbox_demote = true;      // SQUALL_MAILBOX_DEMOTE (transport/shm/mailbox.hpp)
  bool bind = false;               // SQUALL_BIND (runtime/binding.hpp)
  stats::forms stats;              // SQUALL_STATS
  int liveness_s = 30;             // SQUALL_LIVENESS_S (runtime/watchdog.cpp); 0: off
  int connect_timeout_s = 30;      // SQUALL_TCP_TIMEOUT: the set-up of a job's network (network_setup.cpp)
  int wait_notice_s = 60;          // SQUALL_WAIT_NOTICE_S: a collective's wait says what it waits for; 0: never
};

struct node_runtime {
  int me = 0, n = 1;
  int processors = 1;  // squall::processors()
  settings config;
  shm::job_area job;
  std::unique_ptr<boot::pmix_job> pmix;  // started by a PMIx launcher (mpirun) instead of squallrun
  std::optional<boot::host_layout> hosts;  // started by squallrun --hosts on several hosts
  std::vector<bool> on_this_host;        // by node: reached through shared memory
  std::unique_ptr<shm::shm_transport> shm;  // to the nodes on this host
  std::unique_ptr<network_transport> net;  // to the others, TCP or UCX (none when all share the host)
  std::unique_ptr<squall::transport> routed;  // both, when both are used
  squall::transport* transport = nullptr;   // what the message layer uses
  std::unique_ptr<am::engine> engine;
  node_lock lock;
  std::thread progress;
  std::atomic<bool> stopping{false};
  // Program threads asleep in a wait (waiting.cpp), each with its condition: a thread that
  // handles messages, or changes what they wait for (am::wake_waiters), tests their
  // conditions and rings the doorbell when one holds. The list is under the node lock.
  struct sleeping_wait {
    bool (*pred)(void*);
    void* ctx;
    bool satisfied;
    sleeping_wait* next;
  };
  sleeping_wait* sleeping = nullptr;
  std::atomic<int> sleeping_waiters{0};
  // Whether the program's threads count as polling (see waiting.cpp): away, inside a
  // wait, or lingering - just left a wait and still counted, until the progress thread
  // sees no new wait for a linger period and takes over.
  enum presence : int { away = 0, waiting = 1, lingering = 2 };
  std::atomic<int> compute{away};
  std::atomic<int> waiters{0};
  std::atomic<std::uint64_t> waits_entered{0};
  // Watches the launcher and the other nodes (watchdog.cpp); none in a job of its own.
  pid_t launcher = 0;  // the parent process that started this node
  // How often the watchdog shows this node alive on an idle network link: for its own
  // SQUALL_LIVENESS_S, then for the job's shortest once init has found it (runtime.cpp), so that
  // a peer with a shorter limit than this node's does not find it silent.
  std::atomic<std::int64_t> heartbeat_ns{1'000'000'000};
  std::thread watchdog;
  int watchdog_stop_fd = -1;
  // By node, when the watchdog last saw a sign of life from it (now_ns; 0: never). Made with
  // the network transports, whose loss reports ask it (network_setup.cpp); empty without them.
  std::vector<std::atomic<std::int64_t>> heard_at;
  // The longest a live peer may seem silent here: its watchdog gives an idle link a heartbeat
  // within two of its heartbeat periods (at most a second each, give or take a look of a
  // quarter second: watchdog.cpp), and this node's watchdog notices at its next look.
  static constexpr std::int64_t longest_quiet_ns = 3'000'000'000;

  shm::node_control& control() const { return job.control(me); }
  // Ends the process with a message if the job lost a node.
  void check_abort() const;
};

// The running node; throws usage_error naming `api` before init or after finalize.
node_runtime& require(const char* api);
node_runtime* current();  // nullptr outside init..finalize

// The same check on the message path: one load.
extern std::atomic<node_runtime*> running_node;
inline node_runtime& require_fast(const char* api) {
  node_runtime* nd = running_node.load(std::memory_order_acquire);
  return nd != nullptr ? *nd : require(api);
}

// Connects the node to its peers on other hosts (or to all of them when SQUALL_TRANSPORT
// asks for tcp or ucx) (network_setup.cpp), and closes those connections in order at finalize.
void setup_transports(node_runtime& nd);
void close_transports(node_runtime& nd);

// Waiting (waiting.cpp).
void wait_until(node_runtime& nd, bool (*pred)(void*), void* ctx);
// Whether this thread is in a wait of wait_until's and holds the node lock once: a handler
// that its poll runs may step out of the wait (am::run_unlocked_in_handler).
bool can_step_out_of_wait(const node_runtime& nd);
// From there: runs f(ctx) with the node lock let go and the thread counted as having left
// the wait, as a computing thread is (it lingers; the progress thread serves the node if f
// runs long, and waiting peers may nudge it); then back in the wait, the lock held again.
void step_out_of_wait(node_runtime& nd, void (*f)(void*), void* ctx);
// Under the node lock: tests the conditions of this node's program threads asleep in a
// wait, and wakes them if one now holds. The engine calls it after every poll that handled
// packets (runtime.cpp sets that up), am::wake_waiters on request.
void wake_sleeping_waiters(node_runtime& nd);
// From a network transport's I/O thread that took packets in: handles them if the node lock
// is free (network_hooks::serve); false if it was taken.
bool serve_arrivals(node_runtime& nd);
void start_progress_thread(node_runtime& nd);
void stop_progress_thread(node_runtime& nd);

// The watchdog thread (watchdog.cpp): a lost launcher ends the node; a peer whose process
// ended (under a PMIx launcher) or that stopped showing life ends the job.
void start_watchdog(node_runtime& nd);
// How often a node shows itself alive to peers watching with a limit of `liveness_s` (0: off).
std::int64_t heartbeat_period_ns(int liveness_s);
void stop_watchdog(node_runtime& nd);

// Runs f with the node lock held.
template <class F>
auto locked(node_runtime& nd, F&& f) {
  std::lock_guard g(nd.lock);
  return f();
}

}  // namespace squall::rt
