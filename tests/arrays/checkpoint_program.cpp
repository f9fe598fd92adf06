// SPDX-License-Identifier: BSD-3-Clause
// The checkpoint test's program (checkpoint_test.cmake runs it):
//   checkpoint_program write DIR   steps, checkpoints to DIR, steps on, prints the result
//   checkpoint_program read DIR    restarts from DIR, takes the same further steps, prints
//   checkpoint_program crash DIR   as write, but steps once more first, and the last node is
//                                  killed (SIGXFSZ) part way through writing its file to DIR
// The result is an exact checksum of every element's state (its doubles' bit patterns), so
// a restart on another number of nodes must print the same line.
#include <squall/arrays.hpp>
#include <squall/runtime.hpp>
#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "state_hash.hpp"

namespace arrays = squall::arrays;

namespace {

std::uint64_t checksum = 0;
int results = 0;
void got(const std::uint64_t& c) {
  checksum = c;
  ++results;
}

struct Cell : arrays::element<arrays::index2d> {
  std::vector<double> state;
  std::string name;
  void start() {
    const auto i = this_index();
    state.assign(static_cast<std::size_t>(1 + (i[0] * 7 + i[1]) % 5), 0.1 + 0.01 * i[0] + 0.001 * i[1]);
    name = "cell-" + std::to_string(i[0]) + "-" + std::to_string(i[1]);
  }
  void step() {
    for (double& x : state) x = 3.9 * x * (1 - x) + std::sin(x) * 1e-3;  // chaotic: any bit lost shows
    if (this_index()[1] % 3 == 0) migrate_me((squall::node() + 1) % squall::nodes());
  }
  void sum() {
    contribute(arrays_test::state_hash(name, state), arrays::sum<std::uint64_t>(), arrays::on_root<&got>());
  }
  template <class A>
  void serialize(A& ar) {
    ar(state, name);
  }
};

void steps(const arrays::array<Cell>& a, int n) {
  for (int s = 0; s < n; ++s) {
    if (squall::node() == 0) a.broadcast<&Cell::step>();
    arrays::quiesce();
  }
}

void print_result(const arrays::array<Cell>& a) {
  if (squall::node() == 0) a.broadcast<&Cell::sum>();
  arrays::quiesce();
  if (squall::node() == 0) std::printf("RESULT %016llx\n", static_cast<unsigned long long>(checksum));
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_program write|read|crash DIR\n");
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  try {
    auto a = arrays::array<Cell>::create();
    if (mode == "write" || mode == "crash") {
      if (squall::node() == 0)
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 7; ++j) a.insert({i, j}, (i + j) % squall::nodes());
      arrays::quiesce();
      if (squall::node() == 0) a.broadcast<&Cell::start>();
      arrays::quiesce();
      steps(a, mode == "crash" ? 6 : 5);
      if (mode == "crash" && squall::node() == squall::nodes() - 1) {
        const rlimit limit{20, RLIM_INFINITY};  // 4 bytes past its file's header: killed there
        setrlimit(RLIMIT_FSIZE, &limit);
      }
      arrays::checkpoint(dir);
    } else {
      arrays::restart(dir);
    }
    steps(a, 5);
    print_result(a);
  } catch (const std::exception& e) {
    // A damaged checkpoint fails on every node: each says so in one write, so the nodes'
    // lines do not interleave.
    std::fputs((std::string("checkpoint_program: ") + e.what() + "\n").c_str(), stderr);
    return 1;
  }
  return 0;
}
