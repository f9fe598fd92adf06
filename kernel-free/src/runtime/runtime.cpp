// SPDX-License-Identifier: BSD-3-Clause
// squall::init / finalize: attach to the job squallrun made, or bootstrap through the
// cluster launcher's PMIx server (mpirun), or make a one-node job; read the configuration,
// connect the transports, start the progress thread.
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include "collectives/internal.hpp"
#include "common/config.hpp"
#include "common/log.hpp"
#include "common/poke.hpp"
#include "common/process_fence.hpp"
#include "runtime/binding.hpp"
#include "runtime/node.hpp"
#include "runtime/report.hpp"
#include "runtime/show_config.hpp"
#include "stats/counters.hpp"
#include "stats/forms.hpp"

namespace squall {
namespace rt {
namespace {

enum class phase { before_init, running, finalized };
std::atomic<phase> current_phase{phase::before_init};
node_runtime* the_node = nullptr;

// `processors`: how many this host's nodes of the job may use (runtime/binding.hpp).
// `nodes`: in the job.
settings read_settings(int nodes, int local_nodes, int processors, bool launcher_bound) {
  settings s;
  s.aggregation = static_cast<unsigned>(env_int("SQUALL_AGGREGATION", 1, 1, 4096));
  // Also set by hand where other work shares the processors unseen: several hosts of a job
  // simulated on one machine (tests/common/loopback_hosts.sh) took 0.65 of the time so.
  s.oversubscribed = env_bool("SQUALL_OVERSUBSCRIBED", local_nodes > processors);
  // Spinning only pays when every node has a core of its own.
  s.wait_spin_ns = 1000 * env_int("SQUALL_SPIN_US", s.oversubscribed ? 5 : 50, 0, 10'000'000);
  s.progress_spin_ns =
      1000 * env_int("SQUALL_PROGRESS_SPIN_US", s.oversubscribed ? 0 : 10, 0, 10'000'000);
  // A job of one node has no peer to spare the doorbell: its progress thread sleeps until
  // rung or until a deferred call is due, rather than watching the program's waits (which
  // woke it every 80 us or so on the cores two PARMACS workers computed on: SOR on one node
  // of two threads took 0.30 s with watching, 0.205 s without, as on pthreads).
  s.linger_ns = 1000 * env_int("SQUALL_LINGER_US", s.oversubscribed || nodes == 1 ? 0 : 50, 0, 1'000'000);
  s.lock_bias = env_bool("SQUALL_LOCK_BIAS", !s.oversubscribed);
  s.quiet_polls = static_cast<int>(env_int("SQUALL_QUIET_POLLS", 4, 0, 1000));
  s.most_quiet_polls = static_cast<int>(env_int("SQUALL_QUIET_POLLS_MAX", 32, 0, 1000));
  s.mailbox_demote = env_bool("SQUALL_MAILBOX_DEMOTE", true);
  // Binding keeps a job's nodes apart; one node has nothing to keep apart, with more
  // nodes than processors the scheduler balances better than a fixed split, and a node a
  // cluster launcher bound keeps the launcher's choice.
  s.bind = env_bool("SQUALL_BIND", local_nodes >= 2 && !s.oversubscribed && !launcher_bound);
  s.progress_thread = env_bool("SQUALL_PROGRESS_THREAD", true);
  // With more nodes than processors a node's threads queue behind other nodes' anyway, and
  // waits sleep after 5 us: pokes would only add yields.
  s.poke = env_bool("SQUALL_POKE", !s.oversubscribed) && s.progress_thread;
  s.stats = stats::parse_forms(std::getenv("SQUALL_STATS"));
  s.liveness_s = static_cast<int>(env_int("SQUALL_LIVENESS_S", 30, 0, 86400));
  s.connect_timeout_s = static_cast<int>(env_int("SQUALL_TCP_TIMEOUT", 30, 1, 3600));
  s.wait_notice_s = static_cast<int>(env_int("SQUALL_WAIT_NOTICE_S", 60, 0, 86400));
  // Read only on some paths (where they are used); checked here, so that a bad value stops
  // every program at start-up.
  env_bool("SQUALL_RECORD_WRITES", true);
  env_bool("SQUALL_HOME_VIEWS", true);
  if (const char* v = std::getenv("SQUALL_REMOTE_READS");
      v != nullptr && *v != '\0' && std::strcmp(v, "auto") != 0 && std::strcmp(v, "0") != 0 && std::strcmp(v, "1") != 0) {
    fatal("SQUALL_REMOTE_READS must be 'auto', '0' or '1' (got '%s')", v);
  }
  return s;
}

std::size_t ring_bytes_from_env() {
  const auto ring = env_int("SQUALL_RING_BYTES", 1 << 18, 1 << 16, 1 << 30);
  if ((ring & (ring - 1)) != 0) fatal("SQUALL_RING_BYTES must be a power of two (got %lld)", static_cast<long long>(ring));
  return static_cast<std::size_t>(ring);
}

bool started_by_squallrun() {
  const char* fd_text = std::getenv("SQUALL_JOB_FD");
  return fd_text != nullptr && *fd_text != '\0';
}

// squallrun hands each node the job's memory as descriptor SQUALL_JOB_FD. Something between
// squallrun and the program that closes the descriptors it inherits (a wrapper script in
// Python, whose subprocess closes them unless given pass_fds; a daemon's closefrom) takes it
// away, and the number may since name another file: say so, rather than that the program
// was not started by squallrun (it was) or that the memory cannot be mapped.
void check_job_fd(int fd) {
  const std::string how = "(a wrapper that closes the descriptors it inherits, as Python's subprocess does unless "
                          "given pass_fds); let it pass descriptor " + std::to_string(fd) + " on";
  if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
    fatal("SQUALL_JOB_FD=%d: descriptor %d, the job's memory that squallrun handed this node, is not open: "
          "something between squallrun and the program closed it %s", fd, fd, how.c_str());
  }
  char target[256];
  const ssize_t len = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), target, sizeof target - 1);
  if (len <= 0) return;  // no /proc: job_area::attach checks what it can
  const std::string file(target, static_cast<std::size_t>(len));
  if (file.starts_with("/memfd:squall-job")) return;
  fatal("SQUALL_JOB_FD=%d: descriptor %d is %s, not the job's memory that squallrun handed this node: something "
        "between squallrun and the program closed it, and the number was used again %s", fd, fd, file.c_str(),
        how.c_str());
}

