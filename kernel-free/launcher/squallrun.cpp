// SPDX-License-Identifier: BSD-3-Clause
// squallrun: starts N nodes of a program on this host, connected by shared memory, and
// watches them: when a node dies or exits without finalize, every other node is told
// (they print which node was lost and exit), and survivors are killed after a grace period.
// With --hosts the same command on each of several hosts makes one job of them all: the
// nodes of a host share memory, hosts talk over TCP (bootstrap/host_list.hpp).
#include <poll.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/futex.hpp"
#include "transport/shm/job_area.hpp"
#include "job_control.hpp"
#include "keeper.hpp"
#include "labelled_output.hpp"
#include "options.hpp"
#include "processes.hpp"
#include "program_check.hpp"
#include "stand_in.hpp"

namespace {

using squallrun::options;

std::vector<pid_t> children;
std::vector<std::string> killed_why;  // by node here: why squallrun sent it SIGKILL, if it did
int interrupts = 0;                   // INT/TERM/HUP received

// SIGKILL to node `local` if it runs, noting why: it is then described by that, not as a
// node killed by a signal from elsewhere.
void kill_node(std::size_t local, std::string why) {
  if (children[local] <= 0) return;
  killed_why[local] = std::move(why);
  kill(children[local], SIGKILL);
}

void kill_nodes(const std::string& why) {
  for (std::size_t i = 0; i < children.size(); ++i) kill_node(i, why);
}

// A launcher started with standard input, output or error closed would hand that number to
// the job's memory (memfd_create takes the lowest free one), and a node's own redirection of
// it would then close the job: every one of the three is open before anything else is.
void open_standard_streams() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null_fd = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (null_fd >= 0 && null_fd != fd) {
      dup2(null_fd, fd);
      close(null_fd);
    }
  }
}

// In a child of squallrun: makes it node `node` of the job, as its program finds it.
// `group`: the job's process group (the keeper's), 0 if none.
void become_node(const options& o, int node, int job_fd, pid_t launcher, pid_t group) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
  if (getppid() != launcher) _exit(1);
  if (group > 0) setpgid(0, group);  // as squallrun does, whichever runs first
  // Every node of one binary gets the same address-space layout (shared globals need it).
  personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE);
  // Zero-padded to one width, so that the environment, and with it the stack, has the same
  // layout on every node (a pointer into argv kept in a shared global means the same).
  const std::string digits = std::to_string(node);
  const std::size_t width = std::to_string(o.job_nodes - 1).size();
  setenv("SQUALL_NODE", (std::string(width - std::min(width, digits.size()), '0') + digits).c_str(), 1);
  setenv("SQUALL_NODES", std::to_string(o.job_nodes).c_str(), 1);
  setenv("SQUALL_JOB_FD", std::to_string(job_fd).c_str(), 1);
  if (node != 0) {  // standard input goes to node 0 only
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      close(null_fd);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void run_node(const options& o, int node, int job_fd, pid_t launcher, pid_t group) {
  become_node(o, node, job_fd, launcher, group);
  execvp(o.program[0], o.program);
  std::fprintf(stderr, "squallrun: cannot run '%s': %s\n", o.program[0], std::strerror(errno));
  _exit(127);
}

// Starts the stand-in of lost node `node` (stand_in.hpp); its pid, or 0 if it could not.
pid_t start_stand_in(const options& o, int node, int job_fd, pid_t group) {
  const pid_t launcher = getpid();
  const pid_t p = fork();
  if (p != 0) {
    if (p > 0 && group > 0) setpgid(p, group);
    return std::max<pid_t>(p, 0);
  }
  become_node(o, node, job_fd, launcher, group);
  squallrun::exec_stand_in();
}

// How a node ended, given why squallrun killed it ("" if it did not).
std::string describe(int status, const std::string& killed_by_us) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !killed_by_us.empty()) return killed_by_us;
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int exit_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

