// SPDX-License-Identifier: BSD-3-Clause
// Home views: the memory of the other nodes of this host, for each segment, mapped here
// read-only (segment::copy_from_home). A node's protocol view is its memfd; a peer on the same
// host opens that memfd through /proc/<pid>/fd (which needs only the right to read the
// process's file descriptors, not to trace it) and maps it. A block is then read from its
// home without the home's processor. SQUALL_HOME_VIEWS=0 turns them off. Homes on other
// hosts, or on this one without a view, are read one-sidedly where the network transport
// offers it (UCX's RMA get: network_transport::read_remote).
//
// Home words (segment_options::home_words) travel the same way: each node keeps a memfd of one
// 64-bit word per block, and the nodes of a host map each other's read-write.
#pragma once
#include "memory/segment_table.hpp"

namespace squall::memory::detail {

// Collective, when a segment is made (after its memfd exists on every node): maps the memfd
// of each other node of this host that offers it, and trades keys for one-sided reads with
// the others where the network transport offers them. Where neither is possible a protocol
// asks for the block by message as before.
void open_home_views(segment_state& s, bool home_words);
// Once every node has made the segment (its creation's last barrier): every peer has mapped
// this node's home words, so their memfd is closed (the mappings stay); a segment then holds
// one file open, its memfd, which fills and peers' views still use.
void home_views_opened(segment_state& s);
// When the segment is freed, before its protocol view is unmapped.
void close_home_views(segment_state& s);

}  // namespace squall::memory::detail
