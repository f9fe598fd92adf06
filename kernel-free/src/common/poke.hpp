// SPDX-License-Identifier: BSD-3-Clause
// Pokes: how a node gets the processor of a same-host peer whose program computes, for the
// peer's progress thread (runtime/waiting.cpp says when).
//
// Why: a message to a node whose program computes wakes the node's progress thread, which
// shares the program's processor. The scheduler usually runs it at once (15-25 us on the
// development VM, the inter-processor interrupt), but a progress thread that has used more
// than its share lately stays queued behind the program until the program's slice ends:
// in a 2-node Jacobi, 3-5 misses a run waited 1.5-4 ms each with the progress thread runnable
// on the home's processor the whole time (seen in /proc). Neither a shorter slice nor a
// better nice value for it changed that, nor did interrupting the program (a signal whose
// handler does nothing); a program that gives the processor away does: the poke is a signal
// to the peer's main thread whose handler yields.
//
// The handler only yields (async-signal-safe; the program may be anywhere, in the allocator
// too, so it serves nothing itself), and not while recent yields went to another program's
// busy threads instead of the progress thread (common/yield_backoff.hpp). A poke goes to a thread the kernel shows running, so
// that a program asleep in a system call is not interrupted (where SA_RESTART does not apply,
// nanosleep and poll, it would return early). The look and the signal are two steps: a
// thread that enters such a call in the microseconds between them still sees EINTR (a test
// that slept right after leaving a barrier did, in 1 run of 10). SIGURG is ignored by default: a process
// without the handler installed yet, or any more, ignores it. A handler the program had
// installed still runs after the yield; one it installs later replaces this one (pokes then
// no longer help, and harm nothing).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>

namespace squall::poke {

// Installs the handler for this process (once; later calls do nothing). It adds one to
// `taken` (if given) for each poke, and to `unyielded` for each that did not yield because
// recent ones had yielded to another program (poke.cpp); it publishes in `unyielded_until`
// until when its pokes will not yield, so that pokers may spare the signal.
void install(std::atomic<std::uint64_t>* taken, std::atomic<std::uint64_t>* unyielded = nullptr,
             std::atomic<std::int64_t>* unyielded_until = nullptr);
// Whether the thread whose id is `tid` (a process's main thread: its pid) is on a
// processor or queued for one. False when it cannot be told.
bool running(pid_t tid);
// Pokes the main thread of process `pid`.
void send(pid_t pid);

}  // namespace squall::poke
