// SPDX-License-Identifier: BSD-3-Clause
// libarrays: migratable object arrays on Squall's substrate (the Charm++ paper's arrays).
// One include for a program: elements, arrays and proxies, reductions, the scheduler, load
// balancing, checkpoints.
#pragma once
#include <squall/arrays/array.hpp>
#include <squall/arrays/balance.hpp>
#include <squall/arrays/checkpoint.hpp>
#include <squall/arrays/element.hpp>
#include <squall/arrays/home.hpp>
#include <squall/arrays/index.hpp>
#include <squall/arrays/reduce.hpp>
#include <squall/arrays/scheduler.hpp>
