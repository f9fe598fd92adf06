// Binding a node to its share of this host's processors, as MPI launchers bind ranks.
//
// Why: unbound, the two nodes of a 2-node job on 2 cores sometimes end up queued on one core
// while the other runs a progress thread or idles. A program thread woken from a sleep then
// preempts the very thread it waits for, spins for its spin period, sleeps again, and the
// cycle repeats: am_pingpong trials of 0.5-0.67 us instead of 0.2, about one trial in ten
// (measured: 13 of 140 trials unbound, 1 of 140 bound; kernel-free/TRANSPORTS.md).
#pragma once

namespace squall::rt {

// Restricts the calling thread, and every thread it starts from now on, to this node's share
// of the processors the process may use. With `local_nodes` nodes on this host and C allowed
// processors, node `local_index` (0-based among this host's nodes) gets processors
// [local_index * C / local_nodes, (local_index + 1) * C / local_nodes) of the allowed set, in
// order - one each when C equals the number of nodes; with more nodes than processors, the
// processor local_index % C. Returns false, changing nothing, when the kernel refuses.
bool bind_to_share(int local_index, int local_nodes);

}  // namespace squall::rt
