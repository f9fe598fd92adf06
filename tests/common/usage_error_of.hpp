// SPDX-License-Identifier: BSD-3-Clause
// The text of the squall::usage_error that f throws, or "(no usage_error)": the misuse tests'
// one way to check a refusal and its message.
#pragma once
#include <string>

#include <squall/error.hpp>

namespace squall::test {

constexpr const char* no_usage_error = "(no usage_error)";

template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const squall::usage_error& e) {
    return e.what();
  }
  return no_usage_error;
}

}  // namespace squall::test
