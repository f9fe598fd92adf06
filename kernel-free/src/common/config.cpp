// SPDX-License-Identifier: BSD-3-Clause
#include "common/config.hpp"

#include <squall/settings.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include <map>
#include <mutex>

#include "common/log.hpp"

namespace squall {
namespace {

std::mutex in_force_mutex;
std::map<std::string, std::string, std::less<>>& in_force() {
  static std::map<std::string, std::string, std::less<>> values;
  return values;
}

template <class T>
T noted(const char* name, T value) {
  const std::lock_guard hold(in_force_mutex);
  in_force()[name] = std::to_string(value);
  return value;
}

}  // namespace

std::optional<std::int64_t> parse_int(const std::string& text, std::int64_t min, std::int64_t max) {
  // strtoll would also take leading spaces and a '+': only digits, after an optional '-'.
  if (text.empty() || (text[0] != '-' && (text[0] < '0' || text[0] > '9'))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& text) {
  for (const char* yes : {"1", "yes", "true", "on"}) {
    if (strcasecmp(text.c_str(), yes) == 0) return true;
  }
  for (const char* no : {"0", "no", "false", "off"}) {
    if (strcasecmp(text.c_str(), no) == 0) return false;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_hex(const std::string& text) {
  // strtoull would also take leading spaces and a sign (and wrap "-0x1000" round).
  const std::size_t digits = text.starts_with("0x") || text.starts_with("0X") ? 2 : 0;
  if (text.size() == digits || text.find_first_not_of("0123456789abcdefABCDEF", digits) != std::string::npos) {
    return std::nullopt;
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str() + digits, nullptr, 16);
  if (errno != 0) return std::nullopt;
  return v;
}

std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return noted(name, fallback);
  if (auto v = parse_int(text, min, max)) return noted(name, *v);
  fatal("%s must be an integer from %lld to %lld (got '%s')", name, static_cast<long long>(min),
        static_cast<long long>(max), text);
}

bool env_bool(const char* name, bool fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return noted(name, fallback);
  if (const auto v = parse_bool(text)) return noted(name, *v);
  fatal("%s must be 0 or 1 (or no/yes, false/true, off/on; got '%s')", name, text);
}

std::optional<std::string> value_in_force(const char* name) {
  const std::lock_guard hold(in_force_mutex);
  const auto it = in_force().find(name);
  if (it == in_force().end()) return std::nullopt;
  return it->second;
}

namespace settings {
std::int64_t number(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  return env_int(name, fallback, min, max);
}
bool on(const char* name, bool fallback) { return env_bool(name, fallback); }
}  // namespace settings

}  // namespace squall
