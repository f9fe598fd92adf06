// SPDX-License-Identifier: BSD-3-Clause
// Everything of the Squall substrate's C++ API.
#pragma once
#include <squall/am.hpp>
#include <squall/channel.hpp>
#include <squall/collectives.hpp>
#include <squall/error.hpp>
#include <squall/memory.hpp>
#include <squall/pattern.hpp>
#include <squall/runtime.hpp>
#include <squall/stats.hpp>
#include <squall/version.hpp>
