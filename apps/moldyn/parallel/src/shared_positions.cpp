// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/moldyn/parallel/shared_positions.hpp"

#include <algorithm>

#include <squall/tsm.hpp>

#include "squall/apps/moldyn/parallel/squall_runtime.hpp"

namespace squall::apps::moldyn {

SharedPositions::SharedPositions(const Decomposition& d, int me, std::size_t block_size)
    : size_(d.molecules.size()), first_(d.part(me).begin) {
  const tsm::options opt{.block_size = block_size, .homes = memory::home_policy::function([&d, block_size](auto b) {
                           return home_of_block(d, b, block_size, sizeof(Vec3), 1);
                         })};
  data_ = tsm::alloc<Vec3>(size_, opt);
}

SharedPositions::~SharedPositions() { tsm::free(data_); }

void SharedPositions::publish(std::span<const Vec3> own) {
  std::copy(own.begin(), own.end(), data_ + first_);
  tsm::barrier();
}

std::size_t read_block_size(Options& options) { return options.count("block-size", 4096); }

}  // namespace squall::apps::moldyn
