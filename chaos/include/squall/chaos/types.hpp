// SPDX-License-Identifier: BSD-3-Clause
// Basic types of the CHAOS library.
#pragma once
#include <cstdint>
#include <string>

#include <squall/error.hpp>

namespace squall::chaos {

// A global index of a distributed array, or a local offset into a node's part of one.
using index = std::int64_t;

// Where one global element lives.
struct location {
  int owner = -1;    // node
  index offset = -1;  // position in the owner's local array
  bool operator==(const location&) const = default;
};

namespace detail {
// Throws usage_error: a handle (`type`, e.g. "chaos::schedule") whose contents were moved
// into another was used. Refused where it is used, on that node: a moved-from schedule once
// acted as an empty one, so its node skipped an execution the others waited in.
[[noreturn]] void used_after_move(const char* type);
// What is wrong with such a handle, for a message that names it in its own words (a collective
// that agrees on the problem before refusing it on every node): "a <type> that was moved from
// (what it held went to ...)".
std::string moved_from_text(const char* type);
}  // namespace detail

}  // namespace squall::chaos
