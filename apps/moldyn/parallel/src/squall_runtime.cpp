// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

#include <memory>
#include <optional>

#include <squall/chaos/exchange.hpp>
#include <squall/collectives.hpp>
#include <squall/squall.hpp>

#include "squall/apps/squall_counts.hpp"

namespace squall::apps::moldyn {

Runtime squall_runtime() {
  Runtime rt;
  rt.me = squall::node();
  rt.nodes = squall::nodes();
  rt.sum = [](std::span<double> v) { squall::allreduce(std::span<const double>(v), v, squall::op::sum{}); };
  rt.max = [](std::span<double> v) { squall::allreduce(std::span<const double>(v), v, squall::op::max{}); };
  rt.allgather = [](std::span<const double> mine) { return squall::chaos::allgather(mine); };
  auto region = std::make_shared<std::optional<CountedRegion>>();
  rt.region_begin = [region] { region->emplace(); };
  rt.region_end = [region] {
    (*region)->end();
    return std::pair{(*region)->seconds(), (*region)->counts()};
  };
  return rt;
}

int home_of_block(const Decomposition& d, std::size_t block, std::size_t block_size, std::size_t element_size,
                  std::size_t per_molecule) {
  const std::size_t molecule = block * block_size / element_size / per_molecule;
  return d.owner(static_cast<std::uint32_t>(std::min(molecule, d.molecules.size() - 1)));
}

}  // namespace squall::apps::moldyn
