// SPDX-License-Identifier: BSD-3-Clause
// Walking the records of a received active-message packet: each is a record_header, the
// arguments padded to 8 bytes, then the payload, padded to 8 (the last record of a packet
// may end without its padding: bulk fragments do). Pure and checked against the packet's
// length, so that a corrupt packet is an error to report, never a read outside it (the
// engine reports it; tests/fuzz runs it on arbitrary bytes).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "am/engine.hpp"

namespace squall::am {

struct record_view {
  record_header h;
  const std::byte* args;  // h.args_len bytes
  const std::byte* data;  // h.payload_len bytes
};

class record_reader {
 public:
  explicit record_reader(std::span<const std::byte> packet) : rest_(packet) {}
  // The next record, or false at the end of the packet or at a corrupt record (error()).
  bool next(record_view& r) {
    if (rest_.empty()) return false;
    if (rest_.size() < sizeof(record_header)) return fail("a record header cut short");
    std::memcpy(&r.h, rest_.data(), sizeof r.h);
    const std::size_t args_padded = detail::round8(r.h.args_len);
    const std::size_t room = rest_.size() - sizeof r.h;
    if (args_padded > room || r.h.payload_len > room - args_padded) return fail("record overruns the packet");
    r.args = rest_.data() + sizeof r.h;
    r.data = r.args + args_padded;
    const std::size_t used = sizeof r.h + args_padded + detail::round8(r.h.payload_len);
    rest_ = rest_.subspan(std::min(used, rest_.size()));
    return true;
  }
  const char* error() const { return error_; }  // null unless next() met a corrupt record

 private:
  bool fail(const char* why) {
    error_ = why;
    rest_ = {};
    return false;
  }
  std::span<const std::byte> rest_;
  const char* error_ = nullptr;
};

}  // namespace squall::am
