// SPDX-License-Identifier: BSD-3-Clause
// Messages to the user: fatal errors and warnings, each one line on stderr naming the node.
#pragma once
#include <string>

namespace squall {

// Prints "squall: node N: <message>" and ends this process with status 1. Safe to call
// from any thread; writes with one write(2) so lines of different nodes do not mix.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// The same, for code that may run inside a signal handler (the fault path): no stdio flush,
// which could wait for a lock the interrupted code holds.
[[noreturn]] void fatal_in_signal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Formats like printf into a std::string (for usage_error messages).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Called by fatal() with its message, after printing it and before the process ends: the
// runtime tells the node's network peers why (tcp_transport::say_ending). One at a time.
void set_last_words(void (*fn)(const char* message));

// The node id used in messages (-1 before init, when messages name no node).
void set_log_node(int node);

}  // namespace squall
