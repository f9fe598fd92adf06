// SPDX-License-Identifier: BSD-3-Clause
// A page of plain shared memory between nodes 0 and 1 of a job on one host, outside
// Squall's segments: what the floors of the message benchmarks ping-pong on.
#pragma once
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <squall/squall.hpp>

namespace squall::bench {

// Collective over the job (every node calls it); nodes 0 and 1 get the same zeroed page,
// the others nullptr. Node 0 creates a POSIX shared-memory object named after its pid,
// node 1 opens it, and it is unlinked once both have mapped it.
inline void* shared_page(const char* bench_name) {
  const int me = squall::node();
  int pid = me == 0 ? getpid() : 0;
  squall::broadcast(pid);
  const std::string name = "/squall-" + std::string(bench_name) + "-" + std::to_string(pid);
  int fd = -1;
  if (me == 0) {
    fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) std::perror("shm_open"), std::exit(1);
  }
  squall::barrier();
  if (me == 1) fd = shm_open(name.c_str(), O_RDWR, 0600);
  void* p = nullptr;
  if (me < 2) {
    p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd < 0 || p == MAP_FAILED) std::perror("mapping the shared page"), std::exit(1);
    close(fd);
  }
  squall::barrier();
  if (me == 0) shm_unlink(name.c_str());
  return p;
}

}  // namespace squall::bench