shm::job_area attach_job(int& me, int& n) {
  if (!started_by_squallrun()) {
    me = 0;
    n = 1;
    return shm::job_area::single(ring_bytes_from_env());
  }
  const int fd = static_cast<int>(env_int("SQUALL_JOB_FD", -1, 0, 1 << 20));
  n = static_cast<int>(env_int("SQUALL_NODES", 0, 1, 1 << 16));
  if (n == 0) fatal("SQUALL_NODES must be set with SQUALL_JOB_FD (start the program with squallrun)");
  me = static_cast<int>(env_int("SQUALL_NODE", -1, 0, n - 1));
  if (me < 0) fatal("SQUALL_NODE must be set with SQUALL_JOB_FD (start the program with squallrun)");
  check_job_fd(fd);
  auto job = shm::job_area::attach(fd);
  if (job.nodes() != n) fatal("SQUALL_NODES=%d but the job has %d nodes", n, job.nodes());
  return job;
}

// The processors this process may run on (its affinity mask), at least 1.
int processors_allowed() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// A program that exits without finalize (exit() in the middle, or returning from main):
// stop the runtime's threads before static destructors run under their feet. squallrun
// (or, under a PMIx launcher, the other nodes' watchdogs) reports the node as lost, since
// it never finalized.
void stop_at_exit() {
  if (current_phase.load() != phase::running) return;
  stop_watchdog(*the_node);
  stop_progress_thread(*the_node);
}

// Output the program wrote to standard output and that could not be written (a full disk,
// /dev/full, a terminal gone): the C library drops it without a word when it flushes at exit,
// and the job would end with status 0. Said instead, and the node ends with status 1. A
// stream the program closed itself is left alone: fclose told it of any error.
std::string standard_output_failure() {
  errno = 0;
  if (std::fflush(stdout) != 0) return format("cannot write standard output: %s", std::strerror(errno));
  if (std::ferror(stdout) != 0) return "cannot write standard output: an earlier write to it failed";
  return "";
}

