// SPDX-License-Identifier: BSD-3-Clause
// The stand-in of a host's last node lost before it reached the other hosts.
//
// Only a host's launcher sees its node die before squall::init has made the node's network
// connections. A node of the same host tells the other hosts then (transport/tcp/
// setup_watch.hpp), but a host with no node left had nobody to: the other hosts' nodes waited
// for the lost one until SQUALL_TCP_TIMEOUT. So squallrun starts a stand-in: itself, run as
// the lost node (SQUALL_STAND_IN), which goes through that node's set-up in the job already
// aborted. Its set-up watch tells every peer it reaches, and every peer waiting on the lost
// node's listener, why the job ends, as a node that lost a host mate does; then it ends.
#pragma once
#include <sys/types.h>

#include <cstdint>

namespace squallrun {

// Whether a node that ended in `state` (shm::node_state) may have left other hosts waiting for
// it: it never finished squall::init.
bool needs_stand_in(std::uint32_t state);
// Whether this process is a stand-in, and then its main: squall::init as the lost node.
bool is_stand_in();
[[noreturn]] void be_stand_in(int argc, char** argv);
// In a child prepared as the lost node (squallrun's become_node): runs squallrun as its
// stand-in.
[[noreturn]] void exec_stand_in();
// Waits for the stand-in to end, at most as long as the set-up may last (SQUALL_TCP_TIMEOUT),
// then kills it.
void wait_for_stand_in(pid_t stand_in);

}  // namespace squallrun
