// SPDX-License-Identifier: BSD-3-Clause
// Programs that misuse the library on purpose, run by scenarios_test under squallrun:
//   type-mismatch   node 0 gathers doubles over a schedule the others gather int64s over
//   same-type       the same gather with int64s everywhere (the control: must succeed)
//   skip-gather     node 1 skips a gather the others make (they then meet in a barrier)
//   add-scatter     node 1 makes a scatter before the gather every node makes
//   scatter-for-gather  node 0 calls scatter_op_begin/end where the others call gather
//   append-for-gather   node 0 calls scatter_append where the others call gather; their
//                   gathers read node 0's block, so none can finish and reach a collective
//                   (which would meet node 0's and end the job with the substrate's collective
//                   mismatch first: seen once in CI at 4 nodes, when node 2's gather of node 3's
//                   block ended before node 1 saw node 0's call)
//   short-data      node 1 gathers into an array one element short, which throws there only;
//                   it catches the error and goes on to the barrier
//   same-calls      gathers, scatters, a scatter_append and split-phase forms everywhere
//                   (the control of the four above: must succeed)
// Prints "scenario finished" on every node that gets to the end.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include <squall/chaos/schedule.hpp>
#include <squall/squall.hpp>

namespace chaos = squall::chaos;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  squall::runtime rt(&argc, &argv);
  const int me = squall::node(), n = squall::nodes();
  constexpr chaos::index size = 4000;
  const auto table = chaos::translation_table::block(size);
  // Every node references elements of the next node's block: everyone sends and receives.
  std::vector<chaos::index> refs;
  const int source = mode == "append-for-gather" ? 0 : (me + 1) % n;
  const chaos::index next_first = size / n * source;
  for (chaos::index k = 0; k < 100; ++k) refs.push_back(next_first + k);
  const auto s = chaos::inspect(table, {std::span<chaos::index>(refs)});

  std::vector<std::int64_t> data(static_cast<std::size_t>(s.ghost_end()), 1);
  const std::span<std::int64_t> all(data);
  if (mode == "skip-gather") {
    if (me != 1) chaos::gather(s, all);
  } else if (mode == "add-scatter") {
    if (me == 1) chaos::scatter(s, all);
    chaos::gather(s, all);
  } else if (mode == "scatter-for-gather") {
    if (me == 0) {
      chaos::scatter_op_begin(s, all).end();
    } else {
      chaos::gather(s, all);
    }
  } else if (mode == "append-for-gather") {
    if (me == 0) {
      const std::vector<int> dest{1};
      chaos::scatter_append(std::span<const std::int64_t>(data.data(), 1), std::span<const int>(dest));
    } else {
      chaos::gather(s, all);
    }
  } else if (mode == "short-data") {
    try {
      chaos::gather(s, me == 1 ? all.first(all.size() - 1) : all);
    } catch (const squall::usage_error& e) {
      std::fprintf(stderr, "node %d: gather threw %s\n", me, e.what());
    }
  } else if (mode == "same-calls") {
    chaos::gather(s, all);
    chaos::scatter_op_begin(s, all).end();
    const std::vector<int> dest{(me + 1) % n};
    chaos::scatter_append(std::span<const std::int64_t>(data.data(), 1), std::span<const int>(dest));
    auto g = chaos::gather_begin(s, all);
    squall::barrier();
    g.end();
    chaos::scatter(s, all);
  } else if (mode == "type-mismatch" && me == 0) {
    std::vector<double> doubles(static_cast<std::size_t>(s.ghost_end()), 1.0);
    chaos::gather(s, std::span<double>(doubles));
  } else if (mode == "type-mismatch" || mode == "same-type") {
    chaos::gather(s, all);
  } else {
    std::fprintf(stderr, "usage: chaos_scenarios MODE (see scenarios.cpp)\n");
    return 2;
  }
  squall::barrier();
  std::printf("node %d: scenario finished\n", me);
  return 0;
}
