// SPDX-License-Identifier: BSD-3-Clause
#include "labelled_output.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace squallrun {

namespace {

// A line this long without a newline is written out in pieces, each labelled, rather than
// held without bound.
constexpr std::size_t longest_line = 1 << 16;

// Writes all of `text` to `fd`; the errno of a write that failed, or 0.
int write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {  // the launcher's own output may be non-blocking
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, -1);
    } else if (n < 0 && errno != EINTR) {
      return errno;  // nowhere to write: the nodes' output is dropped (and the job fails)
    }
  }
  return 0;
}

}  // namespace

labelled_output::labelled_output(int nodes, int first_node) {
  streams_.resize(static_cast<std::size_t>(2 * nodes));
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    stream& s = streams_[i];
    int ends[2];
    // Close-on-exec: a node keeps only its own two, as its stdout and stderr.
    if (pipe2(ends, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "squallrun: --label needs two pipes per node and cannot make more (%s) for %d nodes\n",
                   std::strerror(errno), nodes);
      std::exit(2);
    }
    s.read_fd = ends[0];
    s.write_fd = ends[1];
    fcntl(s.read_fd, F_SETFL, O_NONBLOCK);
    s.out_fd = i % 2 == 0 ? STDOUT_FILENO : STDERR_FILENO;
    s.label = "[" + std::to_string(first_node + static_cast<int>(i / 2)) + "] ";
  }
}

labelled_output::~labelled_output() {
  for (stream& s : streams_) {
    if (s.read_fd >= 0) close(s.read_fd);
    if (s.write_fd >= 0) close(s.write_fd);
  }
}

void labelled_output::become_node(int local) const {
  const auto i = static_cast<std::size_t>(2 * local);
  dup2(streams_[i].write_fd, STDOUT_FILENO);
  dup2(streams_[i + 1].write_fd, STDERR_FILENO);
}

void labelled_output::started(int local) {
  for (std::size_t i = static_cast<std::size_t>(2 * local); i < static_cast<std::size_t>(2 * local + 2); ++i) {
    close(streams_[i].write_fd);
    streams_[i].write_fd = -1;
  }
}

void labelled_output::add_to(std::vector<pollfd>& fds) const {
  for (const stream& s : streams_) fds.push_back({s.read_fd, POLLIN, 0});
}

void labelled_output::relay(const std::vector<pollfd>& fds, std::size_t first) {
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    stream& s = streams_[i];
    if (s.read_fd < 0 || fds[first + i].revents == 0) continue;
    const ssize_t n = read(s.read_fd, buffer_.data(), buffer_.size());
    if (n > 0) {
      take(s, buffer_.data(), static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      end(s);
    }
  }
}

void labelled_output::finish() {
  // Only what is in the pipe now: a process the node left behind may still hold it open.
  for (stream& s : streams_) {
    if (s.read_fd < 0) continue;
    int left = 0;
    ioctl(s.read_fd, FIONREAD, &left);
    while (left > 0) {
      const ssize_t n = read(s.read_fd, buffer_.data(), std::min(buffer_.size(), static_cast<std::size_t>(left)));
      if (n <= 0) break;
      take(s, buffer_.data(), static_cast<std::size_t>(n));
      left -= static_cast<int>(n);
    }
    end(s);
  }
}

void labelled_output::take(stream& s, const char* data, std::size_t size) {
  s.pending.append(data, size);
  std::string out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    out += s.label;
    out.append(s.pending, start, nl + 1 - start);
  }
  s.pending.erase(0, start);
  if (s.pending.size() >= longest_line) {
    out += s.label + s.pending + '\n';
    s.pending.clear();
  }
  if (!out.empty()) put(s, out);
}

void labelled_output::put(const stream& s, const std::string& text) {
  const int error = write_all(s.out_fd, text);
  if (error != 0 && s.out_fd == STDOUT_FILENO && stdout_error_ == 0) stdout_error_ = error;
}

void labelled_output::end(stream& s) {
  if (!s.pending.empty()) put(s, s.label + s.pending + '\n');
  s.pending.clear();
  close(s.read_fd);
  s.read_fd = -1;
}

}  // namespace squallrun
