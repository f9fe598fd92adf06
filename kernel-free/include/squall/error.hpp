// SPDX-License-Identifier: BSD-3-Clause
// Errors a Squall call reports to its caller.
#pragma once
#include <stdexcept>
#include <string>

namespace squall {

// Thrown when the program misuses the API (bad node id, payload over the limit,
// a call before init or after finalize, ...). The message names the cause.
class usage_error : public std::logic_error {
 public:
  explicit usage_error(const std::string& what) : std::logic_error("squall: " + what) {}
};

}  // namespace squall
