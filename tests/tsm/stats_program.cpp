// SPDX-License-Identifier: BSD-3-Clause
// A small TSM program for stats_report_test: every node writes its part of a shared array,
// reads its neighbour's, adds under a lock, and sends `notes` user messages to node 0.
// Exits non-zero on a wrong sum or a missing note.
#include <atomic>
#include <cstdint>
#include <cstdio>

#include <squall/squall.hpp>
#include <squall/tsm.hpp>

namespace am = squall::am;

namespace {

constexpr int notes = 5;
constexpr std::size_t per_node = 2048;  // four pages of 8-byte words
std::atomic<int> notes_received{0};

void on_stats_note(am::token&, int) { notes_received.fetch_add(1); }

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  auto* x = squall::tsm::alloc<std::uint64_t>(per_node * static_cast<std::size_t>(n) + 1);
  std::uint64_t* const counter = x + per_node * static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < per_node; ++i) x[static_cast<std::size_t>(me) * per_node + i] = i + 1;
  squall::tsm::barrier();
  const std::size_t neighbour = static_cast<std::size_t>((me + 1) % n);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < per_node; ++i) sum += x[neighbour * per_node + i];
  squall::tsm::lock_array lock(1);
  lock.acquire(0);
  *counter += 1;
  lock.release(0);
  for (int k = 0; k < notes; ++k) am::send<on_stats_note>(0, me);
  squall::fence();
  squall::tsm::barrier();
  bool ok = sum == per_node * (per_node + 1) / 2 && *counter == static_cast<std::uint64_t>(n);
  if (me == 0) ok = ok && notes_received.load() == notes * n;
  squall::tsm::barrier();
  squall::tsm::free(x);
  if (!ok) std::fprintf(stderr, "stats_program: node %d got wrong sums or notes\n", me);
  return ok ? 0 : 1;
}
