// SPDX-License-Identifier: BSD-3-Clause
// For tests that read SQUALL_STATS=json:FILE: the values of each counter and handler, node by
// node, read with patterns that fit the file's fixed layout (kernel-free/src/stats/json.hpp).
// Whether the file is valid JSON is checked apart (python3 -m json.tool).
#pragma once
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
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
  std::string date;
  std::map<std::string, std::vector<std::uint64_t>> counters;
  std::map<std::string, stats_handler> handlers;

  static std::vector<std::uint64_t> numbers(const std::string& list) {
    std::vector<std::uint64_t> out;
    std::istringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
    return out;
  }

  explicit stats_json(const std::string& path) {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    text = all.str();
    std::smatch m;
    if (std::regex_search(text, m, std::regex("\"nodes\": ([0-9]+)"))) nodes = std::stoi(m[1]);
    if (std::regex_search(text, m, std::regex("\"date\": \"([^\"]*)\""))) date = m[1];
    if (std::regex_search(text, m, std::regex("\"hosts\": \\[([^\\]]*)\\]"))) {
      const std::string list = m[1];
      const std::regex quoted("\"([^\"]*)\"");
      for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it) {
        hosts.push_back((*it)[1]);
      }
    }
    const auto begin = text.find("\"counters\": {"), end = text.find("\"handlers\": [");
    if (begin == std::string::npos || end == std::string::npos) return;
    const std::string block = text.substr(begin, end - begin);
    const std::regex counter("\"([^\"]+)\": \\[([0-9, ]*)\\]");
    for (auto it = std::sregex_iterator(block.begin(), block.end(), counter); it != std::sregex_iterator(); ++it) {
      counters[(*it)[1]] = numbers((*it)[2]);
    }
    const std::regex handler(
        "\\{\"name\": \"([^\"]+)\", \"internal\": (true|false),\\s*\"sent\": \\[([0-9, ]*)\\], "
        "\"sent_bytes\": \\[[0-9, ]*\\],\\s*\"received\": \\[([0-9, ]*)\\]");
    for (auto it = std::sregex_iterator(text.begin() + static_cast<long>(end), text.end(), handler);
         it != std::sregex_iterator(); ++it) {
      handlers[(*it)[1]] = {(*it)[2] == "true", numbers((*it)[3]), numbers((*it)[4])};
    }
  }

  std::uint64_t total(const std::string& counter) const {
    std::uint64_t sum = 0;
    if (auto it = counters.find(counter); it != counters.end()) {
      for (auto v : it->second) sum += v;
    }
    return sum;
  }
};

}  // namespace squall::test
