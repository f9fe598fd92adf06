// SPDX-License-Identifier: BSD-3-Clause
#include "stats/units.hpp"

#include <cstdio>

namespace squall::stats {
namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string three_digits(double x, const char* suffix) {
  char text[32];
  const int decimals = x < 10 ? 2 : x < 100 ? 1 : 0;
  std::snprintf(text, sizeof text, "%.*f%s", decimals, x, suffix);
  return text;
}

std::string scaled(std::uint64_t value, double step, std::initializer_list<const char*> suffixes) {
  double x = static_cast<double>(value);
  const char* suffix = "";
  for (const char* s : suffixes) {
    x /= step;
    suffix = s;
    if (x < step) break;
  }
  return three_digits(x, suffix);
}

}  // namespace

unit unit_of(std::string_view name) {
  const auto dot = name.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (last.ends_with("_ns")) return unit::nanoseconds;
  if (last == "bytes" || last.starts_with("bytes_") || last.ends_with("_bytes")) return unit::bytes;
  return unit::count;
}

std::string human(std::uint64_t value, unit u) {
  switch (u) {
    case unit::count:
      return value < 10000 ? std::to_string(value) : scaled(value, 1000, {"k", "M", "G", "T", "P"});
    case unit::bytes:
      return value < 1024 ? std::to_string(value) + " B" : scaled(value, 1024, {" KiB", " MiB", " GiB", " TiB", " PiB"});
    case unit::nanoseconds:
      return value < 1000 ? std::to_string(value) + " ns" : scaled(value, 1000, {" µs", " ms", " s"});
  }
  return std::to_string(value);
}

std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += is_continuation(c) ? 0 : 1;
  return n;
}

std::string align_right(std::string_view s, std::size_t width) {
  const std::size_t used = columns(s);
  return std::string(used < width ? width - used : 0, ' ') + std::string(s);
}

std::string align_left(std::string_view s, std::size_t width) {
  const std::size_t used = columns(s);
  return std::string(s) + std::string(used < width ? width - used : 0, ' ');
}

std::string keep_tail(std::string_view s, std::size_t width) {
  if (columns(s) <= width || width == 0) return std::string(s);
  std::size_t start = s.size();
  for (std::size_t kept = 0; kept < width - 1;) {  // one column for the ellipsis
    --start;
    if (!is_continuation(s[start])) ++kept;
  }
  return "…" + std::string(s.substr(start));
}

}  // namespace squall::stats
