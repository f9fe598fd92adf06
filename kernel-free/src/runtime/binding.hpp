// SPDX-License-Identifier: BSD-3-Clause
// Binding a node to its share of this host's processors, as MPI launchers bind ranks.
//
// Why: unbound, the two nodes of a 2-node job on 2 cores sometimes end up queued on one core
// while the other runs a progress thread or idles. A program thread woken from a sleep then
// preempts the very thread it waits for, spins for its spin period, sleeps again, and the
// cycle repeats: am_pingpong trials of 0.5-0.67 us instead of 0.2, about one trial in ten
// (measured: 13 of 140 trials unbound, 1 of 140 bound; kernel-free/TRANSPORTS.md).
//
// The host's layout comes from hwloc: a node's share is made of whole physical cores (both
// hyperthreads of a core go to the same node), and the shares are runs of cores in the
// topology's order (package, NUMA node, core), so a node's processors share a NUMA node
// whenever the nodes divide the NUMA nodes evenly, and its memory - placed by Linux on the
// NUMA node of the processor that first touches it - is local to it.
#pragma once
#include <hwloc.h>

#include <memory>
#include <string>

namespace squall::rt {

struct topology_deleter {
  void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;
struct cpu_set_deleter {
  void operator()(hwloc_bitmap_t s) const { hwloc_bitmap_free(s); }
};
using cpu_set_ptr = std::unique_ptr<hwloc_bitmap_s, cpu_set_deleter>;

// The processors node `index` of `count` (0-based among this host's nodes) gets out of
// `usable`: with K cores holding usable processors, cores [index * K / count,
// (index + 1) * K / count) in topology order, each with all its usable processors; with more
// nodes than cores, one processor each, the first processor of every core handed out before
// any core's second, round robin past the last. On a host without hyperthreads this is the
// processors [index * C / count, (index + 1) * C / count) of the C usable ones, in order, or
// processor index % C with more nodes than processors.
cpu_set_ptr cpu_share(hwloc_topology_t topology, hwloc_const_cpuset_t usable, int index, int count);

// What a node knows of its host's processors at start-up.
struct host_processors {
  topology_ptr topology;
  cpu_set_ptr mine;     // the calling thread's affinity mask
  cpu_set_ptr usable;   // the processors this host's nodes of the job may use
  bool launcher_bound = false;  // a cluster launcher already bound this node to fewer
  int count() const { return hwloc_bitmap_weight(usable.get()); }
};

// Under squallrun (or alone) the job may use the processors squallrun may use, which each
// node inherits as its mask. Under a cluster launcher (mpirun), which may have bound each
// node to one core, the job may use every processor this host lets the process have (its
// cgroup's cpuset), whatever the node's own mask.
host_processors find_processors(bool under_cluster_launcher);

// Restricts the calling thread, and every thread it starts from now on, to `cpus`. Returns
// false, changing nothing, when the kernel refuses.
bool bind_to(const host_processors& host, hwloc_const_cpuset_t cpus);

// "0-3,8": the processors of `cpus` as a list.
std::string cpu_list(hwloc_const_cpuset_t cpus);

}  // namespace squall::rt
