// SPDX-License-Identifier: BSD-3-Clause
// The program's synchronisation points, where libtsm tells every live protocol (and lets go
// of stache's hold): tsm and PARMACS barriers and locks call these on the program thread.
#pragma once
#include <squall/tsm/protocol.hpp>

namespace squall::tsm::detail {

// Protocols attached to live segments, in allocation order.
void add_live_protocol(tsm::protocol& p);
void remove_live_protocol(tsm::protocol& p);

void before_barrier();
void after_barrier();
void after_acquire();
void before_release();

}  // namespace squall::tsm::detail
