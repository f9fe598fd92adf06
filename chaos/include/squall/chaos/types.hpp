// SPDX-License-Identifier: BSD-3-Clause
// Basic types of the CHAOS library.
#pragma once
#include <cstdint>

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

}  // namespace squall::chaos
