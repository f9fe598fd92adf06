// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include <squall/stats.hpp>

#include "collectives/internal.hpp"
#include "common/log.hpp"
#include "stats/job_counters.hpp"
#include "stats/json.hpp"
#include "stats/tables.hpp"
#include "transport/network_transport.hpp"

namespace squall::rt {
namespace {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

std::string utc_now(const char* layout) {
  const std::time_t now = std::time(nullptr);
  std::tm t{};
  gmtime_r(&now, &t);
  char text[64];
  std::strftime(text, sizeof text, layout, &t);
  return text;
}

// Writes the JSON report; returns why it could not ("" when it did). A regular file left
// partly written (a full disk) is removed: half a JSON object is no report.
std::string write_json(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "SQUALL_STATS: could not write " + path + ": " + std::strerror(errno);
  int error = std::fputs(text.c_str(), f) < 0 ? errno : 0;
  if (std::fclose(f) != 0 && error == 0) error = errno;
  if (error == 0) return "";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) unlink(path.c_str());
  return "SQUALL_STATS: could not write " + path + ": " + std::strerror(error);
}

// Why `path` cannot take the JSON report (a reason as strerror gives it), or nullptr: it
// is a file (or a pipe or a terminal, as /dev/stdout may be) that can be written, or a new
// name in a directory that can be written.
const char* why_not_writable(const std::string& path, std::string& what) {
  struct stat st {};
  what = path;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return std::strerror(EISDIR);
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) return "not a regular file";
    return access(path.c_str(), W_OK) == 0 ? nullptr : std::strerror(errno);
  }
  const auto slash = path.rfind('/');
  what = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(what.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return std::strerror(ENOTDIR);
  return access(what.c_str(), W_OK | X_OK) == 0 ? nullptr : std::strerror(errno);
}

}  // namespace

void check_report_file(const node_runtime& nd) {
  const std::string& path = nd.config.stats.json_path;
  if (nd.me != 0 || path.empty()) return;
  std::string what;  // the path, or the directory it would be made in
  if (const char* why = why_not_writable(path, what)) {
    fatal("SQUALL_STATS=json:%s: node 0 cannot write %s (%s)", path.c_str(), what.c_str(), why);
  }
}

std::string report(const node_runtime& nd) {
  // Taken before gathering, so that the gathering's own messages are not in the numbers.
  const auto mine = stats::encode(stats::take(), {host_name(), nd.net ? nd.net->describe() : std::string()});
  const auto all = detail::gather_bytes(mine);
  if (nd.me != 0) return "";
  const auto job = stats::decode(all);
  const auto& forms = nd.config.stats;
  std::string text;
  const std::string date = utc_now("%Y-%m-%d %H:%M:%S UTC");
  if (forms.table || !forms.any()) text += stats::summary_table(job, date);
  if (forms.nodes) text += stats::per_node_table(job, date);
  std::string failure;
  if (!forms.json_path.empty()) failure = write_json(forms.json_path, stats::to_json(job, utc_now("%Y-%m-%dT%H:%M:%SZ")));
  std::fflush(stdout);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  return failure;
}

}  // namespace squall::rt
