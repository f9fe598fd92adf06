// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The partition every parallel version of unstructured runs on (section 5.1.1): mesh nodes by
// chaos::rcb on their coordinates, then each edge and face to the node owning most of its
// mesh nodes (a cut edge to the less loaded of its two owners: chaos's
// almost-owner-computes). Every node holds the whole generated mesh; the partition is
// computed from a block of node names and a block of edges and faces per node, as a
// distributed program would start.
#include <cstdint>
#include <vector>

#include <squall/chaos/translation_table.hpp>

#include "squall/apps/unstructured/mesh.hpp"

namespace squall::apps::unstructured {

struct MeshPartition {
  squall::chaos::translation_table table;  // the mesh nodes' RCB distribution (owned ascending)
  std::vector<std::int64_t> edges;         // positions in mesh.edges this node runs, ascending
  std::vector<std::int64_t> faces;         // positions in mesh.faces this node runs, ascending
  double cut_edges_pct = 0;                // edges whose ends have different owners
};

// Collective.
MeshPartition partition_mesh(const Mesh& mesh);

}  // namespace squall::apps::unstructured
