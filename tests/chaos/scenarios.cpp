// Programs that misuse the library on purpose, run by scenarios_test under squallrun:
//   type-mismatch   node 0 gathers doubles over a schedule the others gather int64s over
//   same-type       the same gather with int64s everywhere (the control: must succeed)
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
  const chaos::index next_first = size / n * ((me + 1) % n);
  for (chaos::index k = 0; k < 100; ++k) refs.push_back(next_first + k);
  const auto s = chaos::inspect(table, {std::span<chaos::index>(refs)});

  if (mode == "type-mismatch" && me == 0) {
    std::vector<double> data(static_cast<std::size_t>(s.ghost_end()), 1.0);
    chaos::gather(s, std::span<double>(data));
  } else if (mode == "type-mismatch" || mode == "same-type") {
    std::vector<std::int64_t> data(static_cast<std::size_t>(s.ghost_end()), 1);
    chaos::gather(s, std::span<std::int64_t>(data));
  } else {
    std::fprintf(stderr, "usage: chaos_scenarios type-mismatch|same-type\n");
    return 2;
  }
  squall::barrier();
  std::printf("node %d: scenario finished\n", me);
  return 0;
}
