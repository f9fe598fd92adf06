// SPDX-License-Identifier: BSD-3-Clause
// System calls and stdio calls that read or write the program's buffers, interposed so that
// they work on shared memory whatever its tags (see shared_access.hpp). A call whose
// buffers are outside the segment range costs one comparison more.
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/log.hpp"
#include "memory/counters.hpp"
#include "memory/shared_access.hpp"

namespace squall::memory::detail {
namespace {

constexpr int max_retries = 64;

// The next definition after this library's; when the C library comes first in the lookup
// order (this library loaded only as another library's dependency), the C library's own.
template <class F>
F next_definition(F, const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    static void* const c = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (c != nullptr) f = dlsym(c, name);
  }
  if (f == nullptr) fatal("cannot find the C library's %s", name);
  return reinterpret_cast<F>(f);
}

// The C library's definitions, found once (at load, so never first in a signal handler).
struct c_library {
  decltype(&::read) read = next_definition(&::read, "read");
  decltype(&::pread) pread = next_definition(&::pread, "pread");
  decltype(&::pread64) pread64 = next_definition(&::pread64, "pread64");
  decltype(&::readv) readv = next_definition(&::readv, "readv");
  decltype(&::recv) recv = next_definition(&::recv, "recv");
  decltype(&::recvfrom) recvfrom = next_definition(&::recvfrom, "recvfrom");
  decltype(&::recvmsg) recvmsg = next_definition(&::recvmsg, "recvmsg");
  decltype(&::write) write = next_definition(&::write, "write");
  decltype(&::pwrite) pwrite = next_definition(&::pwrite, "pwrite");
  decltype(&::pwrite64) pwrite64 = next_definition(&::pwrite64, "pwrite64");
  decltype(&::writev) writev = next_definition(&::writev, "writev");
  decltype(&::send) send = next_definition(&::send, "send");
  decltype(&::sendto) sendto = next_definition(&::sendto, "sendto");
  decltype(&::sendmsg) sendmsg = next_definition(&::sendmsg, "sendmsg");
  decltype(&::fread) fread = next_definition(&::fread, "fread");
  decltype(&::fwrite) fwrite = next_definition(&::fwrite, "fwrite");
};

const c_library& libc() {
  static const c_library functions;
  return functions;
}
[[maybe_unused]] const c_library& resolved_at_load = libc();

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Runs `call` (returning -1 and errno on failure) on a buffer that may be shared memory.
template <class Call>
ssize_t on_buffer(std::uintptr_t p, std::size_t len, bool write, Call call) {
  if (!prepare_access(p, len, write)) return call();
  for (int attempt = 0;; ++attempt) {
    const ssize_t r = call();
    if (r != -1 || errno != EFAULT || attempt == max_retries) return r;
    count(syscall_retries);
    repair_access(p, len, write);
  }
}

template <class Call>
ssize_t on_buffers(const iovec* iov, int count_of, bool write, Call call) {
  bool shared = false;
  for (int i = 0; i < count_of; ++i) shared |= prepare_access(address(iov[i].iov_base), iov[i].iov_len, write);
  if (!shared) return call();
  for (int attempt = 0;; ++attempt) {
    const ssize_t r = call();
    if (r != -1 || errno != EFAULT || attempt == max_retries) return r;
    count(syscall_retries);
    for (int i = 0; i < count_of; ++i) repair_access(address(iov[i].iov_base), iov[i].iov_len, write);
  }
}

// fread and fwrite report a failed system call as a short count with the error flag set:
// retry the rest after an EFAULT.
template <class Call>
std::size_t on_stream(void* p, std::size_t size, std::size_t n, FILE* stream, bool write, Call call) {
  const std::size_t total = size * n;
  if (size == 0 || !prepare_access(address(p), total, write)) return call(p, size, n);
  auto* bytes = static_cast<char*>(p);
  std::size_t done = 0;
  for (int attempt = 0; done < total; ++attempt) {
    done += call(bytes + done, 1, total - done);
    if (done == total || !std::ferror(stream) || errno != EFAULT || attempt == max_retries) break;
    std::clearerr(stream);
    count(syscall_retries);
    repair_access(address(bytes + done), total - done, write);
  }
  return done / size;
}

}  // namespace
}  // namespace squall::memory::detail

using squall::memory::detail::address;
using squall::memory::detail::libc;
using squall::memory::detail::on_buffer;
using squall::memory::detail::on_buffers;
using squall::memory::detail::on_stream;

extern "C" {

ssize_t read(int fd, void* buf, size_t n) {
  return on_buffer(address(buf), n, true, [&] { return libc().read(fd, buf, n); });
}
ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  return on_buffer(address(buf), n, true, [&] { return libc().pread(fd, buf, n, offset); });
}
ssize_t pread64(int fd, void* buf, size_t n, off64_t offset) {
  return on_buffer(address(buf), n, true, [&] { return libc().pread64(fd, buf, n, offset); });
}
ssize_t readv(int fd, const iovec* iov, int count) {
  return on_buffers(iov, count, true, [&] { return libc().readv(fd, iov, count); });
}
ssize_t recv(int fd, void* buf, size_t n, int flags) {
  return on_buffer(address(buf), n, true, [&] { return libc().recv(fd, buf, n, flags); });
}
ssize_t recvfrom(int fd, void* __restrict buf, size_t n, int flags, sockaddr* __restrict from,
                 socklen_t* __restrict from_len) {
  return on_buffer(address(buf), n, true, [&] { return libc().recvfrom(fd, buf, n, flags, from, from_len); });
}
ssize_t recvmsg(int fd, msghdr* message, int flags) {
  return on_buffers(message->msg_iov, static_cast<int>(message->msg_iovlen), true,
                    [&] { return libc().recvmsg(fd, message, flags); });
}
ssize_t write(int fd, const void* buf, size_t n) {
  return on_buffer(address(buf), n, false, [&] { return libc().write(fd, buf, n); });
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  return on_buffer(address(buf), n, false, [&] { return libc().pwrite(fd, buf, n, offset); });
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  return on_buffer(address(buf), n, false, [&] { return libc().pwrite64(fd, buf, n, offset); });
}
ssize_t writev(int fd, const iovec* iov, int count) {
  return on_buffers(iov, count, false, [&] { return libc().writev(fd, iov, count); });
}
ssize_t send(int fd, const void* buf, size_t n, int flags) {
  return on_buffer(address(buf), n, false, [&] { return libc().send(fd, buf, n, flags); });
}
ssize_t sendto(int fd, const void* buf, size_t n, int flags, const sockaddr* to, socklen_t to_len) {
  return on_buffer(address(buf), n, false, [&] { return libc().sendto(fd, buf, n, flags, to, to_len); });
}
ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  return on_buffers(message->msg_iov, static_cast<int>(message->msg_iovlen), false,
                    [&] { return libc().sendmsg(fd, message, flags); });
}
size_t fread(void* __restrict buf, size_t size, size_t n, FILE* __restrict stream) {
  return on_stream(buf, size, n, stream, true,
                   [&](void* p, size_t s, size_t k) { return libc().fread(p, s, k, stream); });
}
size_t fwrite(const void* __restrict buf, size_t size, size_t n, FILE* __restrict stream) {
  return on_stream(const_cast<void*>(buf), size, n, stream, false,
                   [&](void* p, size_t s, size_t k) { return libc().fwrite(p, s, k, stream); });
}

}  // extern "C"
