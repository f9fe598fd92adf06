// SPDX-License-Identifier: BSD-3-Clause
// The XSM plug-in interface: a protocol is one class deriving from xsm::protocol, with
//
// - the state it keeps per block (or per element), allocated in attach();
// - its fault handlers, read_fault and write_fault, run when the program touches a block
//   against its tag (squall/memory.hpp: the tag rules; a handler may send and wait);
// - its message handlers, member functions sent with xsm::send / xsm::send_block and
//   delivered to the object running the block on the receiving node;
// - the synchronisation points it wants to hear about: before_barrier, after_barrier,
//   after_acquire, before_release (and any explicit phase call of its own).
//
// It is bound to a whole segment (xsm::alloc) or to ranges of one (xsm::alloc_bytes with
// xsm::range), where the data structure is allocated; every other block runs TSM's stache.
// libxsm/README.md walks through writing one; PROTOCOLS.md describes the protocol library.
//
// These are libtsm's protocol kit (squall/tsm/protocol.hpp, messages.hpp and directory.hpp,
// on which stache itself is written, and hold.hpp: holding a granted block until its access
// has run), under XSM's names.
#pragma once
#include <squall/tsm/directory.hpp>
#include <squall/tsm/hold.hpp>
#include <squall/tsm/messages.hpp>
#include <squall/tsm/protocol.hpp>

namespace squall::xsm {

using memory::block_index;
using memory::segment;
using memory::tag;
using tsm::block_part;
using tsm::grant_hold;
using tsm::home_directory;
using tsm::protocol;
using tsm::protocol_counter;
using tsm::send;
using tsm::send_block;

}  // namespace squall::xsm
