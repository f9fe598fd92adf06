// SPDX-License-Identifier: BSD-3-Clause
// squallrun --label: the nodes' standard output and error go through pipes that the launcher
// reads, and each line goes out whole, to the launcher's own stdout or stderr as it came,
// with its node's label "[K] " in front. Lines of different nodes never mix mid-line.
// The launcher never waits on its own output while the job runs: lines its stdout or stderr
// cannot take yet are held (up to a bound, beyond which the nodes that write there are read
// no more, and wait in their writes as they would without --label), so that a reader that
// stops reading leaves squallrun still watching the nodes and answering signals.
#pragma once
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <functional>
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

  // One entry per stream, in relay's order (fd -1 once the stream has ended, or while the
  // output it goes to holds too much), then the launcher's stdout and stderr (fd -1 while
  // nothing is held for them).
  void add_to(std::vector<pollfd>& fds) const;
  // Reads once from each stream that poll found ready (their entries start at `first`),
  // and writes out the whole lines read and what was held, as far as the launcher's stdout
  // and stderr take them without waiting.
  void relay(const std::vector<pollfd>& fds, std::size_t first);
  // After the last node ended: what the nodes left in the pipes, then each stream's
  // unfinished last line, ended with a newline.
  void finish();
  // Writes out all that is held, waiting for the launcher's stdout and stderr to take it, or
  // for `wake_fd` to be readable; `give_up`, asked before each wait, says whether to drop
  // the rest instead. True when all was written (or a write failed), false when dropped.
  bool drain(int wake_fd, const std::function<bool()>& give_up);
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

  // What is held for the launcher's stdout or stderr.
  struct output {
    int fd = -1;
    std::size_t piece = 0;  // the most one write may take without waiting, once poll said it may take some
    std::string text;
    std::size_t done = 0;  // the part of text already written
    bool failed = false;   // a write failed: what comes for it is dropped
    bool mid_line = false;  // written up to the middle of a line, which the other output must not cut
    std::size_t held() const { return text.size() - done; }
  };

  void take(stream& s, const char* data, std::size_t size);
  void put(const stream& s, const std::string& text);
  void end(stream& s);
  const output& output_of(const stream& s) const { return outputs_[s.out_fd == STDOUT_FILENO ? 0 : 1]; }
  // Whether the launcher's stdout (k 0) or stderr (1) has something to write now: not while
  // the other is in the middle of a line (both may be one file, as with 2>&1).
  bool may_write(std::size_t k) const { return outputs_[k].held() > 0 && !outputs_[1 - k].mid_line; }
  // Writes what output k holds as far as its file takes it without waiting.
  void write_out(std::size_t k);

  std::vector<stream> streams_;  // node i's stdout at 2i, its stderr at 2i+1
  std::array<output, 2> outputs_;  // the launcher's stdout, its stderr
  std::array<char, 65536> buffer_{};
  int stdout_error_ = 0;
};

}  // namespace squallrun
