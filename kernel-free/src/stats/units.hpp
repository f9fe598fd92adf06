// SPDX-License-Identifier: BSD-3-Clause
// Counter values in units a person reads at a glance: 12.3k, 4.50 MiB, 812 µs.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace squall::stats {

enum class unit { count, bytes, nanoseconds };

// From the counter's name: "..._ns" are times, "bytes", "bytes_..." and "..._bytes" are sizes.
unit unit_of(std::string_view counter_name);

// Exact below 10000 (counts), 1 KiB (bytes) or 1 µs (times); three significant digits above.
std::string human(std::uint64_t value, unit u);

// Columns a string takes on a terminal (UTF-8: µ and … are one column each).
std::size_t columns(std::string_view s);
// `s` padded with spaces to `width` columns, on the left (right-aligned) or right.
std::string align_right(std::string_view s, std::size_t width);
std::string align_left(std::string_view s, std::size_t width);
// `s` cut to `width` columns keeping its end, which names the thing ("…::on_read_miss").
std::string keep_tail(std::string_view s, std::size_t width);

}  // namespace squall::stats
