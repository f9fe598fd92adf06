// squallrun: starts N nodes of a program on this host, connected by shared memory, and
// watches them: when a node dies or exits without finalize, every other node is told
// (they print which node was lost and exit), and survivors are killed after a grace period.
// With --hosts the same command on each of several hosts makes one job of them all: the
// nodes of a host share memory, hosts talk over TCP (bootstrap/host_list.hpp).
#include <signal.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "bootstrap/host_list.hpp"
#include "common/futex.hpp"
#include "stats/forms.hpp"
#include "transport/shm/job_area.hpp"
#include "transport/tcp/secret.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: squallrun -n N [options] [--] program [args...]\n"
               "Starts N nodes of program on this host, connected by shared memory.\n"
               "  -n, --nodes N          number of nodes (1..1024)\n"
               "  --aggregation K        messages per packet (SQUALL_AGGREGATION, 1..4096)\n"
               "  --stats[=FORMS]        counters at finalize (SQUALL_STATS, default 1): 1, one table\n"
               "                         across nodes; nodes, a column per node; json:FILE, all of\n"
               "                         them to FILE; or a comma-separated list (json:FILE last)\n"
               "  --transport shm|tcp    how the nodes talk (SQUALL_TRANSPORT, default shm); tcp\n"
               "                         connects every pair over TCP on this host (SQUALL_TCP_ADDR,\n"
               "                         SQUALL_TCP_PORT, SQUALL_TCP_TIMEOUT)\n"
               "  --ring-bytes B         bytes per shared-memory ring, a power of two\n"
               "                         (SQUALL_RING_BYTES, 65536..1073741824, default 262144)\n"
               "  --grace S              seconds the other nodes get to exit after a node is\n"
               "                         lost before they are killed (SQUALL_GRACE, default 3)\n"
               "  --hosts A,B,...        one job over several hosts (SQUALL_HOSTS): run the same\n"
               "                         command on each host listed (IPv4 addresses); each runs\n"
               "                         N nodes, host k nodes k*N..k*N+N-1; node i listens on its\n"
               "                         host's address, port SQUALL_TCP_PORT+i (default 41000+i);\n"
               "                         every host needs the same SQUALL_JOB_SECRET\n"
               "  --host-index K         which listed host this is (SQUALL_HOST_INDEX; found from\n"
               "                         this machine's addresses when unset)\n"
               "  --make-secret          print a fresh job secret for SQUALL_JOB_SECRET and exit\n"
               "  -h, --help             this text\n");
}

[[noreturn]] void die(const char* fmt, const char* arg = "") {
  std::fprintf(stderr, "squallrun: ");
  std::fprintf(stderr, fmt, arg);
  std::fprintf(stderr, "\n");
  std::exit(2);
}

std::int64_t int_flag(const std::string& flag, const char* value, std::int64_t min, std::int64_t max) {
  if (value == nullptr) die("%s needs a value", flag.c_str());
  auto v = squall::parse_int(value, min, max);
  if (!v) {
    std::fprintf(stderr, "squallrun: %s must be an integer from %lld to %lld (got '%s')\n", flag.c_str(),
                 static_cast<long long>(min), static_cast<long long>(max), value);
    std::exit(2);
  }
  return *v;
}

std::int64_t int_env(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return int_flag(name, v, min, max);
}

struct options {
  int nodes = 0;     // on this host
  int job_nodes = 0;  // on every host
  int first_node = 0;  // this host's first
  std::int64_t ring_bytes = 0;
  std::int64_t grace_s = 0;
  char** program = nullptr;
};

