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
#include <termios.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/futex.hpp"
#include "transport/shm/job_area.hpp"
#include "labelled_output.hpp"
#include "options.hpp"
#include "program_check.hpp"

namespace {

using squallrun::options;

std::vector<pid_t> children;
std::vector<std::string> killed_why;  // by node here: why squallrun sent it SIGKILL, if it did
int interrupts = 0;                   // INT/TERM/HUP received

// The keeper (start_keeper): a child of squallrun, not a node, that leads the job's process
// group and ends that group once squallrun is gone. group 0: no keeper, the nodes stay in
// squallrun's process group.
struct {
  pid_t pid = 0;
  pid_t group = 0;  // the job's process group: the keeper's pid
  int pipe = -1;    // the write end of the keeper's pipe, held by squallrun alone
} keeper;

// squallrun's controlling terminal, if squallrun's process group had it in the foreground
// when the job started: it is then lent to the job's group while squallrun runs (see
// lend_terminal).
int terminal = -1;

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

[[noreturn]] void run_node(const options& o, int node, int job_fd, pid_t launcher) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
  if (getppid() != launcher) _exit(1);
  if (keeper.group > 0) setpgid(0, keeper.group);  // as squallrun does, whichever runs first
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
  execvp(o.program[0], o.program);
  std::fprintf(stderr, "squallrun: cannot run '%s': %s\n", o.program[0], std::strerror(errno));
  _exit(127);
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

struct process {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t group = 0;  // its process group
  char state = 0;   // 'Z': a zombie, ended
};

// Process `pid` as /proc/PID/stat shows it ("pid (comm) state ppid pgrp ..."), or nothing.
std::optional<process> process_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  const auto paren = text.rfind(')');  // comm may hold spaces and parentheses
  if (paren == std::string::npos || paren + 4 > text.size()) return std::nullopt;
  char* rest = nullptr;
  const auto parent = static_cast<pid_t>(std::strtol(text.c_str() + paren + 4, &rest, 10));
  return process{pid, parent, static_cast<pid_t>(std::strtol(rest, nullptr, 10)), text[paren + 2]};
}

std::vector<process> all_processes() {
  std::vector<process> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* e = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    if (const auto p = process_of(pid)) found.push_back(*p);
  }
  closedir(proc);
  return found;
}

// squallrun's children still to be reaped, but the keeper. The launcher is a child subreaper
// (main), so once the nodes have ended these are what they left: processes that a node
// started and that outlived it (a wrapper script's command, a helper, a daemon).
std::vector<pid_t> my_children() {
  std::vector<pid_t> found;
  const pid_t self = getpid();
  for (const process& p : all_processes()) {
    if (p.parent == self && p.pid != keeper.pid) found.push_back(p.pid);
  }
  return found;
}

// Every process below squallrun but the keeper: the nodes, what they started, and what
// those left to squallrun (the subreaper) when their parent ended.
std::vector<process> job_processes() {
  const auto all = all_processes();
  std::vector<pid_t> parents{getpid()};
  std::vector<process> found;
  for (std::size_t i = 0; i < parents.size(); ++i) {
    for (const process& p : all) {
      if (p.parent != parents[i] || p.pid == keeper.pid) continue;
      found.push_back(p);
      parents.push_back(p.pid);
    }
  }
  return found;
}

// `sig` to every process of the job but those of process groups `skip` and `skip_too` (0:
// none), not only to the nodes: a node that is a shell waiting for its command (one it does
// not exec) passes no signal on, and the command would run on until it ended by itself.
void signal_job(int sig, pid_t skip, pid_t skip_too = 0) {
  for (const process& p : job_processes()) {
    if (p.group != skip && p.group != skip_too) kill(p.pid, sig);
  }
}

// The job runs in a process group of its own (the keeper's), so the terminal would stop a
// node that reads it (SIGTTIN) and send Ctrl-C, ^\ and ^Z to squallrun's group alone. If
// squallrun's group has the terminal, squallrun lends it to the job's group, as a shell gives
// it to a job; the keeper, in that group, passes the terminal's signals on to squallrun's
// group (run_keeper), so that both groups have each of them once, as if they were one.
// squallrun takes the terminal back when it stops and when the job ends (the keeper, if
// squallrun is gone), and lends it again when continued in the foreground. SIGTTOU is
// blocked in squallrun (main), so that it may do so from the background.
void lend_terminal() {
  if (terminal >= 0 && keeper.group > 0 && tcgetpgrp(terminal) == getpgrp()) tcsetpgrp(terminal, keeper.group);
}