// Each node watches its peers with its own SQUALL_LIVENESS_S and, on idle network links,
// shows itself alive at a quarter of it (at most a second; watchdog.cpp). Set differently on
// two hosts, a node with a short limit found a live peer that beat for a longer one silent,
// and ended the job: every node now beats for the shortest limit of the job (0, off, counts
// as none), and node 0 says that the limits differ.
void beat_for_the_shortest_limit(node_runtime& nd) {
  constexpr std::uint64_t off = UINT64_MAX;
  const auto own = nd.config.liveness_s == 0 ? off : static_cast<std::uint64_t>(nd.config.liveness_s);
  const value_range r = range_over_nodes(std::array<std::uint64_t, 1>{own})[0];
  if (r.lowest != off) nd.heartbeat_ns.store(heartbeat_period_ns(static_cast<int>(r.lowest)));
  if (r.same() || nd.me != 0) return;
  const auto said = [](std::uint64_t s) { return s == off ? std::string("off") : std::to_string(s) + " s"; };
  warn("SQUALL_LIVENESS_S differs between the job's nodes (from %s to %s): each node watches with its own "
       "limit, and every node shows itself alive often enough for the shortest; set it alike on every host",
       said(r.lowest).c_str(), said(r.highest).c_str());
}

}  // namespace

std::atomic<node_runtime*> running_node{nullptr};

node_runtime* current() { return current_phase.load() == phase::running ? the_node : nullptr; }

node_runtime& require(const char* api) {
  switch (current_phase.load()) {
    case phase::running:
      return *the_node;
    case phase::before_init:
      throw usage_error(format("%s called before squall::init", api));
    case phase::finalized:
      break;
  }
  throw usage_error(format("%s called after squall::finalize", api));
}

// Every segment holds a memfd or two open on each node, and sockets hold more: the soft limit
// of open files (1024 on most systems) ended a program of ~480 TSM segments on 2 nodes with
// "Too many open files". As MPI runtimes do, the soft limit is raised to the hard one.
void raise_open_files_limit() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &files);
}

}  // namespace rt

