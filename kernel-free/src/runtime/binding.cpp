#include "runtime/binding.hpp"

#include <sched.h>

#include <vector>

namespace squall::rt {

bool bind_to_share(int local_index, int local_nodes) {
  cpu_set_t allowed;
  if (local_nodes < 1 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  const long count = static_cast<long>(cpus.size());
  if (count == 0) return false;
  long first = local_index % count, last = first + 1;  // more nodes than processors
  if (local_nodes <= count) {
    first = local_index * count / local_nodes;
    last = (local_index + 1) * count / local_nodes;
  }
  cpu_set_t share;
  CPU_ZERO(&share);
  for (long i = first; i < last; ++i) CPU_SET(cpus[static_cast<std::size_t>(i)], &share);
  return sched_setaffinity(0, sizeof share, &share) == 0;
}

}  // namespace squall::rt