void take_back_terminal() {
  if (terminal >= 0 && keeper.group > 0 && tcgetpgrp(terminal) == keeper.group) tcsetpgrp(terminal, getpgrp());
}

// Whether the terminal sent `info` to the job's process group, whose keeper passed it on.
bool from_keeper(const signalfd_siginfo& info) {
  return keeper.pid > 0 && info.ssi_code == SI_USER && static_cast<pid_t>(info.ssi_pid) == keeper.pid;
}

// `sig`, which squallrun had as `info`, to the processes of the job that do not have it yet:
// from the terminal (code SI_KERNEL) it went to squallrun's whole process group, through the
// keeper to the job's and squallrun's, and is passed on only beyond them, so that no process
// has it twice.
void pass_on(int sig, const signalfd_siginfo& info) {
  if (info.ssi_code == SI_KERNEL) {
    signal_job(sig, getpgrp());
  } else if (from_keeper(info)) {
    signal_job(sig, getpgrp(), keeper.group);
  } else {
    signal_job(sig, 0);
  }
}

// The first INT/TERM/HUP is passed on to every process of the job, so that the nodes may
// stop as they choose; a second one kills them all, so that a job whose nodes ignore the
// signal can still be stopped.
void on_interrupt(const signalfd_siginfo& info) {
  ++interrupts;
  if (interrupts == 1) {
    pass_on(static_cast<int>(info.ssi_signo), info);
    return;
  }
  std::fprintf(stderr, "squallrun: signalled again; killing the nodes\n");
  kill_nodes("was killed by squallrun, signalled again");
  signal_job(SIGKILL, 0);
}

void continue_job() {
  lend_terminal();
  signal_job(SIGCONT, 0);
}

// A stop signal (^Z's SIGTSTP; SIGTTIN or SIGTTOU, which the terminal sends to a group that
// is not its foreground one when that reads it, or writes under `stty tostop`) stops the job
// and then squallrun by the same signal, so that its shell sees the job stopped, as it would
// were the job in squallrun's group, and takes the terminal back; SIGCONT (fg, bg) continues
// squallrun and then the job, which gets the terminal again if squallrun was continued in
// the foreground.
void stop_job(const signalfd_siginfo& info) {
  const int sig = static_cast<int>(info.ssi_signo);
  pass_on(sig, info);
  take_back_terminal();
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  raise(sig);  // blocked, so pending until
  sigprocmask(SIG_UNBLOCK, &one, nullptr);  // squallrun stops here, until a SIGCONT (continue_job)
  sigprocmask(SIG_BLOCK, &one, nullptr);
  // The kernel discards a stop signal in a process group that no shell can continue (an
  // orphaned one, as when squallrun leads its terminal's session itself: `ssh -t host
  // squallrun ...`); squallrun then runs on, having had no SIGCONT, and so does the job.
  sigset_t pending;
  sigpending(&pending);
  if (sigismember(&pending, SIGCONT) == 0) continue_job();
}

