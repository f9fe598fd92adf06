// SPDX-License-Identifier: BSD-3-Clause
// What every benchmark prints: a readable table, and with --json one JSON object of its
// figures as the last line.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace squall::bench {

inline bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

// Reads option `name` given as "NAME V" into `value`, which is left as it is when the option is
// absent. False, after node `me` 0 says why, when V is missing or not a positive integer below
// 2^31: every node parses the same arguments, so every node then returns.
inline bool positive_option(int argc, char** argv, const char* name, int& value, int me) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], name) != 0) continue;
    const char* text = i + 1 < argc ? argv[i + 1] : "";
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || n <= 0 || n > 0x7fffffff) {
      if (me == 0) std::fprintf(stderr, "%s: expected a positive integer, got '%s'\n", name, text);
      return false;
    }
    value = static_cast<int>(n);
  }
  return true;
}

// Whether this run has the nodes benchmark `name` needs: at least 2, or exactly 2 when
// `exactly_two`. If not, node 0 says how to run it; the caller then returns 1.
inline bool has_two_nodes(const char* name, int nodes, int me, bool exactly_two) {
  if (exactly_two ? nodes == 2 : nodes >= 2) return true;
  if (me == 0) {
    std::fprintf(stderr, "%s %s 2 nodes (scripts/bench %s -n 2)\n", name, exactly_two ? "runs on" : "needs", name);
  }
  return false;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Figures in the order added, printed as "name  value" lines and as one JSON object. A figure
// added with add_null is one the run could not measure (null in the JSON object).
class figures {
 public:
  void add(const std::string& key, double value) { items_.emplace_back(key, value); }
  void add_null(const std::string& key) { items_.emplace_back(key, std::nullopt); }
  void print(const char* title, bool json) const {
    std::printf("%s\n", title);
    for (const auto& [k, v] : items_) {
      if (v) {
        std::printf("  %-28s %12.4f\n", k.c_str(), *v);
      } else {
        std::printf("  %-28s %12s\n", k.c_str(), "null");
      }
    }
    if (!json) return;
    std::string out = "{";
    char buf[64];
    for (std::size_t i = 0; i < items_.size(); ++i) {
      const auto& [k, v] = items_[i];
      if (v) {
        std::snprintf(buf, sizeof buf, "%s\"%s\": %.6g", i ? ", " : "", k.c_str(), *v);
      } else {
        std::snprintf(buf, sizeof buf, "%s\"%s\": null", i ? ", " : "", k.c_str());
      }
      out += buf;
    }
    std::printf("%s}\n", out.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<double>>> items_;
};

}  // namespace squall::bench
