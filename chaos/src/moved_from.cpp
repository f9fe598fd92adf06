// SPDX-License-Identifier: BSD-3-Clause
#include <squall/chaos/types.hpp>

#include <string>

namespace squall::chaos::detail {

std::string moved_from_text(const char* type) {
  return std::string("a ") + type +
         " that was moved from (what it held went to the object it was moved into; assign it a new one before "
         "using it again)";
}

void used_after_move(const char* type) { throw usage_error("chaos: use of " + moved_from_text(type)); }

}  // namespace squall::chaos::detail