// The keeper's part: it waits for the end of its pipe, whose write end only squallrun holds
// (close-on-exec, so no node keeps it), which comes when squallrun ends, however it ends
// (SIGKILL included). By then the nodes are gone or going (PR_SET_PDEATHSIG), but not what
// they started, which a node's end passed to init (squallrun, their subreaper, is gone): all
// of it is in the job's process group, the keeper's, unless it left that group itself
// (setsid, setpgid). The group gets SIGTERM, and SIGKILL after the grace period, the
// keeper's last act (it is in the group). Meanwhile, what the terminal sends the group while
// squallrun lends it the terminal (Ctrl-C, ^\, ^Z, a new window size) is passed on to
// squallrun's group, and a SIGTTIN or SIGTTOU that it sent the group (a process of the job
// read it, or wrote, in the background) to squallrun alone, which learns of them only so.
[[noreturn]] void run_keeper(int pipe_fd, pid_t launcher, pid_t launcher_group, std::int64_t grace_s) {
  setpgid(0, 0);
  for (int s : {SIGTERM, SIGHUP, SIGPIPE}) signal(s, SIG_IGN);
  sigset_t watched;
  sigemptyset(&watched);
  for (int s : {SIGINT, SIGQUIT, SIGTSTP, SIGWINCH, SIGTTIN, SIGTTOU}) {
    signal(s, SIG_DFL);  // an ignored signal never reaches the signalfd
    sigaddset(&watched, s);
  }
  sigprocmask(SIG_SETMASK, &watched, nullptr);
  const int signal_fd = signalfd(-1, &watched, SFD_CLOEXEC);
  for (;;) {
    pollfd fds[2] = {{pipe_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      char byte;
      if (read(pipe_fd, &byte, 1) <= 0) break;  // squallrun writes nothing: it has ended
    }
    signalfd_siginfo info;
    if (fds[1].revents == 0 || read(signal_fd, &info, sizeof info) != sizeof info) continue;
    if (info.ssi_code != SI_KERNEL || getppid() != launcher) continue;
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGTTIN || sig == SIGTTOU) {
      kill(launcher, sig);
    } else {
      killpg(launcher_group, sig);
    }
  }
  const pid_t group = getpid();
  const auto left = [group] {
    std::size_t n = 0;
    for (const process& p : all_processes()) n += p.group == group && p.pid != group && p.state != 'Z';
    return n;
  };
  // squallrun may have died with the terminal lent to the job.
  const int tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (tty >= 0 && tcgetpgrp(tty) == group) tcsetpgrp(tty, launcher_group);
  const std::size_t n = left();
  if (n == 0) _exit(0);  // the job ended with squallrun, as it does when squallrun ends normally
  std::fprintf(stderr, "squallrun: the launcher (pid %d) ended while its job ran; stopping the %zu process(es) left\n",
               launcher, n);
  killpg(group, SIGTERM);
  killpg(group, SIGCONT);  // a stopped process ends on SIGTERM only once continued
  const auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(grace_s);
  while (left() != 0 && std::chrono::steady_clock::now() < kill_at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (left() != 0) killpg(group, SIGKILL);  // the keeper too, atomically with the rest
  _exit(0);
}

// Starts the keeper (run_keeper), before anything that a node would share with it (the job's
// memory, --label's pipes) exists, so that it holds none of it. Without a keeper the job runs
// as before, in squallrun's process group, which nothing ends after squallrun.
void start_keeper(std::int64_t grace_s) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "squallrun: cannot make the keeper's pipe (%s); if squallrun is killed, what the nodes started may outlive it\n",
                 std::strerror(errno));
    return;
  }
  const pid_t launcher = getpid();
  const pid_t launcher_group = getpgrp();  // here: once forked, squallrun may move the keeper first
  const pid_t p = fork();
  if (p == 0) {
    close(ends[1]);
    run_keeper(ends[0], launcher, launcher_group, grace_s);
  }
  close(ends[0]);
  if (p < 0) {
    std::fprintf(stderr, "squallrun: cannot start the keeper (%s); if squallrun is killed, what the nodes started may outlive it\n",
                 std::strerror(errno));
    close(ends[1]);
    return;
  }
  setpgid(p, p);  // as the keeper does, whichever runs first, so that the nodes may join it
  keeper.pid = p;
  keeper.group = p;
  keeper.pipe = ends[1];
}

// At the job's end: the terminal comes back to squallrun's group, the keeper sees its pipe
// end, finds its group empty and exits, and is reaped, so that it does not outlive squallrun.
void stop_keeper() {
  take_back_terminal();
  if (keeper.pid <= 0) return;
  close(keeper.pipe);
  waitpid(keeper.pid, nullptr, 0);
  keeper = {};
}

void reap_ended_children() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

void signal_all(const std::vector<pid_t>& pids, int sig) {
  for (pid_t p : pids) kill(p, sig);
}

