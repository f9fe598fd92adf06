// Shared-memory transport: one ring per ordered pair of this host's nodes in the job's
// mapping, a one-packet mailbox per direction for small packets of request/reply exchanges
// (mailbox.hpp), and a futex doorbell per node rung only when no thread of the receiver is
// polling.
#pragma once
#include <vector>

#include <memory>

#include "transport/shm/job_area.hpp"
#include "transport/shm/mailbox.hpp"
#include "transport/shm/ring.hpp"
#include "transport/transport.hpp"

namespace squall::shm {

class shm_transport final : public transport {
 public:
  shm_transport(const job_area& job, int me);

  bool try_send(int dest, std::span<const std::byte> head, std::span<const std::byte> body) override;
  bool try_send_written(int dest, std::span<const std::byte> head, std::size_t body_size,
                        body_writer write) override;
  std::span<const std::byte> peek(int src) override;
  void release(int src) override;
  bool any_incoming() override;
  std::size_t max_packet() const override { return out_[me_].max_packet(); }

  // Wakes `node` if none of its threads is polling.
  void ring_doorbell(int node);

 private:
  const job_area& job_;
  int me_;
  std::vector<ring_producer> out_;  // by destination
  std::vector<ring_consumer> in_;   // by source
  std::unique_ptr<mailbox[]> mail_;  // by peer (unattached for this node and other hosts' nodes)
  std::vector<bool> peeked_mail_;    // by source: the packet peek() returned came from the mailbox
  std::vector<int> local_;          // the nodes with rings: those on this host
};

}  // namespace squall::shm
