// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The partition of mesh_partition.hpp computed on one process from the whole mesh, without
// the Squall runtime, for the MPI version: the nodes by recursive coordinate bisection under
// chaos::rcb's rule (each group cut across the longest side of its bounding box, lowest axis
// among equal ones, into counts proportional to its parts, elements ordered by coordinate,
// then name), each edge and face to the part owning most of its nodes, a tie to the part with
// fewer items so far (then the lower part), in list order, the counts starting again at each
// of `parts` blocks of the list (as chaos::partition_iterations on each node's block). The
// result is partition_mesh's on `parts` nodes (tests/paper/unstructured_partition_test).
#include <cstdint>
#include <vector>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

struct SerialPartition {
  std::vector<std::int32_t> node_owner;  // by mesh node name
  std::vector<std::int32_t> edge_owner;  // by position in mesh.edges
  std::vector<std::int32_t> face_owner;  // by position in mesh.faces
  double cut_edges_pct = 0;
};

SerialPartition serial_partition(const Mesh& mesh, int parts);

}  // namespace squall::apps::unstructured
