// SPDX-License-Identifier: BSD-3-Clause
// Configuration from SQUALL_* environment variables, each checked: a bad value ends the
// program with a message naming the variable. The variables are listed in the README, and
// every name any part of Squall reads in common/variables.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace squall {

// An integer in [min, max]; `fallback` when the variable is unset or empty. Both readers
// note the value they return as the one in force (below).
std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max);
bool env_bool(const char* name, bool fallback);  // 0/1, yes/no, true/false, on/off
// The value of a variable as this process read it (after its default was applied), or
// nullopt if nothing has read it through env_int/env_bool yet; for SQUALL_SHOW_CONFIG.
std::optional<std::string> value_in_force(const char* name);
// Same checks, for the launcher's command-line flags: returns nullopt and sets `error`.
std::optional<std::int64_t> parse_int(const std::string& text, std::int64_t min, std::int64_t max);
std::optional<bool> parse_bool(const std::string& text);  // as env_bool takes it
// A hexadecimal number, "0x" before its digits or not, taken as strictly as parse_int takes a
// decimal one (no space, no sign); nullopt otherwise, or when it exceeds 64 bits.
std::optional<std::uint64_t> parse_hex(const std::string& text);

}  // namespace squall
