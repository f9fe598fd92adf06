// SPDX-License-Identifier: BSD-3-Clause
// Whether this test run maps the other nodes' memory of its host (SQUALL_HOME_VIEWS, on unless
// 0; kernel-free/src/memory/home_views.hpp). Every node of the tests that ask runs on this host.
#pragma once
#include <cstdlib>
#include <string_view>

namespace squall::test {

inline bool home_views_on() {
  const char* v = std::getenv("SQUALL_HOME_VIEWS");
  return v == nullptr || std::string_view(v) != "0";
}

}  // namespace squall::test
