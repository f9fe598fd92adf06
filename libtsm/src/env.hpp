// SPDX-License-Identifier: BSD-3-Clause
// A whole number from the environment, for libtsm's settings: `fallback` when unset, else it
// must lie in [min, max], or the process ends with a message naming the variable. It ends
// at once (_Exit): a setting may be read first inside a handler, where running the exit
// handlers (a PARMACS job's end, a collective) would wait for ever.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace squall::tsm::detail {

// Decimal digits only (no sign, no spaces) making a number in [min, max]; nullopt otherwise.
inline std::optional<std::uint64_t> parse_number(const char* text, std::uint64_t min, std::uint64_t max) {
  if (*text == '\0') return std::nullopt;
  std::uint64_t n = 0;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || __builtin_mul_overflow(n, 10, &n) ||
        __builtin_add_overflow(n, static_cast<std::uint64_t>(*c - '0'), &n)) {
      return std::nullopt;
    }
  }
  if (n < min || n > max) return std::nullopt;
  return n;
}

inline std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                                const char* unit) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  if (const auto n = parse_number(v, min, max)) return *n;
  std::fprintf(stderr, "squall: %s must be %s from %llu to %llu (got '%s')\n", name, unit,
               static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), v);
  std::_Exit(1);
}

}  // namespace squall::tsm::detail