// The first INT/TERM/HUP is passed on to every process of the job, so that the nodes may
// stop as they choose; a second one kills them all, so that a job whose nodes ignore the
// signal can still be stopped.
void on_interrupt(const signalfd_siginfo& info, const squallrun::job_control& control, const squallrun::keeper& keeper) {
  ++interrupts;
  if (interrupts == 1) {
    control.pass_on(static_cast<int>(info.ssi_signo), info);
    return;
  }
  std::fprintf(stderr, "squallrun: signalled again; killing the nodes\n");
  kill_nodes("was killed by squallrun, signalled again");
  squallrun::signal_job(keeper.pid(), SIGKILL, 0);
}

// Waits up to a tenth of a second for a node to end (SIGCHLD) or an interrupt, read through
// `signal_fd`, and, with --label, passes on the nodes' output meanwhile.
void wait_a_tick(int signal_fd, std::optional<squallrun::labelled_output>& output, squallrun::job_control& control,
                 const squallrun::keeper& keeper) {
  std::vector<pollfd> fds{{signal_fd, POLLIN, 0}};
  if (output) output->add_to(fds);
  if (poll(fds.data(), fds.size(), 100) <= 0) return;
  signalfd_siginfo info;
  while (read(signal_fd, &info, sizeof info) > 0) {
    if (info.ssi_signo == SIGTSTP || info.ssi_signo == SIGTTIN || info.ssi_signo == SIGTTOU) {
      control.stop_job(info);
    } else if (info.ssi_signo == SIGCONT) {
      control.continue_job();
    } else if (info.ssi_signo != SIGCHLD) {
      on_interrupt(info, control, keeper);
    }
  }
  if (output) output->relay(fds, 1);
}

// Why squallrun kills node `node` at the end of the grace period after a loss. The node lost,
// if still running, was lost for a reason a node saw (silent: stopped, most likely).
std::string killed_after_grace(const squall::shm::job_area& job, int node, std::int64_t grace_s) {
  const std::string after = "killed by squallrun after the " + std::to_string(grace_s) + " s grace period";
  if (node != job.header().lost_node.load()) return "was still running; " + after;
  return std::string(job.header().reason) + "; " + after;
}

