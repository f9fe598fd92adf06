// SPDX-License-Identifier: BSD-3-Clause
// libtsm's settings from the environment: a whole number, or a switch. `fallback` when unset;
// a bad value ends the process with a message naming the variable. It ends at once (_Exit):
// a setting may be read first inside a handler, where running the exit handlers (a PARMACS
// job's end, a collective) would wait for ever.
#pragma once
#include <strings.h>

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

// A switch, written as the runtime's switches are (squall::env_bool, kernel-free's
// common/config.cpp): 0/1, no/yes, false/true or off/on, in any case.
inline bool env_bool(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  for (const char* yes : {"1", "yes", "true", "on"}) {
    if (strcasecmp(v, yes) == 0) return true;
  }
  for (const char* no : {"0", "no", "false", "off"}) {
    if (strcasecmp(v, no) == 0) return false;
  }
  std::fprintf(stderr, "squall: %s must be 0 or 1 (or no/yes, false/true, off/on; got '%s')\n", name, v);
  std::_Exit(1);
}

}  // namespace squall::tsm::detail
