// The handshake that opens every TCP connection of a job. Both ends prove knowledge of the
// job's secret without sending it (HMAC-SHA256 over both sides' fresh nonces and node ids):
//
//   acceptor  -> connector  challenge: magic, acceptor's node id, nonce A
//   connector -> acceptor   response:  magic, connector's node id, the node id it meant to
//                                      reach, nonce C, HMAC("C", ids, A, C)
//   acceptor  -> connector  proof:     HMAC("A", ids, C, A)
//
// A connection that fails it (a stranger, garbage, a wrong secret) is closed and counted;
// the job goes on.
#pragma once
#include <cstdint>
#include <string>

#include "transport/tcp/secret.hpp"

namespace squall::tcp {

// The acceptor's side: returns the authenticated peer's node id, or -1 with `why` set.
int accept_handshake(int fd, int me, const job_secret& secret, std::int64_t deadline_ns, std::string& why);
// The connector's side, reaching node `peer`: true, or false with `why` set.
bool connect_handshake(int fd, int me, int peer, const job_secret& secret, std::int64_t deadline_ns,
                       std::string& why);

}  // namespace squall::tcp
