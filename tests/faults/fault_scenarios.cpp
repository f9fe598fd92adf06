// SPDX-License-Identifier: BSD-3-Clause
// The programs of the fault-injection matrix (fault_matrix_test): each node loops in one
// activity until the test kills, stops or cuts off one of them from outside, and must then
// end with every survivor naming the lost node.
//   lock      every node takes TSM lock 0 in turn and updates a shared counter inside;
//             the victim holds it long, so that it is usually the holder when hit
//   home      the victim is the home of a TSM array that it keeps writing and the other
//             nodes keep reading: it serves misses when hit
//   chaos     CHAOS gathers and scatter_op(add) between every pair of neighbours
//   barrier   TSM barriers
//   append    libxsm's active-message appends (am_append) to every other node, a phase
//             after another
//   arrays    libarrays elements messaging random others and migrating at random, in
//             rounds that each end with a quiesce
// Usage: fault_scenarios MODE VICTIM. Every node prints "node K pid P ready" once its loop
// runs, so the test knows whom to hit.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <squall/arrays.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/squall.hpp>
#include <squall/tsm.hpp>
#include <squall/xsm/am_append.hpp>

namespace chaos = squall::chaos;
namespace tsm = squall::tsm;

namespace {

void announce() {
  std::printf("node %d pid %d ready\n", squall::node(), static_cast<int>(getpid()));
  std::fflush(stdout);
}

// Keeps this node's CPU for about `us` microseconds without entering the library.
void compute_for(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

[[noreturn]] void lock_loop(int victim) {
  auto* counter = tsm::alloc<long>(1);
  tsm::lock_array locks(1);
  tsm::barrier();
  announce();
  for (;;) {
    locks.acquire(0);
    volatile long* shared = counter;
    shared[0] = shared[0] + 1;
    compute_for(squall::node() == victim ? 2000 : 50);
    locks.release(0);
  }
}

[[noreturn]] void home_loop(int victim) {
  constexpr std::size_t words = 4 * 4096 / sizeof(long);  // four blocks, all homed at the victim
  auto* data = tsm::alloc<long>(words, {.homes = squall::memory::home_policy::function([victim](auto) { return victim; })});
  tsm::barrier();
  announce();
  volatile long* shared = data;  // every pass reads and writes memory again
  for (long round = 0;; ++round) {
    for (std::size_t i = 0; i < words; i += 512) {
      if (squall::node() == victim) {
        shared[i] = round;
      } else {
        (void)shared[i];
      }
    }
  }
}

[[noreturn]] void chaos_loop() {
  const int me = squall::node(), n = squall::nodes();
  constexpr chaos::index size = 4000;
  const auto table = chaos::translation_table::block(size);
  std::vector<chaos::index> refs;  // elements of the next node's block
  const chaos::index next_first = size / n * ((me + 1) % n);
  for (chaos::index k = 0; k < 100; ++k) refs.push_back(next_first + k);
  const auto s = chaos::inspect(table, {std::span<chaos::index>(refs)});
  std::vector<double> x(static_cast<std::size_t>(s.ghost_end()), 1.0);
  squall::barrier();
  announce();
  for (;;) {
    chaos::gather(s, std::span<double>(x));
    chaos::scatter_op(s, std::span<double>(x), chaos::combine::add{});
  }
}

[[noreturn]] void barrier_loop() {
  tsm::barrier();
  announce();
  for (;;) tsm::barrier();
}

[[noreturn]] void append_loop() {
  const int me = squall::node(), n = squall::nodes();
  constexpr int per_phase = 64;  // appends each node sends a phase, spread over the others
  squall::xsm::am_append moved(sizeof(std::uint64_t), per_phase);
  announce();
  for (std::uint64_t phase = 0;; ++phase) {
    if (n > 1) {
      for (int k = 0; k < per_phase; ++k) moved.append((me + 1 + k % (n - 1)) % n, phase);
    }
    moved.end_phase();
  }
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr int hoppers_per_node = 16;
struct Hopper;
squall::arrays::array<Hopper, squall::arrays::index1d>* hoppers = nullptr;

// An element that passes a chain of messages on to random elements and now and then
// migrates: when the victim is hit, messages, migrations and location news are in flight.
struct Hopper : squall::arrays::element<squall::arrays::index1d> {
  std::uint64_t state = 0;
  void hop(std::uint64_t r, int ttl) {
    state = mix(state ^ r);
    const int elements = hoppers_per_node * squall::nodes();
    if (ttl > 0) (*hoppers)[static_cast<std::int32_t>(state % elements)].call<&Hopper::hop>(state, ttl - 1);
    if ((state >> 20) % 4 == 0) migrate_me(static_cast<int>((state >> 24) % squall::nodes()));
  }
  template <class A>
  void serialize(A& ar) {
    ar(state);
  }
};

[[noreturn]] void arrays_loop() {
  namespace arrays = squall::arrays;
  auto a = arrays::array<Hopper>::create();
  hoppers = &a;
  const int me = squall::node(), elements = hoppers_per_node * squall::nodes();
  for (int i = me; i < elements; i += squall::nodes()) a.insert(i);
  arrays::quiesce();
  announce();
  for (std::uint64_t round = 0;; ++round) {
    for (int i = 0; i < hoppers_per_node; ++i) {  // each node starts as many chains as it has elements
      const std::uint64_t start = mix((round << 16) | static_cast<std::uint64_t>(me * hoppers_per_node + i));
      a[static_cast<std::int32_t>(start % static_cast<std::uint64_t>(elements))].call<&Hopper::hop>(start, 8);
    }
    arrays::quiesce();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : 1;
  squall::runtime rt(&argc, &argv);
  if (mode == "lock") lock_loop(victim);
  if (mode == "home") home_loop(victim);
  if (mode == "chaos") chaos_loop();
  if (mode == "barrier") barrier_loop();
  if (mode == "append") append_loop();
  if (mode == "arrays") arrays_loop();
  std::fprintf(stderr, "usage: fault_scenarios lock|home|chaos|barrier|append|arrays VICTIM\n");
  return 2;
}
