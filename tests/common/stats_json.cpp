// SPDX-License-Identifier: BSD-3-Clause
#include "stats_json.hpp"

#include <fstream>
#include <sstream>

#include "patterns.hpp"

namespace squall::test {
namespace {

std::vector<std::uint64_t> numbers(const std::string& list) {
  std::vector<std::uint64_t> out;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
  return out;
}

}  // namespace

stats_json::stats_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  text = all.str();
  if (const auto m = search(text, "\"nodes\": ([0-9]+)")) nodes = std::stoi(m->groups[1]);
  if (const auto m = search(text, "\"date\": \"([^\"]*)\"")) date = m->groups[1];
  if (const auto m = search(text, "\"hosts\": \\[([^\\]]*)\\]")) {
    for (const pattern_match& quoted : search_all(m->groups[1], "\"([^\"]*)\"")) hosts.push_back(quoted.groups[1]);
  }
  if (const auto m = search(text, "\"networks\": \\[([^\\]]*)\\]")) {
    for (const pattern_match& quoted : search_all(m->groups[1], "\"([^\"]*)\"")) networks.push_back(quoted.groups[1]);
  }
  const auto begin = text.find("\"counters\": {"), end = text.find("\"handlers\": [");
  if (begin == std::string::npos || end == std::string::npos) return;
  for (const pattern_match& c : search_all(text.substr(begin, end - begin), "\"([^\"]+)\": \\[([0-9, ]*)\\]")) {
    counters[c.groups[1]] = numbers(c.groups[2]);
  }
  const std::string handler_pattern =
      "\\{\"name\": \"([^\"]+)\", \"internal\": (true|false),\\s*\"sent\": \\[([0-9, ]*)\\], "
      "\"sent_bytes\": \\[[0-9, ]*\\],\\s*\"received\": \\[([0-9, ]*)\\]";
  for (const pattern_match& h : search_all(text.substr(end), handler_pattern)) {
    handlers[h.groups[1]] = {h.groups[2] == "true", numbers(h.groups[3]), numbers(h.groups[4])};
  }
}

}  // namespace squall::test
