// SPDX-License-Identifier: BSD-3-Clause
#include "patterns.hpp"

#include <regex>

namespace squall::test {
namespace {

pattern_match from(const std::smatch& m) {
  pattern_match out;
  out.position = static_cast<std::size_t>(m.position(0));
  for (const auto& group : m) out.groups.push_back(group.str());
  return out;
}

}  // namespace

std::optional<pattern_match> search(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return std::nullopt;
  return from(m);
}

std::vector<pattern_match> search_all(const std::string& text, const std::string& pattern) {
  std::vector<pattern_match> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(from(*it));
  }
  return out;
}

std::optional<pattern_match> match_whole(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_match(text, m, std::regex(pattern))) return std::nullopt;
  return from(m);
}

}  // namespace squall::test
