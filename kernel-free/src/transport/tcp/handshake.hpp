// SPDX-License-Identifier: BSD-3-Clause
// The handshake that opens every TCP connection of a job. Both ends prove knowledge of the
// job's secret without sending it (HMAC-SHA256 over both sides' fresh nonces and node ids):
//
//   acceptor  -> connector  challenge: magic, acceptor's node id, nonce A
//   connector -> acceptor   response:  magic, connector's node id, the node id it meant to
//                                      reach, nonce C, HMAC("C", ids, A, C)
//   acceptor  -> connector  proof:     HMAC("A", ids, C, A)
//
// A connection that fails it (a stranger, garbage, a wrong secret) is closed and counted;
// the job goes on. Each side is a small object that checks the bytes it is given and says
// what to send back, so that the acceptor can run many handshakes at once (mesh.cpp) and
// the checks can be fuzzed without sockets.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "transport/tcp/secret.hpp"

namespace squall::tcp {

constexpr std::size_t challenge_size = 32, response_size = 64, proof_size = 32;

class acceptor_side {
 public:
  acceptor_side(int me, const job_secret& secret);  // makes a fresh challenge
  std::span<const std::byte, challenge_size> challenge() const { return challenge_; }
  // The connector's node id, or -1 with `why` set; on success proof() is the answer to send.
  int check_response(std::span<const std::byte, response_size> response, std::string& why);
  std::span<const std::byte, proof_size> proof() const { return proof_; }

 private:
  const job_secret* secret_;
  int me_;
  std::array<std::byte, challenge_size> challenge_;
  std::array<std::byte, proof_size> proof_{};
};

class connector_side {
 public:
  connector_side(int me, int peer, const job_secret& secret);
  // False with `why` set when the challenge is not node `peer`'s; else response() is the answer.
  bool check_challenge(std::span<const std::byte, challenge_size> challenge, std::string& why);
  std::span<const std::byte, response_size> response() const { return response_; }
  // False with `why` set when the acceptor does not know the secret.
  bool check_proof(std::span<const std::byte, proof_size> proof, std::string& why) const;

 private:
  const job_secret* secret_;
  int me_, peer_;
  std::array<std::byte, response_size> response_{};
  std::array<std::byte, proof_size> expected_proof_{};
};

// The connector's side over a socket, reaching node `peer`. `failed`: the connection broke or
// the acceptor closed it (it refuses a wrong secret so, but also a handshake that TCP's
// retransmissions on a lossy network made too slow): worth another connection. `refused`:
// the listener is not that node, or does not know the secret; another try would say the same.
enum class handshake_result { done, failed, refused };
handshake_result connect_handshake(int fd, int me, int peer, const job_secret& secret, std::int64_t deadline_ns,
                                   std::string& why);

}  // namespace squall::tcp
