// SPDX-License-Identifier: BSD-3-Clause
// Whether this thread's sends are quiet (squall::am::quiet_sends): they then wake only the
// receivers' program threads asleep in a wait, never a progress thread away from one.
#pragma once

namespace squall::transport_detail {

// Zero-initialised, so reading it needs no guard (it is read on every ring of a doorbell).
inline thread_local bool sending_quietly = false;

}  // namespace squall::transport_detail