void init(int*, char***) {
  using namespace rt;
  if (current_phase.load() == phase::running) throw usage_error("squall::init called twice");
  if (current_phase.load() == phase::finalized) {
    throw usage_error("squall::init called after squall::finalize (the runtime does not restart)");
  }
  raise_open_files_limit();
  auto* nd = new node_runtime;
  if (!started_by_squallrun() && boot::under_pmix()) {
    nd->pmix = std::make_unique<boot::pmix_job>(ring_bytes_from_env());
    nd->me = nd->pmix->me();
    nd->n = nd->pmix->nodes();
    nd->job = nd->pmix->take_job_area();
    nd->on_this_host = nd->pmix->on_this_host();
  } else {
    nd->job = attach_job(nd->me, nd->n);
    if (started_by_squallrun()) nd->hosts = boot::host_layout_from_env(nd->n);
    for (int i = 0; i < nd->n; ++i) nd->on_this_host.push_back(nd->job.on_this_host(i));
  }
  // From here a node that ends cleanly without joining is a loss to squallrun (the others
  // may be waiting for its endpoint, not yet running).
  nd->control().state.store(shm::joining);
  set_log_node(nd->n > 1 ? nd->me : -1);
  warn_unknown_variables(*nd);
  const int local_nodes = static_cast<int>(std::count(nd->on_this_host.begin(), nd->on_this_host.end(), true));
  // The host's layout, read only when there is something to share or show (a few ms).
  host_processors host;
  const auto find_host = [&] {
    if (!host.topology) host = find_processors(nd->pmix != nullptr);
  };
  if (local_nodes >= 2 || env_bool("SQUALL_SHOW_CONFIG", false)) find_host();
  nd->config = read_settings(nd->n, local_nodes, host.topology ? host.count() : local_nodes, host.launcher_bound);
  nd->processors = std::max(1, (host.topology ? host.count() : processors_allowed()) / local_nodes);
  check_report_file(*nd);
  // Before the runtime starts any thread, so that they share the node's processors.
  if (nd->config.bind) {
    find_host();
    const int local_index = static_cast<int>(std::count(nd->on_this_host.begin(), nd->on_this_host.begin() + nd->me, true));
    const cpu_set_ptr share = cpu_share(host.topology.get(), host.usable.get(), local_index, local_nodes);
    if (!bind_to(host, share.get())) warn("SQUALL_BIND: could not bind this node to its processors");
  }
  // Before this node can sleep or send (common/process_fence.hpp). With more nodes than
  // cores, threads sleep so often that the heavy side would cost more than it saves
  // (measured: the coherence test on 4 nodes took twice as long).
  if (!nd->config.oversubscribed && process_fence::enable()) {
    nd->control().light_fences.store(1, std::memory_order_seq_cst);
  }
  setup_transports(*nd);
  nd->engine = std::make_unique<am::engine>(*nd->transport, nd->me, nd->n);
  nd->engine->set_aggregation(nd->config.aggregation);
  nd->engine->on_handled([](void* n) { wake_sleeping_waiters(*static_cast<node_runtime*>(n)); }, nd);
  am::current_engine = nd->engine.get();
  am::engine::claim_stage(true);
  // This thread sends and waits most; the lock favours it (runtime/node_lock.hpp). Not by
  // default with more nodes than cores, where the other threads take the lock often.
  if (nd->config.lock_bias) nd->lock.bias_to_this_thread();
  if (nd->shm) nd->shm->set_mailbox_tuning(nd->config.quiet_polls, nd->config.most_quiet_polls, nd->config.mailbox_demote);
  if (nd->config.poke) {
    poke::install(&stats::counter_at(stats::counter_slot("progress.pokes_taken")),
                  &stats::counter_at(stats::counter_slot("progress.pokes_unyielded")),
                  &nd->control().pokes_unyielded_until_ns);
  }
  nd->control().pid.store(getpid());
  // The program runs from here until its first wait (runtime/wait_yields.cpp).
  if (nd->config.oversubscribed) nd->control().computed_until_ns.store(INT64_MAX, std::memory_order_relaxed);
  nd->control().state.store(shm::running);
  the_node = nd;
  current_phase.store(phase::running);
  running_node.store(nd, std::memory_order_release);
  start_progress_thread(*nd);
  if (started_by_squallrun() || nd->pmix) {
    nd->launcher = getppid();
    start_watchdog(*nd);
  }
  static const bool registered = std::atexit(stop_at_exit) == 0;
  if (!registered) warn("could not register the exit hook; exiting without finalize may crash");
  barrier();
  beat_for_the_shortest_limit(*nd);
  show_config(*nd, host);
}

void finalize() {
  using namespace rt;
  node_runtime& nd = require("squall::finalize");
  // Before the statistics report, which flushes standard output too.
  const std::string output_failure = standard_output_failure();
  std::string report_failure;
  if (detail::finalize_barrier(nd.config.stats.any())) report_failure = report(nd);
  close_transports(nd);
  stop_progress_thread(nd);
  am::engine::claim_stage(false);
  nd.control().state.store(shm::finalized);
  stop_watchdog(nd);  // after `finalized`: until then it shows this node alive
  running_node.store(nullptr, std::memory_order_release);
  current_phase.store(phase::finalized);
  // The node's memory stays mapped: a slower node may still write into our rings.
  // The statistics asked for are lost: the job did not do all it was asked (exit status 1),
  // said once every node is done with the others.
  if (!report_failure.empty()) fatal("%s", report_failure.c_str());
  if (!output_failure.empty()) fatal("%s", output_failure.c_str());
}

bool initialized() { return rt::current() != nullptr; }
int node() { return rt::require("squall::node").me; }
int nodes() { return rt::require("squall::nodes").n; }
int processors() { return rt::require("squall::processors").processors; }

int wait_notice_seconds() { return rt::require("squall::wait_notice_seconds").config.wait_notice_s; }

void detail::require_running(const char* api) { (void)rt::require(api); }

}  // namespace squall
