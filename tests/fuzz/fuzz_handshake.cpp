// SPDX-License-Identifier: BSD-3-Clause
// Bytes a stranger sends during the TCP handshake: as the connector's response to a node's
// challenge, and as a challenge and a proof to a connecting node. None may be accepted
// without the job's secret, and none may make the checks read outside what was received.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "transport/tcp/handshake.hpp"

using namespace squall::tcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const job_secret secret = make_secret();  // the stranger does not know it
  std::array<std::byte, response_size> response{};
  std::memcpy(response.data(), data, std::min(size, response.size()));
  std::string why;
  acceptor_side acceptor(0, secret);
  if (acceptor.check_response(response, why) >= 0) __builtin_trap();  // forged a MAC?
  if (why.empty()) __builtin_trap();

  std::array<std::byte, challenge_size> challenge{};
  std::memcpy(challenge.data(), data, std::min(size, challenge.size()));
  connector_side connector(1, 0, secret);
  if (!connector.check_challenge(challenge, why)) return 0;
  std::array<std::byte, proof_size> proof{};
  if (size > challenge_size) std::memcpy(proof.data(), data + challenge_size, std::min(size - challenge_size, proof.size()));
  if (connector.check_proof(proof, why)) __builtin_trap();  // forged the acceptor's proof?
  return 0;
}
