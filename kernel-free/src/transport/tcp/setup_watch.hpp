// SPDX-License-Identifier: BSD-3-Clause
// While a job's connections are made (mesh.hpp) nothing reads those already made, and the
// node's watchdog has not started: a peer that ended meanwhile, or a node of this host that
// died before it connected (only this host's launcher sees that), was noticed only at
// SQUALL_TCP_TIMEOUT, the other hosts' nodes waiting for it until then. This thread watches
// for both, with the loss reports the transport uses once the job runs (endings.hpp):
//   - a made connection that closes is read for its node's ending frame, reported as the
//     transport reports it; one closed without it loses its node;
//   - once this node's job is aborted, every peer reached is told at once, and so is each
//     reached later: an ending frame, then the connection half-closed so that the peer reads
//     it now. Peers this node has yet to reach may be waiting for the lost node rather than
//     for this one, so the node ends (`end`) once no connection was made for 2 s;
//   - once aborted, it also answers the connections waiting on the node's listener
//     (answer_on), which are then told in turn. Until then a peer waited there in vain while
//     the node had yet to reach its own lower peers: node 0 killed, node 4 waited for node 2,
//     which waited for node 0, and reached node 1 only after node 1 (told by its host) ended.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/endings.hpp"
#include "transport/tcp/secret.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::tcp {

class accepting;
class listener;

// An ending frame (frames.hpp, kind_ending): the node a set-up that ends blames, and why.
std::vector<std::byte> ending_frame(int lost_node, std::uint32_t silent_ms, const std::string& why, std::size_t max_body);
// Sends it on a connection of the set-up, whose socket buffer takes it whole (little else
// went that way), and half-closes the connection so that the peer reads it now.
void say_ending_on(int fd, std::span<const std::byte> frame);

class setup_watch {
 public:
  struct hooks {
    lost_fn lost;    // as network_hooks::lost
    hears_fn hears;  // as network_hooks::hears
    // Whether this node's job was aborted, and if so the node it lost, how long it had been
    // silent (0: it ended), and why.
    std::function<bool(int& lost_node, std::uint32_t& silent_ms, std::string& why)> aborted;
    std::function<void()> end;  // ends this node (fatal; its last words call say_ending)
  };
  // `max_body`: the longest ending frame body a peer sends (its transport's max_packet).
  setup_watch(int me, int nodes, std::size_t max_body, hooks h);
  ~setup_watch();
  setup_watch(const setup_watch&) = delete;
  setup_watch& operator=(const setup_watch&) = delete;

  // Connection `fd` to `node` is made (again for one already known: ignored).
  void made(int node, int fd);
  // Once the job is aborted, answers the connections waiting on `l` from the higher peers
  // marked in `over_tcp` (accepting.hpp), as made connections. `l` and `secret` outlive this.
  void answer_on(const listener& l, const job_secret& secret, const std::vector<bool>& over_tcp);
  // Sends an ending frame on every connection made that has not had one, and half-closes it.
  void say_ending(int lost_node, std::uint32_t silent_ms, const std::string& why);

 private:
  struct connection {
    int node, fd;
    endpoint peer;  // for the report: a closed socket no longer knows it
    bool told = false, closed = false;
  };
  void run();
  void read_closed(const connection& c);  // reports what its node left on it
  int answer_waiting();                    // the listener's fd to poll, or -1 (answer_on)

  int me_, nodes_;
  std::size_t max_body_;
  hooks hooks_;
  std::mutex mu_;
  std::vector<connection> conns_;
  std::int64_t last_made_ = 0;  // when a connection was last made (under mu_)
  // answer_on's (set under mu_); then the watch thread's alone.
  const listener* listener_ = nullptr;
  const job_secret* secret_ = nullptr;
  std::vector<bool> over_tcp_;
  std::vector<int> answered_;  // the connections it made, by peer (-1: none)
  std::unique_ptr<accepting> answering_;
  int wake_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace squall::tcp
