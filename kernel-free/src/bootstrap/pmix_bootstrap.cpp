// SPDX-License-Identifier: BSD-3-Clause
#include "bootstrap/pmix_bootstrap.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pmix.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "common/config.hpp"
#include "common/log.hpp"

namespace squall::boot {
namespace {

void check(pmix_status_t rc, const char* what) {
  if (rc != PMIX_SUCCESS) fatal("PMIx %s failed: %s (is this a PMIx launcher such as mpirun?)", what, PMIx_Error_string(rc));
}

// "0,1,2" -> those node ids.
std::vector<int> parse_peers(const char* text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

// Unguessable (128 random bits), so that no other user of the host can make the name first;
// with the creator's pid, so that a later job can tell a name abandoned (sweep_abandoned).
std::string shm_name() {
  const tcp::job_secret random = tcp::make_secret();
  return "/squall-" + std::to_string(::getpid()) + "-" + tcp::to_hex(std::span(random).first(16));
}

// The pid in a job area's name "squall-<pid>-<32 hex digits>", or 0 when it is not one.
pid_t creator_of(const std::string& name) {
  constexpr std::string_view prefix = "squall-";
  if (!name.starts_with(prefix)) return 0;
  const auto dash = name.find('-', prefix.size());
  if (dash == std::string::npos || dash == prefix.size() || name.size() - dash - 1 != 32) return 0;
  pid_t pid = 0;
  for (std::size_t i = prefix.size(); i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100'000'000) return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

// A job killed during its start-up (between the area's creation and the second fence below)
// leaves the area's name in /dev/shm. Each new job's first node removes this user's names whose
// creator is gone and which are older than a start-up can be: a minute.
void sweep_abandoned() {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return;
  const std::time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    const pid_t pid = creator_of(name);
    struct stat st;
    if (pid <= 0 || ::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || now - st.st_mtime < 60) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    ::shm_unlink(("/" + name).c_str());
  }
  ::closedir(dir);
}

// While the host's first node holds the job area's name (until every node of the host has
// opened it), a SIGTERM, SIGINT or SIGHUP (mpirun stopping a job whose rank failed at start-up)
// removes the name before the signal has its effect, which would otherwise leave the name
// in /dev/shm. The program's own handling of the signal then runs as before.
class name_removed_on_signals {
 public:
  explicit name_removed_on_signals(const std::string& name) {
    std::snprintf(path_, sizeof path_, "/dev/shm%s", name.c_str());
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(signals_); ++i) ::sigaction(signals_[i], &sa, &before_[i]);
  }
  ~name_removed_on_signals() {
    for (std::size_t i = 0; i < std::size(signals_); ++i) ::sigaction(signals_[i], &before_[i], nullptr);
    path_[0] = '\0';
  }
  name_removed_on_signals(const name_removed_on_signals&) = delete;
  name_removed_on_signals& operator=(const name_removed_on_signals&) = delete;

 private:
  static void on_signal(int sig) {
    if (path_[0] != '\0') ::unlink(path_);
    for (std::size_t i = 0; i < std::size(signals_); ++i) {
      if (signals_[i] == sig) ::sigaction(sig, &before_[i], nullptr);
    }
    ::raise(sig);  // blocked until this handler returns; then handled as before
  }
  static constexpr int signals_[] = {SIGTERM, SIGINT, SIGHUP};
  static inline struct sigaction before_[std::size(signals_)];
  static inline char path_[256];
};

}  // namespace

bool under_pmix() {
  const char* rank = std::getenv("PMIX_RANK");
  const char* ns = std::getenv("PMIX_NAMESPACE");
  return rank != nullptr && *rank != '\0' && ns != nullptr && *ns != '\0';
}

pmix_job::pmix_job(std::size_t ring_bytes) {
  pmix_proc_t self;
  check(PMIx_Init(&self, nullptr, 0), "initialisation");
  me_ = static_cast<int>(self.rank);
  nspace_ = self.nspace;
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* v = nullptr;
  check(PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v), "query of the job size");
  n_ = static_cast<int>(v->data.uint32);
  PMIX_VALUE_RELEASE(v);
  check(PMIx_Get(&job, PMIX_LOCAL_PEERS, nullptr, 0, &v), "query of the nodes on this host");
  const std::vector<int> peers = parse_peers(v->data.string);
  PMIX_VALUE_RELEASE(v);
  local_.assign(static_cast<std::size_t>(n_), false);
  int leader = me_;
  for (int p : peers) {
    if (p < 0 || p >= n_) fatal("PMIx listed node %d on this host, outside the job's %d nodes", p, n_);
    local_[p] = true;
    leader = std::min(leader, p);
  }
  local_[me_] = true;

