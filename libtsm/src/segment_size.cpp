// SPDX-License-Identifier: BSD-3-Clause
#include "segment_size.hpp"

#include <unistd.h>

#include <squall/error.hpp>
#include <squall/memory.hpp>

#include "stache.hpp"

namespace squall::tsm::detail {
namespace {

std::size_t host_memory_bytes() {
  return static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
}

bool power_of_two(std::size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

void check_block_size(std::size_t block_size, const char* api) {
  if (!power_of_two(block_size) || block_size < 4096 || block_size > max_block_size) {
    throw usage_error(std::string(api) + ": the block size must be a power of two from 4096 bytes to " +
                      std::to_string(max_block_size >> 20) + " MiB (got " + std::to_string(block_size) + ")");
  }
}

std::size_t state_budget_bytes() { return host_memory_bytes() / 4; }

std::size_t blocks_for(std::size_t bytes, std::size_t block_size) {
  return bytes == 0 ? 1 : bytes / block_size + (bytes % block_size != 0 ? 1 : 0);
}

void check_segment_size(std::size_t bytes, std::size_t block_size, bool in_segment_range, const std::string& what) {
  const std::size_t range = memory::segment_range_bytes();
  if (in_segment_range && bytes > range) {
    throw usage_error(what + ": " + std::to_string(bytes) + " bytes exceed the segment range of " +
                      std::to_string(range >> 30) + " GiB (SQUALL_SEGMENT_SPACE_GIB)");
  }
  const std::size_t blocks = blocks_for(bytes, block_size), per_block = stache::state_bytes_per_block();
  if (blocks > state_budget_bytes() / per_block) {
    throw usage_error(what + ": " + std::to_string(bytes) + " bytes in blocks of " + std::to_string(block_size) +
                      " need " + std::to_string(blocks / (std::size_t{1} << 20) * per_block) +
                      " MiB of protocol state on each node, more than a quarter of this host's memory (" +
                      std::to_string(host_memory_bytes() >> 20) + " MiB); use larger blocks or less memory");
  }
}

}  // namespace squall::tsm::detail
