// SPDX-License-Identifier: BSD-3-Clause
// The partition the Squall run computed, handed to the MPI run so that both exchange exactly
// the same data: the mesh it was made for, the owner of every mesh node and the node that
// runs every edge.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "exchange_input.hpp"

namespace squall::bench::chaos_exchange {

struct partition {
  mesh::MeshShape shape{};
  std::uint64_t seed = 0;
  int parts = 0;
  std::vector<std::int32_t> node_owner;  // by mesh node name
  std::vector<std::int32_t> edge_owner;  // by position in the mesh's edge list
};

// Written to a temporary name and renamed, so a reader never sees half a file. Throws
// std::runtime_error naming the file on failure.
void write_partition(const std::string& path, const partition& p);

// Throws std::runtime_error naming the file if it is missing, short or not a partition.
partition read_partition(const std::string& path);

}  // namespace squall::bench::chaos_exchange