  // The host's first node makes the job area and hands its name to the host's other nodes
  // through PMIx; they map it after the fence; the name goes once everyone holds it, so
  // nothing is left in /dev/shm after the job.
  std::string name;
  std::optional<name_removed_on_signals> removed_on_signals;
  if (me_ == leader) {
    sweep_abandoned();
    name = area_name_ = shm_name();
    removed_on_signals.emplace(name);
    const int fd = shm::job_area::create_named(name);
    job_ = shm::job_area::create_in(fd, n_, ring_bytes, local_);
    ::close(fd);
    pmix_value_t where;
    PMIX_VALUE_LOAD(&where, name.c_str(), PMIX_STRING);
    check(PMIx_Put(PMIX_LOCAL, "squall.area", &where), "put");
    PMIX_VALUE_DESTRUCT(&where);
  }
  check(PMIx_Commit(), "commit");
  fence();
  if (me_ != leader) {
    name = get_string(leader, "squall.area");
    job_ = shm::job_area::attach(shm::job_area::open_named(name));
  }
  fence();
  if (me_ == leader) ::shm_unlink(name.c_str());
  area_name_.clear();
}

void pmix_job::finalize() {
  if (finalized_) return;
  finalized_ = true;
  PMIx_Finalize(nullptr, 0);
}

// Every fence is of the job's start-up, and a node that never comes (it ended, or stopped,
// before squall::init: the launcher may not say so) would hold the others in it for ever.
// So each is bounded, as the TCP set-up is, by SQUALL_TCP_TIMEOUT.
void pmix_job::fence() {
  pmix_info_t info[2];
  bool collect = true;
  int timeout_s = static_cast<int>(env_int("SQUALL_TCP_TIMEOUT", 30, 1, 3600));
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
  const pmix_status_t rc = PMIx_Fence(nullptr, 0, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc == PMIX_ERR_TIMEOUT) {
    if (!area_name_.empty()) ::shm_unlink(area_name_.c_str());
    fatal("not every node of the job reached its start-up within %d s (SQUALL_TCP_TIMEOUT): has one ended, or "
          "stopped, before squall::init?",
          timeout_s);
  }
  check(rc, "fence");
}

std::string pmix_job::get_string(int node, const char* key) {
  pmix_proc_t p;
  PMIX_LOAD_PROCID(&p, nspace_.c_str(), static_cast<pmix_rank_t>(node));
  pmix_value_t* v = nullptr;
  const pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
  if (rc != PMIX_SUCCESS || v->type != PMIX_STRING) {
    fatal("node %d did not publish %s through PMIx: %s", node, key, PMIx_Error_string(rc));
  }
  std::string s = v->data.string;
  PMIX_VALUE_RELEASE(v);
  return s;
}

tcp::job_secret pmix_job::agree_on_secret() {
  std::string hex;
  if (me_ == 0) {
    hex = tcp::to_hex(tcp::make_secret());
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, hex.c_str(), PMIX_STRING);
    check(PMIx_Put(PMIX_GLOBAL, "squall.secret", &v), "put");
    PMIX_VALUE_DESTRUCT(&v);
  }
  check(PMIx_Commit(), "commit");
  fence();
  if (me_ != 0) hex = get_string(0, "squall.secret");
  ::setenv("SQUALL_JOB_SECRET", hex.c_str(), 1);  // one reader of the secret: secret_from_env
  return tcp::secret_from_env();
}

std::vector<tcp::endpoint> pmix_job::exchange_endpoints(const tcp::endpoint& mine) {
  const std::string text = std::to_string(mine.ipv4) + ":" + std::to_string(mine.port);
  pmix_value_t v;
  PMIX_VALUE_LOAD(&v, text.c_str(), PMIX_STRING);
  check(PMIx_Put(PMIX_GLOBAL, "squall.tcp", &v), "put");
  PMIX_VALUE_DESTRUCT(&v);
  check(PMIx_Commit(), "commit");
  fence();
  std::vector<tcp::endpoint> out(static_cast<std::size_t>(n_));
  for (int i = 0; i < n_; ++i) {
    const std::string s = get_string(i, "squall.tcp");
    const auto colon = s.find(':');
    out[i].ipv4 = static_cast<std::uint32_t>(std::strtoul(s.c_str(), nullptr, 10));
    out[i].port = static_cast<std::uint16_t>(std::strtoul(s.c_str() + colon + 1, nullptr, 10));
  }
  return out;
}

}  // namespace squall::boot