// --hosts: which host this is, and the job's size; the nodes learn the layout from the
// environment (host_layout_from_env).
void spread_over_hosts(options& o, const std::string& hosts, std::int64_t index) {
  std::string error;
  const auto list = squall::boot::parse_host_list(hosts, error);
  if (!list) die("--hosts must list IPv4 addresses separated by commas: %s", error.c_str());
  const auto count = static_cast<std::int64_t>(list->size());
  if (index < 0) {
    index = squall::boot::find_this_host(*list);
    if (index == -1) die("none of the --hosts addresses (%s) belongs to this machine; give --host-index", hosts.c_str());
    if (index == -2) die("several --hosts addresses (%s) belong to this machine; give --host-index", hosts.c_str());
  } else if (index >= count) {
    die("--host-index must be below the number of hosts listed (%s)", hosts.c_str());
  }
  if (count * o.nodes > 1 << 16) die("--hosts times -n makes more than 65536 nodes");
  o.job_nodes = static_cast<int>(count * o.nodes);
  o.first_node = static_cast<int>(index) * o.nodes;
  setenv("SQUALL_HOSTS", hosts.c_str(), 1);
  setenv("SQUALL_NODES_PER_HOST", std::to_string(o.nodes).c_str(), 1);
}

options parse(int argc, char** argv) {
  options o;
  o.ring_bytes = int_env("SQUALL_RING_BYTES", 1 << 18, 1 << 16, 1 << 30);
  o.grace_s = int_env("SQUALL_GRACE", 3, 0, 3600);
  const char* hosts_env = std::getenv("SQUALL_HOSTS");
  std::string hosts = hosts_env != nullptr ? hosts_env : "";
  std::int64_t host_index = int_env("SQUALL_HOST_INDEX", -1, 0, 1 << 16);
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--") {
      ++i;
      break;
    } else if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (a == "-n" || a == "--nodes") {
      o.nodes = static_cast<int>(int_flag(a, next, 1, 1024));
      ++i;
    } else if (a == "--aggregation") {
      setenv("SQUALL_AGGREGATION", std::to_string(int_flag(a, next, 1, 4096)).c_str(), 1);
      ++i;
    } else if (a == "--ring-bytes") {
      o.ring_bytes = int_flag(a, next, 1 << 16, 1 << 30);
      ++i;
    } else if (a == "--grace") {
      o.grace_s = int_flag(a, next, 0, 3600);
      ++i;
    } else if (a == "--hosts") {
      if (next == nullptr) die("--hosts needs a list of IPv4 addresses");
      hosts = next;
      ++i;
    } else if (a == "--host-index") {
      host_index = int_flag(a, next, 0, 1 << 16);
      ++i;
    } else if (a == "--make-secret") {
      std::printf("%s\n", squall::tcp::to_hex(squall::tcp::make_secret()).c_str());
      std::exit(0);
    } else if (a == "--stats" || a.starts_with("--stats=")) {
      const std::string forms = a == "--stats" ? "1" : a.substr(8);
      squall::stats::forms parsed;
      std::string error;  // named once here, not by every node
      if (!squall::stats::parse_forms(forms.c_str(), parsed, error)) die("--stats: %s", error.c_str());
      setenv("SQUALL_STATS", forms.c_str(), 1);
    } else if (a == "--transport") {
      if (next == nullptr || (std::strcmp(next, "shm") != 0 && std::strcmp(next, "tcp") != 0)) {
        die("--transport must be shm or tcp");
      }
      setenv("SQUALL_TRANSPORT", next, 1);
      ++i;
    } else if (!a.empty() && a[0] == '-') {
      usage(stderr);
      die("unknown option '%s'", a.c_str());
    } else {
      break;
    }
  }
  if (o.nodes == 0) {
    usage(stderr);
    die("the number of nodes (-n N) is required");
  }
  if (i >= argc) {
    usage(stderr);
    die("no program given");
  }
  if ((o.ring_bytes & (o.ring_bytes - 1)) != 0) die("the ring size must be a power of two");
  // The job's secret, which every TCP connection must prove (a user's own is kept).
  const char* secret = std::getenv("SQUALL_JOB_SECRET");
  const bool have_secret = secret != nullptr && *secret != '\0';
  o.job_nodes = o.nodes;
  if (!hosts.empty()) {
    if (!have_secret) {
      die("--hosts needs the same SQUALL_JOB_SECRET on every host (make one with squallrun --make-secret)");
    }
    spread_over_hosts(o, hosts, host_index);
  } else if (!have_secret) {
    setenv("SQUALL_JOB_SECRET", squall::tcp::to_hex(squall::tcp::make_secret()).c_str(), 1);
  }
  o.program = argv + i;
  return o;
}

