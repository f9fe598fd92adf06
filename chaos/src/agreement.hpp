// SPDX-License-Identifier: BSD-3-Clause
// Collective error agreement: a problem found on one node is reported on every node, so
// that no node goes on into a collective the others have left.
#pragma once
#include <string>

namespace squall::chaos::detail {

// Collective. Throws usage_error on every node (with this node's problem, or a note that
// another node found one) if any node's `problem` is non-empty.
void agree_or_throw(const std::string& problem, const char* api);

}  // namespace squall::chaos::detail
