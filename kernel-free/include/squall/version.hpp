// SPDX-License-Identifier: BSD-3-Clause
// Squall's version: SQUALL_VERSION_MAJOR, _MINOR, _PATCH and SQUALL_VERSION_STRING
// ("0.1.0"), from the C header generated at configure time.
#pragma once
#include <squall/version.h>
