// A whole number from the environment, for libtsm's settings: `fallback` when unset, else it
// must lie in [min, max], or the process ends with a message naming the variable.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace squall::tsm::detail {

inline std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                                const char* unit) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || *v == '-' || n < min || n > max) {
    std::fprintf(stderr, "squall: %s must be %s from %llu to %llu (got '%s')\n", name, unit,
                 static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), v);
    std::exit(1);
  }
  return n;
}

}  // namespace squall::tsm::detail