// Once every node has ended, what they left running gets SIGTERM, and SIGKILL after the
// grace period, so that no process of the job outlives it. A process killed passes its own
// children to squallrun (the subreaper), which ends them in turn.
void end_leftovers(std::int64_t grace_s) {
  reap_ended_children();
  auto left = my_children();
  if (left.empty()) return;
  std::fprintf(stderr, "squallrun: the nodes left %zu process(es) running; stopping them\n", left.size());
  const auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(grace_s);
  while (!left.empty() && std::chrono::steady_clock::now() < kill_at) {
    signal_all(left, SIGTERM);  // again for any passed on since the last round
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    reap_ended_children();
    left = my_children();
  }
  while (!left.empty()) {
    signal_all(left, SIGKILL);
    waitpid(-1, nullptr, 0);
    reap_ended_children();
    left = my_children();
  }
}

// Waits up to a tenth of a second for a node to end (SIGCHLD) or an interrupt, read through
// `signal_fd`, and, with --label, passes on the nodes' output meanwhile.
void wait_a_tick(int signal_fd, std::optional<squallrun::labelled_output>& output) {
  std::vector<pollfd> fds{{signal_fd, POLLIN, 0}};
  if (output) output->add_to(fds);
  if (poll(fds.data(), fds.size(), 100) <= 0) return;
  signalfd_siginfo info;
  while (read(signal_fd, &info, sizeof info) > 0) {
    if (info.ssi_signo == SIGTSTP || info.ssi_signo == SIGTTIN || info.ssi_signo == SIGTTOU) {
      stop_job(info);
    } else if (info.ssi_signo == SIGCONT) {
      continue_job();
    } else if (info.ssi_signo != SIGCHLD) {
      on_interrupt(info);
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
  start_keeper(o.grace_s);
  int job_fd = -1;
  // With --hosts the area has a control line for every node of the job, rings for this host's.
  std::vector<bool> here(static_cast<std::size_t>(o.job_nodes), false);
  for (int i = 0; i < o.nodes; ++i) here[static_cast<std::size_t>(o.first_node + i)] = true;
  const auto job = squall::shm::job_area::create(o.job_nodes, static_cast<std::size_t>(o.ring_bytes), &job_fd, here);

  // SIGCHLD, INT/TERM/HUP and the job-control signals are read from a signalfd; the others
  // are passed on to the job (on_interrupt, stop_job). SIGTTOU blocked also lets squallrun
  // write and move the terminal from the background (lend_terminal).
  sigset_t watched;
  sigemptyset(&watched);
  const int watched_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT};
  for (int s : watched_signals) sigaddset(&watched, s);
  sigprocmask(SIG_BLOCK, &watched, nullptr);
  // A shell without job control starts a background command with SIGINT ignored, in the
  // shell's process group: the terminal, if that group has it, is not squallrun's to lend.
  struct sigaction interrupt;
  sigaction(SIGINT, nullptr, &interrupt);
  if (interrupt.sa_handler != SIG_IGN) terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);  // none: -1
  // An ignored signal never reaches the signalfd (SIGINT, above): blocked with the default
  // action, each waits there instead.
  for (int s : watched_signals) signal(s, SIG_DFL);
  const int signal_fd = signalfd(-1, &watched, SFD_NONBLOCK | SFD_CLOEXEC);
  std::optional<squallrun::labelled_output> output;
  if (o.label) output.emplace(o.nodes, o.first_node);

  const pid_t self = getpid();
  children.assign(static_cast<std::size_t>(o.nodes), 0);
  killed_why.assign(static_cast<std::size_t>(o.nodes), "");
  lend_terminal();  // to the keeper's group, which the nodes join
  for (int i = 0; i < o.nodes; ++i) {
    const pid_t p = fork();
    if (p < 0) {
      std::fprintf(stderr, "squallrun: fork failed: %s\n", std::strerror(errno));
      job.abort(-1, "the launcher could not start every node");
      kill_nodes("was killed by squallrun, which could not start every node");
      take_back_terminal();
      return 1;  // the keeper ends what the nodes started
    }
    if (p == 0) {
      if (output) output->become_node(i);
      run_node(o, o.first_node + i, job_fd, self);
    }
    if (keeper.group > 0) setpgid(p, keeper.group);
    children[static_cast<std::size_t>(i)] = p;
    if (output) output->started(i);
  }
  close(job_fd);

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
    wait_a_tick(signal_fd, output);
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
  end_leftovers(o.grace_s);  // before the last of the output, which may be theirs
  stop_keeper();
  if (output) output->finish();
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
