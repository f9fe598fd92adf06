// SPDX-License-Identifier: BSD-3-Clause
// Regular expressions (ECMAScript) over a program's output, for tests. Compiled in one place
// (patterns.cpp, library squall_test_support): <regex> alone cost each test file that
// included it about 10 s of compile time under the sanitizers.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace squall::test {

struct pattern_match {
  std::size_t position = 0;         // of the whole match in the text
  std::vector<std::string> groups;  // [0]: the whole match, then each group
};

// The first match of `pattern` anywhere in `text`.
std::optional<pattern_match> search(const std::string& text, const std::string& pattern);
// Every match, in order.
std::vector<pattern_match> search_all(const std::string& text, const std::string& pattern);
// A match of `pattern` against the whole of `text`.
std::optional<pattern_match> match_whole(const std::string& text, const std::string& pattern);

}  // namespace squall::test
