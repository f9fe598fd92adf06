// SPDX-License-Identifier: BSD-3-Clause
// The one error index_of reports: the key's bytes are not the index type asked for.
#include <squall/arrays/key.hpp>

namespace squall::arrays::detail {

void throw_bad_key(std::size_t size, const char* why) {
  throw usage_error("index_of: a key of " + std::to_string(size) + " bytes does not decode as this array's index type (its bytes " +
                    why + ")");
}

}  // namespace squall::arrays::detail
