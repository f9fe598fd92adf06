// SPDX-License-Identifier: BSD-3-Clause
// Why a file descriptor could not be made (a memfd, a socket, an eventfd, an epoll, the
// userfaultfd): the system's words and, when a limit of open files was met, which one and
// what to do. Every segment holds a memfd or two on each node and every peer a socket, so a
// program with many segments meets `ulimit -n`; the message said only "Too many open files".
#pragma once
#include <string>

namespace squall {

// strerror(err), followed for EMFILE by the process's limit of open files (`ulimit -n`, which
// squall::init raised to its hard limit) and for ENFILE by the system's (fs.file-max).
std::string descriptor_failure(int err);

}  // namespace squall
