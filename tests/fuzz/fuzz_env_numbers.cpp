// SPDX-License-Identifier: BSD-3-Clause
// Settings read from the environment: SQUALL_* numbers (kernel-free's parse_int, behind every
// layer's squall::settings::number too) and SQUALL_TCP_ADDR. A number is accepted only when
// the text is exactly its decimal digits (with a leading '-' where negative numbers are
// allowed) and it lies in the range asked for.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/config.hpp"
#include "transport/tcp/socket_io.hpp"

namespace {

// The canonical decimal text of `digits` (leading zeros dropped).
std::string canonical(std::string digits) {
  const auto first = digits.find_first_not_of('0');
  return first == std::string::npos ? "0" : digits.substr(first);
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('\0') != std::string::npos) return 0;  // the environment holds C strings

  for (const auto& [min, max] : {std::pair<std::int64_t, std::int64_t>{INT64_MIN, INT64_MAX}, {0, 65535},
                                 {1, std::int64_t{1} << 26}}) {
    if (const auto n = squall::parse_int(text, min, max)) {
      const bool negative = !text.empty() && text[0] == '-';
      const std::string digits = negative ? text.substr(1) : text;
      const std::string expected = (negative && canonical(digits) != "0" ? "-" : "") + canonical(digits);
      if (*n < min || *n > max || !all_digits(digits) || expected != std::to_string(*n)) __builtin_trap();
    }
  }
  std::uint32_t ipv4 = 0;
  if (squall::tcp::parse_ipv4(text.c_str(), ipv4) && squall::tcp::to_string({ipv4, 1}) != text + ":1") __builtin_trap();
  return 0;
}
