// SPDX-License-Identifier: BSD-3-Clause
// Refusing a TCP connection that is not one of the job's: it is closed and counted
// (tcp.connections_refused), and the first few are named in a warning each; after those, a
// line "N more refused" at most every few seconds, so that a stranger in a reconnect loop
// cannot fill the log.
#pragma once
#include <string>

#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {

// `from`: the peer's address, taken when the connection was accepted (once the peer has
// closed it, the socket no longer says).
void refuse_connection(int fd, const endpoint& from, const std::string& why);
// Says how many refusals were not named yet, if any (end of set-up, end of the job).
void report_refusals();

}  // namespace squall::tcp
