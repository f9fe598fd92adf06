// SPDX-License-Identifier: BSD-3-Clause
#include "labelled_output.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace squallrun {

namespace {

// A line this long without a newline is written out in pieces, each labelled, rather than
// held without bound.
constexpr std::size_t longest_line = 1 << 16;

// Output held for the launcher's stdout or stderr, when it does not take it as fast as the
// nodes write, before the streams that go there are read no more.
constexpr std::size_t most_held = 1 << 20;

// The most one write may take without waiting once poll said the file takes more: a pipe's
// or FIFO's free page takes PIPE_BUF at once; a regular file never waits.
std::size_t piece_for(int fd) {
  struct stat st {};
  if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) && isatty(fd) == 0) return 1 << 20;
  return PIPE_BUF;
}

}  // namespace

labelled_output::labelled_output(int nodes, int first_node) {
  for (int k = 0; k < 2; ++k) {
    outputs_[static_cast<std::size_t>(k)].fd = k == 0 ? STDOUT_FILENO : STDERR_FILENO;
    outputs_[static_cast<std::size_t>(k)].piece = piece_for(k == 0 ? STDOUT_FILENO : STDERR_FILENO);
  }
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
  for (const stream& s : streams_) fds.push_back({output_of(s).held() < most_held ? s.read_fd : -1, POLLIN, 0});
  for (std::size_t k = 0; k < outputs_.size(); ++k) fds.push_back({may_write(k) ? outputs_[k].fd : -1, POLLOUT, 0});
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
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    if (fds[first + streams_.size() + k].revents != 0) write_out(k);
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
  const std::size_t k = s.out_fd == STDOUT_FILENO ? 0 : 1;
  output& o = outputs_[k];
  if (o.failed) return;
  if (o.done > 0 && o.done >= o.held()) {  // what was written goes once it is the larger part
    o.text.erase(0, o.done);
    o.done = 0;
  }
  o.text += text;
  write_out(k);
}

void labelled_output::write_out(std::size_t k) {
  output& o = outputs_[k];
  while (may_write(k)) {
    pollfd p{o.fd, POLLOUT, 0};
    if (poll(&p, 1, 0) <= 0) return;  // not yet: relay tries again when poll says so
    std::size_t size = std::min(o.held(), o.piece);
    if (size < o.held()) {  // a piece that ends a line, if one ends in it
      const auto nl = o.text.rfind('\n', o.done + size - 1);
      if (nl != std::string::npos && nl >= o.done) size = nl + 1 - o.done;
    }
    const ssize_t n = write(o.fd, o.text.data() + o.done, size);
    if (n > 0) {
      o.done += static_cast<std::size_t>(n);
      o.mid_line = o.text[o.done - 1] != '\n';
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {  // the launcher's own output may be non-blocking
      return;
    } else {  // nowhere to write: the nodes' output is dropped (and the job fails)
      if (o.fd == STDOUT_FILENO && stdout_error_ == 0) stdout_error_ = n < 0 ? errno : EIO;
      o.failed = true;
      o.mid_line = false;
      o.text.clear();
      o.done = 0;
      return;
    }
  }
  if (o.held() == 0) {
    o.text.clear();
    o.done = 0;
  }
}

bool labelled_output::drain(int wake_fd, const std::function<bool()>& give_up) {
  for (;;) {
    std::vector<pollfd> fds{{wake_fd, POLLIN, 0}};
    for (std::size_t k = 0; k < outputs_.size(); ++k) fds.push_back({may_write(k) ? outputs_[k].fd : -1, POLLOUT, 0});
    if (fds[1].fd < 0 && fds[2].fd < 0) return true;
    if (give_up()) {
      for (output& o : outputs_) {
        o.text.clear();
        o.done = 0;
        o.mid_line = false;
      }
      return false;
    }
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return true;
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
      if (fds[k + 1].revents != 0) write_out(k);
    }
  }
}

void labelled_output::end(stream& s) {
  if (!s.pending.empty()) put(s, s.label + s.pending + '\n');
  s.pending.clear();
  close(s.read_fd);
  s.read_fd = -1;
}

}  // namespace squallrun
