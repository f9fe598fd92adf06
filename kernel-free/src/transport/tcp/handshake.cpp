#include "transport/tcp/handshake.hpp"

#include <cstring>

#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {
namespace {

constexpr char magic[8] = {'S', 'Q', 'U', 'A', 'L', 'L', 'T', '1'};
using nonce = std::array<std::byte, 16>;

struct challenge {
  char magic[8];
  std::uint32_t node;
  std::uint32_t reserved;
  nonce n;
};
struct response {
  char magic[8];
  std::uint32_t node;
  std::uint32_t reaching;
  nonce n;
  tcp::mac mac;
};
struct proof {
  tcp::mac mac;
};

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

}  // namespace

int accept_handshake(int fd, int me, const job_secret& secret, std::int64_t deadline_ns, std::string& why) {
  challenge c{};
  std::memcpy(c.magic, magic, sizeof magic);
  c.node = static_cast<std::uint32_t>(me);
  c.n = fresh_nonce();
  if (auto r = write_full(fd, &c, sizeof c, deadline_ns); r != io_result::done) {
    why = std::string("sending the challenge: ") + describe(r);
    return -1;
  }
  response resp{};
  if (auto r = read_full(fd, &resp, sizeof resp, deadline_ns); r != io_result::done) {
    why = std::string("waiting for the response: ") + describe(r);
    return -1;
  }
  if (std::memcmp(resp.magic, magic, sizeof magic) != 0) {
    why = "not a Squall node (bad greeting)";
    return -1;
  }
  if (resp.reaching != static_cast<std::uint32_t>(me)) {
    why = "it meant to reach node " + std::to_string(resp.reaching);
    return -1;
  }
  if (!same_mac(resp.mac, mac_of(secret, 'C', resp.node, c.node, c.n, resp.n))) {
    why = "it does not know the job's secret";
    return -1;
  }
  const proof p{mac_of(secret, 'A', resp.node, c.node, resp.n, c.n)};
  if (auto r = write_full(fd, &p, sizeof p, deadline_ns); r != io_result::done) {
    why = std::string("sending the proof: ") + describe(r);
    return -1;
  }
  return static_cast<int>(resp.node);
}

bool connect_handshake(int fd, int me, int peer, const job_secret& secret, std::int64_t deadline_ns,
                       std::string& why) {
  challenge c{};
  if (auto r = read_full(fd, &c, sizeof c, deadline_ns); r != io_result::done) {
    why = std::string("waiting for the challenge: ") + describe(r);
    return false;
  }
  if (std::memcmp(c.magic, magic, sizeof magic) != 0 || c.node != static_cast<std::uint32_t>(peer)) {
    why = "the listener is not node " + std::to_string(peer) + " of this job";
    return false;
  }
  response resp{};
  std::memcpy(resp.magic, magic, sizeof magic);
  resp.node = static_cast<std::uint32_t>(me);
  resp.reaching = static_cast<std::uint32_t>(peer);
  resp.n = fresh_nonce();
  resp.mac = mac_of(secret, 'C', resp.node, c.node, c.n, resp.n);
  if (auto r = write_full(fd, &resp, sizeof resp, deadline_ns); r != io_result::done) {
    why = std::string("sending the response: ") + describe(r);
    return false;
  }
  proof p{};
  if (auto r = read_full(fd, &p, sizeof p, deadline_ns); r != io_result::done) {
    why = std::string("waiting for the proof (a wrong secret?): ") + describe(r);
    return false;
  }
  if (!same_mac(p.mac, mac_of(secret, 'A', resp.node, c.node, resp.n, c.n))) {
    why = "it does not know the job's secret";
    return false;
  }
  return true;
}

}  // namespace squall::tcp
