// SPDX-License-Identifier: BSD-3-Clause
#include "common/descriptor_failure.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace squall {

std::string descriptor_failure(int err) {
  std::string why = std::strerror(err);
  rlimit files{};
  if (err == EMFILE && ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    why += " (this process's limit of open files, 'ulimit -n', is " + std::to_string(files.rlim_cur) +
           "; squall::init raises it to the hard limit, 'ulimit -Hn'. Each segment holds a memfd or two on "
           "every node, each peer a socket: raise the hard limit, or make fewer, larger segments)";
  } else if (err == ENFILE) {
    why += " (the system's limit of open files, fs.file-max in /proc/sys/fs/file-max, is reached)";
  }
  return why;
}

}  // namespace squall
