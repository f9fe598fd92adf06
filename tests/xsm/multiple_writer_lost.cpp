// SPDX-License-Identifier: BSD-3-Clause
// A node lost in the middle of a multiple-writer phase (run by CTest under squallrun -n 4):
// every node writes its slice of pages homed on every node, then node K (argv[1]) is killed
// before the barrier, while the others send it their diffs and wait for its answers. Each
// survivor must report "node K was lost" and end, with no hang.
#include <signal.h>

#include <cstdint>
#include <cstdlib>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm.hpp>
#include <squall/xsm/multiple_writer.hpp>

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int victim = argc > 1 ? std::atoi(argv[1]) : 1;
  constexpr std::size_t page_words = 512, pages = 16;
  squall::xsm::multiple_writer mw;
  auto* data = squall::xsm::alloc<std::uint64_t>(pages * page_words, mw);
  const std::size_t w = page_words / static_cast<std::size_t>(squall::nodes());
  for (int phase = 0;; ++phase) {
    for (std::size_t p = 0; p < pages; ++p) {
      for (std::size_t i = 0; i < w; ++i) data[p * page_words + static_cast<std::size_t>(squall::node()) * w + i] = static_cast<std::uint64_t>(phase);
    }
    if (phase == 2 && squall::node() == victim) raise(SIGKILL);
    squall::tsm::barrier();
  }
}
