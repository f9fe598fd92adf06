// SPDX-License-Identifier: BSD-3-Clause
#include "program_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace squallrun {

namespace {

// 0 when `path` is a file this process may execute, else why not (an errno value).
int executable(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (!S_ISREG(st.st_mode)) return EACCES;
  return access(path.c_str(), X_OK) == 0 ? 0 : errno;
}

int status_for(int error) { return error == ENOENT || error == ENOTDIR ? 127 : 126; }

}  // namespace

std::optional<cannot_run> check_program(const std::string& program) {
  if (program.empty()) return cannot_run{std::strerror(ENOENT), 127};
  if (program.find('/') != std::string::npos) {
    const int error = executable(program);
    if (error == 0) return std::nullopt;
    return cannot_run{std::strerror(error), status_for(error)};
  }
  // execvp's search: PATH's directories in order, an empty one meaning the current
  // directory, /bin:/usr/bin when PATH is unset; a file found but not executable is
  // reported only if no later directory has one that is.
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/bin:/usr/bin";
  int found_but = 0;
  for (std::size_t start = 0;;) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = end == start ? "." : path.substr(start, end - start);
    const int error = executable(dir + "/" + program);
    if (error == 0) return std::nullopt;
    if (error == EACCES || error == EISDIR) found_but = error;
    if (end == path.size()) break;
    start = end + 1;
  }
  if (found_but != 0) return cannot_run{std::strerror(found_but), 126};
  return cannot_run{"not found in PATH", 127};
}

}  // namespace squallrun
