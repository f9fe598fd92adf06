// SPDX-License-Identifier: BSD-3-Clause
#include "transport/tcp/handshake.hpp"

#include <cstring>

#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {
namespace {

constexpr char magic[8] = {'S', 'Q', 'U', 'A', 'L', 'L', 'T', '1'};
using nonce = std::array<std::byte, 16>;

struct challenge_msg {
  char magic[8];
  std::uint32_t node;
  std::uint32_t reserved;
  nonce n;
};
struct response_msg {
  char magic[8];
  std::uint32_t node;
  std::uint32_t reaching;
  nonce n;
  tcp::mac mac;
};
static_assert(sizeof(challenge_msg) == challenge_size && sizeof(response_msg) == response_size &&
              sizeof(mac) == proof_size);

nonce fresh_nonce() {
  const job_secret r = make_secret();
  nonce n;
  std::memcpy(n.data(), r.data(), n.size());
  return n;
}

// HMAC over (role, connector id, acceptor id, first nonce, second nonce).
mac mac_of(const job_secret& secret, char role, std::uint32_t connector, std::uint32_t acceptor,
           const nonce& first, const nonce& second) {
  std::byte msg[1 + 4 + 4 + 16 + 16];
  msg[0] = static_cast<std::byte>(role);
  std::memcpy(msg + 1, &connector, 4);
  std::memcpy(msg + 5, &acceptor, 4);
  std::memcpy(msg + 9, first.data(), 16);
  std::memcpy(msg + 25, second.data(), 16);
  return authenticate(secret, msg);
}

template <typename T, std::size_t n>
T read_as(std::span<const std::byte, n> bytes) {
  static_assert(sizeof(T) == n);
  T t;
  std::memcpy(&t, bytes.data(), n);
  return t;
}

}  // namespace

acceptor_side::acceptor_side(int me, const job_secret& secret) : secret_(&secret), me_(me) {
  challenge_msg c{};
  std::memcpy(c.magic, magic, sizeof magic);
  c.node = static_cast<std::uint32_t>(me);
  c.n = fresh_nonce();
  std::memcpy(challenge_.data(), &c, sizeof c);
}

int acceptor_side::check_response(std::span<const std::byte, response_size> bytes, std::string& why) {
  const auto resp = read_as<response_msg>(bytes);
  const auto c = read_as<challenge_msg>(challenge());
  if (std::memcmp(resp.magic, magic, sizeof magic) != 0) {
    why = "not a Squall node (bad greeting)";
    return -1;
  }
  if (resp.reaching != static_cast<std::uint32_t>(me_)) {
    why = "it meant to reach node " + std::to_string(resp.reaching);
    return -1;
  }
  if (!same_mac(resp.mac, mac_of(*secret_, 'C', resp.node, c.node, c.n, resp.n))) {
    why = "it does not know the job's secret";
    return -1;
  }
  if (resp.node > 0x7fffffffu) {
    why = "node id " + std::to_string(resp.node) + " is out of range";
    return -1;
  }
  proof_ = mac_of(*secret_, 'A', resp.node, c.node, resp.n, c.n);
  return static_cast<int>(resp.node);
}

connector_side::connector_side(int me, int peer, const job_secret& secret) : secret_(&secret), me_(me), peer_(peer) {}

bool connector_side::check_challenge(std::span<const std::byte, challenge_size> bytes, std::string& why) {
  const auto c = read_as<challenge_msg>(bytes);
  if (std::memcmp(c.magic, magic, sizeof magic) != 0 || c.node != static_cast<std::uint32_t>(peer_)) {
    why = "the listener is not node " + std::to_string(peer_) + " of this job";
    return false;
  }
  response_msg resp{};
  std::memcpy(resp.magic, magic, sizeof magic);
  resp.node = static_cast<std::uint32_t>(me_);
  resp.reaching = static_cast<std::uint32_t>(peer_);
  resp.n = fresh_nonce();
  resp.mac = mac_of(*secret_, 'C', resp.node, c.node, c.n, resp.n);
  std::memcpy(response_.data(), &resp, sizeof resp);
  expected_proof_ = mac_of(*secret_, 'A', resp.node, c.node, resp.n, c.n);
  return true;
}

bool connector_side::check_proof(std::span<const std::byte, proof_size> proof, std::string& why) const {
  if (!same_mac(read_as<mac>(proof), expected_proof_)) {
    why = "it does not know the job's secret";
    return false;
  }
  return true;
}

handshake_result connect_handshake(int fd, int me, int peer, const job_secret& secret, std::int64_t deadline_ns,
                                   std::string& why) {
  connector_side side(me, peer, secret);
  std::array<std::byte, challenge_size> c;
  // Only here may this side give up on a connection the other end still has: once the
  // response is sent, the acceptor may count the connection as made, and only its closing
  // it (a refusal) is a reason to try again.
  probe_for_a_dead_peer(fd, true);
  if (auto r = read_full(fd, c.data(), c.size(), deadline_ns); r != io_result::done) {
    why = std::string("waiting for the challenge: ") + describe(r);
    return handshake_result::failed;
  }
  probe_for_a_dead_peer(fd, false);
  if (!side.check_challenge(c, why)) return handshake_result::refused;
  if (auto r = write_full(fd, side.response().data(), response_size, deadline_ns); r != io_result::done) {
    why = std::string("sending the response: ") + describe(r);
    return handshake_result::failed;
  }
  std::array<std::byte, proof_size> p;
  if (auto r = read_full(fd, p.data(), p.size(), deadline_ns); r != io_result::done) {
    // Closed: the acceptor refused the response; its own warning says why.
    why = std::string("waiting for the proof: ") + describe(r) +
          (r == io_result::closed ? " (refused there: a wrong secret? a job of another size on that host? the "
                                    "handshake too slow? that node's warning says which)"
                                  : "");
    return handshake_result::failed;
  }
  return side.check_proof(p, why) ? handshake_result::done : handshake_result::refused;
}

}  // namespace squall::tcp
