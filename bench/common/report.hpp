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

// A benchmark's command line. Each option is read by name (flag, positive, text), then
// finish() refuses any argument that no read named: a misspelt option (--iter 5 for --iters)
// stops the run instead of running the defaults. Every node parses the same arguments and so
// fails alike; node `me` 0 alone says why, naming the program and the option.
class command_line {
 public:
  command_line(const char* program, int argc, char** argv, int me)
      : program_(program), argc_(argc), argv_(argv), me_(me) {}

  // Whether `name` is given.
  bool flag(const char* name) {
    known_.push_back({name, false});
    return at(name) != 0;
  }
  // "NAME V" into `value`, left as it is when absent; V must be a positive integer below 2^31.
  void positive(const char* name, int& value) {
    known_.push_back({name, true});
    const int i = at(name);
    if (i == 0) return;
    const char* text = i + 1 < argc_ ? argv_[i + 1] : "";
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || n <= 0 || n > 0x7fffffff) {
      refuse(std::string(name) + ": expected a positive integer, got '" + text + "'");
      return;
    }
    value = static_cast<int>(n);
  }
  // "NAME V" as V; `fallback` when absent.
  std::string text(const char* name, const std::string& fallback) {
    known_.push_back({name, true});
    const int i = at(name);
    if (i == 0) return fallback;
    if (i + 1 >= argc_) {
      refuse(std::string(name) + " needs a value");
      return fallback;
    }
    return argv_[i + 1];
  }
  // True when every argument is an option read above (with its value) and every value was
  // good; otherwise node 0 has said what was wrong, and the caller returns 2.
  bool finish() {
    for (int i = 1; ok_ && i < argc_;) {
      const option* o = find(argv_[i]);
      if (o == nullptr) {
        std::string list;
        for (const option& k : known_) list += std::string(list.empty() ? "" : ", ") + k.name + (k.valued ? " V" : "");
        refuse("unknown option '" + std::string(argv_[i]) + "' (the options are " + list + ")");
        break;
      }
      i += o->valued ? 2 : 1;
    }
    return ok_;
  }

 private:
  struct option {
    const char* name;
    bool valued;
  };
  const option* find(const char* arg) const {
    for (const option& o : known_) {
      if (std::strcmp(o.name, arg) == 0) return &o;
    }
    return nullptr;
  }
  // Where `name` last is among the options (0: absent), stepping over the values of the
  // options known so far.
  int at(const char* name) const {
    int found = 0;
    for (int i = 1; i < argc_; ++i) {
      if (std::strcmp(argv_[i], name) == 0) found = i;
      const option* o = find(argv_[i]);
      if (o != nullptr && o->valued) ++i;
    }
    return found;
  }
  void refuse(const std::string& why) {
    if (ok_ && me_ == 0) std::fprintf(stderr, "%s: %s\n", program_, why.c_str());
    ok_ = false;
  }

  const char* program_;
  int argc_;
  char** argv_;
  int me_;
  std::vector<option> known_;
  bool ok_ = true;
};

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
