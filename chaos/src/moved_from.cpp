// SPDX-License-Identifier: BSD-3-Clause
#include <squall/chaos/types.hpp>

#include <string>

namespace squall::chaos::detail {

void used_after_move(const char* type) {
  throw usage_error(std::string("chaos: use of a ") + type +
                    " that was moved from (what it held went to the object it was moved into; assign it a new "
                    "one before using it again)");
}

}  // namespace squall::chaos::detail
