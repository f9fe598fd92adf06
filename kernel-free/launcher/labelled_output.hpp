// SPDX-License-Identifier: BSD-3-Clause
// squallrun --label: the nodes' standard output and error go through pipes that the launcher
// reads, and each line goes out whole, to the launcher's own stdout or stderr as it came,
// with its node's label "[K] " in front. Lines of different nodes never mix mid-line.
#pragma once
#include <poll.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace squallrun {

class labelled_output {
 public:
  // Makes two pipes for each of this host's `nodes` nodes, the first being job node
  // `first_node`; ends squallrun with a message when it cannot.
  labelled_output(int nodes, int first_node);
  labelled_output(const labelled_output&) = delete;
  labelled_output& operator=(const labelled_output&) = delete;
  ~labelled_output();

  // In the process of this host's node `local`, before exec: its stdout and stderr become
  // its pipes.
  void become_node(int local) const;
  // In the launcher, once node `local` is started: its pipes' writing ends are its alone.
  void started(int local);

  // One entry per stream, in relay's order (fd -1 once the stream has ended).
  void add_to(std::vector<pollfd>& fds) const;
  // Reads once from each stream that poll found ready (their entries start at `first`)
  // and writes out the whole lines read.
  void relay(const std::vector<pollfd>& fds, std::size_t first);
  // After the last node ended: what the nodes left in the pipes, then each stream's
  // unfinished last line, ended with a newline.
  void finish();
  // The errno of the first write to the launcher's stdout that failed (the nodes' output
  // then lost), or 0. One to its stderr is not kept: that is where it would be said.
  int stdout_error() const { return stdout_error_; }

 private:
  struct stream {
    int read_fd = -1;
    int write_fd = -1;
    int out_fd = -1;  // the launcher's stdout or stderr
    std::string label;
    std::string pending;  // the start of a line not ended yet
  };

  void take(stream& s, const char* data, std::size_t size);
  void put(const stream& s, const std::string& text);
  void end(stream& s);

  std::vector<stream> streams_;  // node i's stdout at 2i, its stderr at 2i+1
  std::array<char, 65536> buffer_{};
  int stdout_error_ = 0;
};

}  // namespace squallrun
