// SPDX-License-Identifier: BSD-3-Clause
// What the three tcp_pingpong programs share: the plan (sizes, trials), its command line, the
// timing loop, and what they print. Header-only and free of Squall and MPI, so that the raw
// and MPI programs measure nothing but their own transport.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/report.hpp"

namespace squall::bench::tcp_pingpong {

// The small message: one 8-byte value each way (the active message's argument).
constexpr std::size_t message_bytes = 8;

struct plan {
  bool json = false;
  int trials = 11;                     // timed trials of each kind, after one warm-up trial
  int iters = 1000;                    // round trips per latency trial
  int bulk_iters = 8;                  // transfers per bandwidth trial
  std::size_t bulk_bytes = 4u << 20;   // one transfer; the receiver acknowledges each

  // Operations the passive side answers: warm-up trial included.
  std::uint64_t total_round_trips() const { return std::uint64_t(trials + 1) * iters; }
  std::uint64_t total_transfers() const { return std::uint64_t(trials + 1) * bulk_iters; }
};

constexpr const char* plan_usage =
    "  --json             print the figures as JSON on the last line\n"
    "  --trials T         timed trials of each kind after one warm-up (default 11)\n"
    "  --iters K          round trips per latency trial (default 1000)\n"
    "  --bulk-iters K     transfers per bandwidth trial (default 8)\n"
    "  --bulk-bytes B     bytes per transfer (default 4194304)\n";

// Parses the plan's options; any other option goes to extra(name, value), which takes the
// option's value from value() if it has one and returns false for an option it does not know.
// Throws invalid_argument naming the bad option (the caller prints its usage).
template <class Extra>
plan parse_plan(int argc, char** argv, Extra&& extra) {
  plan p;
  int i = 1;
  auto value = [&]() -> std::string {
    if (i + 1 >= argc) throw std::invalid_argument(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  auto count = [&]() -> std::uint64_t {
    const std::string name = argv[i], text = value();
    char* end = nullptr;
    const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0' || n == 0 || n > 0x7fffffff) {
      throw std::invalid_argument(name + ": expected a positive integer below 2^31, got '" + text + "'");
    }
    return n;
  };
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") p.json = true;
    else if (a == "--trials") p.trials = static_cast<int>(count());
    else if (a == "--iters") p.iters = static_cast<int>(count());
    else if (a == "--bulk-iters") p.bulk_iters = static_cast<int>(count());
    else if (a == "--bulk-bytes") p.bulk_bytes = count();
    else if (!extra(a, value)) throw std::invalid_argument("unknown option '" + a + "'");
  }
  return p;
}

inline plan parse_plan(int argc, char** argv) {
  return parse_plan(argc, argv, [](const std::string&, auto&) { return false; });
}

// Runs op(count) once untimed, then `trials` times timed; the median time of one operation.
template <class Op>
double median_seconds_per_op(int trials, int count, Op&& op) {
  op(count);
  std::vector<double> per_op;
  for (int t = 0; t < trials; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    op(count);
    per_op.push_back(seconds_since(t0) / count);
  }
  return median(per_op);
}

// The two figures every program measures, in its own names.
inline double rtt_us(double seconds_per_round_trip) { return seconds_per_round_trip * 1e6; }
inline double gb_per_s(const plan& p, double seconds_per_transfer) {
  return static_cast<double>(p.bulk_bytes) / seconds_per_transfer / 1e9;
}

// Marks transfer k in a bulk buffer of n >= 1 bytes (first and last byte), so the receiver
// can check that every transfer arrived whole and in order.
inline void mark(std::byte* buf, std::size_t n, std::uint64_t k) {
  buf[n - 1] = std::byte(~k & 0xff);
  buf[0] = std::byte(k & 0xff);
}
inline bool marked(const std::byte* buf, std::size_t n, std::uint64_t k) {
  return buf[0] == std::byte(k & 0xff) && (n == 1 || buf[n - 1] == std::byte(~k & 0xff));
}

// Like bench::figures, with string values too (the AM program names its transport).
class output {
 public:
  void add(std::string key, double v) { items_.emplace_back(std::move(key), v); }
  void add(std::string key, std::string v) { items_.emplace_back(std::move(key), std::move(v)); }

  void print(const char* title, bool json) const {
    std::printf("%s\n", title);
    for (const auto& [k, v] : items_) {
      if (const double* d = std::get_if<double>(&v)) std::printf("  %-28s %12.4f\n", k.c_str(), *d);
      else std::printf("  %-28s %12s\n", k.c_str(), std::get<std::string>(v).c_str());
    }
    if (!json) return;
    std::string out = "{";
    for (const auto& [k, v] : items_) {
      if (out.size() > 1) out += ", ";
      out += quoted(k) + ": ";
      if (const double* d = std::get_if<double>(&v)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", *d);
        out += buf;
      } else {
        out += quoted(std::get<std::string>(v));
      }
    }
    std::printf("%s}\n", out.c_str());
    std::fflush(stdout);
  }

 private:
  static std::string quoted(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) q += c;  // control characters are dropped
    }
    return q + "\"";
  }
  std::vector<std::pair<std::string, std::variant<double, std::string>>> items_;
};

}  // namespace squall::bench::tcp_pingpong
