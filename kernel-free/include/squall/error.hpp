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
  explicit usage_error(const std::string& what) : std::logic_error(prefix + what) {}
  // The cause alone, without the "squall: " that what() starts with: for a caller that passes
  // it on in a usage_error of its own (a collective refusing one node's problem on every node).
  const char* cause() const noexcept { return what() + sizeof(prefix) - 1; }

 private:
  static constexpr char prefix[] = "squall: ";
};

}  // namespace squall
