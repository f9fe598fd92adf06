// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/binding.hpp"

#include <cstdlib>
#include <vector>

#include "common/log.hpp"

namespace squall::rt {
namespace {

// The usable processors grouped by core, cores in topology order. A host whose cores hwloc
// does not know counts each processor as a core.
std::vector<cpu_set_ptr> usable_cores(hwloc_topology_t topology, hwloc_const_cpuset_t usable) {
  std::vector<cpu_set_ptr> cores;
  hwloc_obj_t last_core = nullptr;
  for (hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, usable, HWLOC_OBJ_PU, nullptr);
       pu != nullptr; pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, usable, HWLOC_OBJ_PU, pu)) {
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu);
    if (core == nullptr) core = pu;
    if (cores.empty() || core != last_core) cores.emplace_back(hwloc_bitmap_alloc());
    last_core = core;
    hwloc_bitmap_set(cores.back().get(), pu->os_index);
  }
  return cores;
}

}  // namespace

cpu_set_ptr cpu_share(hwloc_topology_t topology, hwloc_const_cpuset_t usable, int index, int count) {
  cpu_set_ptr share(hwloc_bitmap_alloc());
  const auto cores = usable_cores(topology, usable);
  const auto k = static_cast<long>(cores.size());
  if (k == 0 || count < 1 || index < 0) return share;
  if (count <= k) {
    for (long c = index * k / count; c < (index + 1) * k / count; ++c) {
      hwloc_bitmap_or(share.get(), share.get(), cores[static_cast<std::size_t>(c)].get());
    }
    return share;
  }
  std::vector<unsigned> spread;  // every core's first processor, then every core's second...
  for (bool more = true; more;) {
    more = false;
    for (const auto& core : cores) {
      const int cpu = hwloc_bitmap_first(core.get());
      if (cpu < 0) continue;
      spread.push_back(static_cast<unsigned>(cpu));
      hwloc_bitmap_clr(core.get(), static_cast<unsigned>(cpu));
      more = true;
    }
  }
  hwloc_bitmap_only(share.get(), spread[static_cast<std::size_t>(index) % spread.size()]);
  return share;
}

host_processors find_processors(bool under_cluster_launcher) {
  host_processors host;
  hwloc_topology_t topology = nullptr;
  if (hwloc_topology_init(&topology) != 0) fatal("hwloc could not start (binding needs this host's layout)");
  host.topology.reset(topology);
  // Processors, cores, packages and NUMA nodes only: the x86 back end (cpuid on every
  // processor in turn) and the I/O devices cost tens of milliseconds and tell nothing more.
  hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_cache_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(topology) != 0) fatal("hwloc could not read this host's processors and cores");
  host.mine.reset(hwloc_bitmap_alloc());
  if (hwloc_get_cpubind(topology, host.mine.get(), HWLOC_CPUBIND_THREAD) != 0) {
    hwloc_bitmap_copy(host.mine.get(), hwloc_topology_get_allowed_cpuset(topology));
  }
  host.usable.reset(hwloc_bitmap_dup(host.mine.get()));
  if (under_cluster_launcher) {
    hwloc_bitmap_copy(host.usable.get(), hwloc_topology_get_allowed_cpuset(topology));
    host.launcher_bound = !hwloc_bitmap_isequal(host.mine.get(), host.usable.get());
  }
  return host;
}

bool bind_to(const host_processors& host, hwloc_const_cpuset_t cpus) {
  if (hwloc_bitmap_iszero(cpus)) return false;
  return hwloc_set_cpubind(host.topology.get(), cpus, HWLOC_CPUBIND_THREAD) == 0;
}

std::string cpu_list(hwloc_const_cpuset_t cpus) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, cpus) < 0) return "?";
  std::string list = text;
  std::free(text);
  return list;
}

}  // namespace squall::rt
