// SPDX-License-Identifier: BSD-3-Clause
// A received active-message packet: its records are walked until the end or a corrupt one;
// every record's arguments and payload must lie inside the packet.
#include <cstddef>
#include <cstdint>
#include <span>

#include "am/records.hpp"

using namespace squall::am;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* begin = reinterpret_cast<const std::byte*>(data);
  record_reader records(std::span(begin, size));
  record_view r;
  unsigned sum = 0;
  std::size_t count = 0;
  while (records.next(r)) {
    if (r.args < begin || r.args + r.h.args_len > begin + size || r.data < begin ||
        r.data + r.h.payload_len > begin + size) {
      __builtin_trap();
    }
    for (std::uint32_t i = 0; i < r.h.args_len; ++i) sum += static_cast<unsigned>(r.args[i]);  // ASan checks too
    for (std::uint32_t i = 0; i < r.h.payload_len; ++i) sum += static_cast<unsigned>(r.data[i]);
    if (++count > size) __builtin_trap();  // every record takes at least its header
  }
  return static_cast<int>(sum & 0);
}
