// SPDX-License-Identifier: BSD-3-Clause
// For tests that read SQUALL_STATS=json:FILE: the values of each counter and handler, node by
// node, read with patterns that fit the file's fixed layout (kernel-free/src/stats/json.hpp).
// Whether the file is valid JSON is checked apart (python3 -m json.tool). Library
// squall_test_support.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace squall::test {

struct stats_handler {
  bool internal = false;
  std::vector<std::uint64_t> sent, received;
};

struct stats_json {
  std::string text;  // the whole file; empty when it could not be read
  int nodes = 0;
  std::vector<std::string> hosts;
  std::vector<std::string> networks;  // each node's network transport ("" none)
  std::string date;
  std::map<std::string, std::vector<std::uint64_t>> counters;
  std::map<std::string, stats_handler> handlers;

  // Reads the file at `path` (stats_json.cpp).
  explicit stats_json(const std::string& path);

  std::uint64_t total(const std::string& counter) const {
    std::uint64_t sum = 0;
    if (auto it = counters.find(counter); it != counters.end()) {
      for (auto v : it->second) sum += v;
    }
    return sum;
  }
};

}  // namespace squall::test
