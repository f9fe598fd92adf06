// SPDX-License-Identifier: BSD-3-Clause
// The per-job secret: made by the launcher at start-up, handed to every node in the
// environment (SQUALL_JOB_SECRET, hex), and proven by both ends of every TCP connection
// with an HMAC over fresh nonces (handshake.hpp). The secret itself never crosses the wire.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace squall::tcp {

using job_secret = std::array<std::byte, 32>;
using mac = std::array<std::byte, 32>;

job_secret make_secret();                          // from the kernel's random source
std::string to_hex(std::span<const std::byte> bytes);
// The secret in SQUALL_JOB_SECRET; fatal, naming the variable, when unset or malformed.
job_secret secret_from_env();

// HMAC-SHA256 of `message` under the secret (OpenSSL).
mac authenticate(const job_secret& secret, std::span<const std::byte> message);
bool same_mac(const mac& a, const mac& b);  // constant time

}  // namespace squall::tcp
