// SPDX-License-Identifier: BSD-3-Clause
// SQUALL_* settings of the layers above the substrate (libtsm, libxsm, libarrays...), read and
// checked as the runtime reads its own: `fallback` when unset or empty; a bad value ends the
// process at once, without its exit handlers (a setting may be read inside a handler), with a
// message naming the variable; the value read is the one SQUALL_SHOW_CONFIG shows. Every name
// is in the README's table of variables.
#pragma once
#include <cstdint>

namespace squall::settings {

// A whole number in [min, max], written in decimal digits alone.
std::int64_t number(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max);
// A switch: 0/1, no/yes, false/true or off/on, in any case.
bool on(const char* name, bool fallback);

}  // namespace squall::settings
