// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The figures a program reports: printed as aligned human-readable lines, and as one JSON
// object on a single line (the last line of output under --json) for scripts/bench.
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace squall::apps {

class Figures {
 public:
  using Value = std::variant<std::int64_t, double, std::string>;

  void add(const std::string& key, std::int64_t value) { entries_.emplace_back(key, value); }
  void add(const std::string& key, double value) { entries_.emplace_back(key, value); }
  void add(const std::string& key, std::string value) { entries_.emplace_back(key, std::move(value)); }

  void print_lines(std::ostream& out) const;
  void print_json(std::ostream& out) const;

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

}  // namespace squall::apps
