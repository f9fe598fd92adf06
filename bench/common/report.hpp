// What every benchmark prints: a readable table, and with --json one JSON object of its
// figures as the last line.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
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

// Figures in the order added, printed as "name  value" lines and as one JSON object.
class figures {
 public:
  void add(const std::string& key, double value) { items_.emplace_back(key, value); }
  void print(const char* title, bool json) const {
    std::printf("%s\n", title);
    for (const auto& [k, v] : items_) std::printf("  %-28s %12.4f\n", k.c_str(), v);
    if (!json) return;
    std::string out = "{";
    char buf[64];
    for (std::size_t i = 0; i < items_.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s\"%s\": %.6g", i ? ", " : "", items_[i].first.c_str(), items_[i].second);
      out += buf;
    }
    std::printf("%s}\n", out.c_str());
  }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

}  // namespace squall::bench