std::vector<pid_t> children;

void forward_signal(int sig) {
  for (pid_t p : children) {
    if (p > 0) kill(p, sig);
  }
}

[[noreturn]] void run_node(const options& o, int node, int job_fd, pid_t launcher) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
  if (getppid() != launcher) _exit(1);
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

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

int exit_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  int job_fd = -1;
  // With --hosts the area has a control line for every node of the job, rings for this host's.
  std::vector<bool> here(static_cast<std::size_t>(o.job_nodes), false);
  for (int i = 0; i < o.nodes; ++i) here[static_cast<std::size_t>(o.first_node + i)] = true;
  const auto job = squall::shm::job_area::create(o.job_nodes, static_cast<std::size_t>(o.ring_bytes), &job_fd, here);

  // SIGCHLD is taken with sigtimedwait; INT/TERM/HUP are passed on to the nodes.
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);

  const pid_t self = getpid();
  children.assign(static_cast<std::size_t>(o.nodes), 0);
  for (int i = 0; i < o.nodes; ++i) {
    const pid_t p = fork();
    if (p < 0) {
      std::fprintf(stderr, "squallrun: fork failed: %s\n", std::strerror(errno));
      job.abort(-1, "the launcher could not start every node");
      forward_signal(SIGKILL);
      return 1;
    }
    if (p == 0) run_node(o, o.first_node + i, job_fd, self);
    children[static_cast<std::size_t>(i)] = p;
  }
  close(job_fd);

  int running = o.nodes;
  int result = 0;
  std::int64_t kill_at = -1;  // when survivors of a lost node get SIGKILL
  while (running > 0) {
    timespec tick{0, 100'000'000};
    sigtimedwait(&chld, nullptr, &tick);
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
      const bool early = state == squall::shm::running;  // initialized, never finalized
      if (job.header().abort.load() != 0 && node != job.header().lost_node.load()) {
        continue;  // a survivor stopping after the loss: expected
      }
      if (!failed && !early) continue;
      const std::string why = failed ? describe(status) : "exited without calling squall::finalize";
      if (result == 0) result = failed ? exit_code(status) : 1;
      // A node that finalized has left the job cleanly, whatever its exit status says.
      const bool lost = running > 0 && state != squall::shm::finalized;
      if (lost && job.header().abort.load() == 0) {
        std::fprintf(stderr, "squallrun: node %d (pid %d) %s; stopping the other nodes\n", node, p, why.c_str());
        job.abort(node, why.c_str());
        kill_at = squall::now_ns() + o.grace_s * 1'000'000'000;
      } else if (job.header().abort.load() == 0) {
        std::fprintf(stderr, "squallrun: node %d (pid %d) %s\n", node, p, why.c_str());
      }
    }
    // A node here may have aborted the job itself: it lost a peer on another host.
    if (kill_at < 0 && job.header().abort.load() != 0) kill_at = squall::now_ns() + o.grace_s * 1'000'000'000;
    if (kill_at >= 0 && squall::now_ns() >= kill_at && running > 0) {
      std::fprintf(stderr, "squallrun: killing the %d node(s) still running\n", running);
      forward_signal(SIGKILL);
      kill_at = INT64_MAX;
    }
  }
  if (job.header().abort.load() != 0 && result == 0) {
    std::fprintf(stderr, "squallrun: the job lost node %d (%s)\n", job.header().lost_node.load(), job.header().reason);
    result = 1;
  }
  return result;
}