// Whether a node of this host has joined the job (called squall::init), finalized or not.
bool any_joined(const squall::shm::job_area& job, const options& o) {
  for (int i = 0; i < o.nodes; ++i) {
    if (job.control(o.first_node + i).state.load() != squall::shm::not_started) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (squallrun::is_stand_in()) squallrun::be_stand_in(argc, argv);
  open_standard_streams();
  const options o = squallrun::parse(argc, argv);
  // A node's descendants whose parent ends become squallrun's children rather than init's,
  // so that end_leftovers can end them; nothing else changes (no process group or terminal
  // is touched, so Ctrl-C and a node reading the terminal behave as without it).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (const auto problem = squallrun::check_program(o.program[0])) {
    std::fprintf(stderr, "squallrun: cannot run '%s': %s\n", o.program[0], problem->reason.c_str());
    return problem->status;
  }
  squallrun::keeper keeper(o.grace_s);
  int job_fd = -1;
  // With --hosts the area has a control line for every node of the job, rings for this host's.
  std::vector<bool> here(static_cast<std::size_t>(o.job_nodes), false);
  for (int i = 0; i < o.nodes; ++i) here[static_cast<std::size_t>(o.first_node + i)] = true;
  const auto job = squall::shm::job_area::create(o.job_nodes, static_cast<std::size_t>(o.ring_bytes), &job_fd, here);

  // SIGCHLD, INT/TERM/HUP and the job-control signals are read from a signalfd; the others
  // are passed on to the job (on_interrupt, job_control::stop_job). SIGTTOU blocked also lets
  // squallrun write and move the terminal from the background (job_control::lend_terminal).
  sigset_t watched;
  sigemptyset(&watched);
  const int watched_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT};
  for (int s : watched_signals) sigaddset(&watched, s);
  sigprocmask(SIG_BLOCK, &watched, nullptr);
  squallrun::job_control control(keeper);  // before SIGINT's disposition changes: see job_control
  // An ignored signal never reaches the signalfd (SIGINT, above): blocked with the default
  // action, each waits there instead.
  for (int s : watched_signals) signal(s, SIG_DFL);
  const int signal_fd = signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC);
  std::optional<squallrun::labelled_output> output;
  if (o.label) output.emplace(o.nodes, o.first_node);

  const pid_t self = getpid();
  children.assign(static_cast<std::size_t>(o.nodes), 0);
  killed_why.assign(static_cast<std::size_t>(o.nodes), "");
  control.lend_terminal();  // to the keeper's group, which the nodes join
  for (int i = 0; i < o.nodes; ++i) {
    const pid_t p = fork();
    if (p < 0) {
      std::fprintf(stderr, "squallrun: fork failed: %s\n", std::strerror(errno));
      job.abort(-1, "the launcher could not start every node");
      kill_nodes("was killed by squallrun, which could not start every node");
      control.take_back_terminal();
      return 1;  // the keeper ends what the nodes started
    }
    if (p == 0) {
      if (output) output->become_node(i);
      run_node(o, o.first_node + i, job_fd, self, keeper.group());
    }
    if (keeper.group() > 0) setpgid(p, keeper.group());
    children[static_cast<std::size_t>(i)] = p;
    if (output) output->started(i);
  }
  // A stand-in (stand_in.hpp) joins the job as a node, so the area stays open for one.
  const bool spans_hosts = o.job_nodes > o.nodes;
  if (!spans_hosts) close(job_fd);
  pid_t stand_in = 0;

  int running = o.nodes;
  int result = 0;
  std::int64_t kill_at = -1;  // when survivors of a lost node get SIGKILL
  const auto after_grace = [&o] { return squall::now_ns() + o.grace_s * 1'000'000'000; };
  struct unjoined_node {
    int node;
    pid_t pid;
  };
  std::optional<unjoined_node> unjoined;  // the first to end with status 0 before squall::init
  while (running > 0) {
    wait_a_tick(signal_fd, output, control, keeper);
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
      int local = 0;
      while (local < o.nodes && children[static_cast<std::size_t>(local)] != p) ++local;
      if (local == o.nodes) continue;
      children[static_cast<std::size_t>(local)] = 0;
      --running;
      const int node = o.first_node + local;
      const auto state = job.control(node).state.load();
      const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      // In squall::init or after it, never finalized.
      const bool early = state == squall::shm::running || state == squall::shm::joining;
      if (job.header().abort.load() != 0 && node != job.header().lost_node.load()) {
        continue;  // a survivor stopping after the loss: expected
      }
      if (!failed && state == squall::shm::not_started) {
        if (!unjoined) unjoined = unjoined_node{node, p};  // harmless unless another node joins (below)
        continue;
      }
      if (!failed && !early) continue;
      const std::string why = failed ? describe(status, killed_why[static_cast<std::size_t>(local)])
                                     : "exited without calling squall::finalize";
      if (result == 0) result = failed ? exit_code(status) : 1;
      // A node that finalized has left the job cleanly, whatever its exit status says.
      const bool lost = running > 0 && state != squall::shm::finalized;
      if (lost && job.header().abort.load() == 0) {
        std::fprintf(stderr, "squallrun: node %d (pid %d) %s; stopping the other nodes\n", node, p, why.c_str());
        job.abort(node, why.c_str());
        kill_at = after_grace();
      } else {  // the job is already stopping because of this node, or it was the last one
        std::fprintf(stderr, "squallrun: node %d (pid %d) %s\n", node, p, why.c_str());
        if (running == 0 && spans_hosts && stand_in == 0 && squallrun::needs_stand_in(state)) {
          // The host's last node, gone before it had reached the other hosts: say it there.
          if (job.header().abort.load() == 0) job.abort(node, why.c_str());
          stand_in = start_stand_in(o, node, job_fd, keeper.group());
        }
      }
    }
    // A node that ended cleanly without joining leaves any node that joins waiting for it in
    // squall::init's barrier for ever.
    if (unjoined && job.header().abort.load() == 0 && any_joined(job, o)) {
      const auto [node, pid] = *unjoined;
      const char* why = "exited with status 0 before joining the job (it never called squall::init)";
      std::fprintf(stderr, "squallrun: node %d (pid %d) %s; stopping the other nodes\n", node, pid, why);
      job.abort(node, why);
      kill_at = after_grace();
      if (result == 0) result = 1;
    }
    // A node here may have aborted the job itself: it lost a peer on another host.
    if (kill_at < 0 && job.header().abort.load() != 0) kill_at = after_grace();
    if (kill_at >= 0 && squall::now_ns() >= kill_at && running > 0) {
      std::fprintf(stderr, "squallrun: killing the %d node(s) still running\n", running);
      for (int i = 0; i < o.nodes; ++i) {
        kill_node(static_cast<std::size_t>(i), killed_after_grace(job, o.first_node + i, o.grace_s));
      }
      kill_at = INT64_MAX;
    }
  }
  // A host whose nodes all ended cleanly without joining: none is left to tell the other
  // hosts, whose nodes wait for them until SQUALL_TCP_TIMEOUT. Its job has failed (a node of
  // a job over several hosts must join it), and a stand-in tells them, as for a lost node.
  if (spans_hosts && unjoined && job.header().abort.load() == 0 && !any_joined(job, o)) {
    const char* why = "exited with status 0 before joining the job (it never called squall::init)";
    std::string nodes;
    for (int i = 0; i < o.nodes; ++i) nodes += (i == 0 ? "" : ", ") + std::to_string(o.first_node + i);
    std::fprintf(stderr,
                 "squallrun: every node of this host (%s) exited with status 0 before joining the job (none called "
                 "squall::init); telling the other hosts, whose nodes wait for them\n",
                 nodes.c_str());
    job.abort(unjoined->node, why);
    stand_in = start_stand_in(o, unjoined->node, job_fd, keeper.group());
    if (result == 0) result = 1;
  }
  if (stand_in > 0) squallrun::wait_for_stand_in(stand_in);
  squallrun::end_leftovers(keeper.pid(), o.grace_s);  // before the last of the output, which may be theirs
  // At the job's end: the terminal comes back to squallrun's group, and the keeper ends.
  control.take_back_terminal();
  keeper.end();
  if (output) {
    output->finish();
    // A reader of squallrun's output that stopped reading holds it here, the job over: an
    // INT/TERM/HUP now, or a second one (the first went to the nodes), drops the rest.
    const bool whole = output->drain(signal_fd, [signal_fd] {
      signalfd_siginfo info;
      bool now = false;
      while (read(signal_fd, &info, sizeof info) > 0) {
        if (info.ssi_signo == SIGINT || info.ssi_signo == SIGTERM || info.ssi_signo == SIGHUP) {
          ++interrupts;
          now = true;
        }
      }
      return now || interrupts >= 2;
    });
    if (!whole) {
      std::fprintf(stderr, "squallrun: signalled while the nodes' output waited to be written; the rest of it is dropped\n");
      if (result == 0) result = 1;
    }
  }
  if (job.header().abort.load() != 0 && result == 0) {
    std::fprintf(stderr, "squallrun: the job lost node %d (%s)\n", job.header().lost_node.load(), job.header().reason);
    result = 1;
  }
  // With --label the nodes' output goes through squallrun, which must say that it was lost.
  if (output && output->stdout_error() != 0) {
    std::fprintf(stderr, "squallrun: cannot write standard output (the nodes' output was lost): %s\n",
                 std::strerror(output->stdout_error()));
    if (result == 0) result = 1;
  }
  return result;
}
