// Configuration from SQUALL_* environment variables, each checked: a bad value ends the
// program with a message naming the variable. The variables are listed in the README.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace squall {

// An integer in [min, max]; `fallback` when the variable is unset or empty.
std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max);
bool env_bool(const char* name, bool fallback);  // 0/1, yes/no, true/false, on/off
// Same checks, for the launcher's command-line flags: returns nullopt and sets `error`.
std::optional<std::int64_t> parse_int(const std::string& text, std::int64_t min, std::int64_t max);

}  // namespace squall
