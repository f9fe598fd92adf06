// The interface between the message layer and a transport. The active-message engine
// moves whole packets through it and never asks which transport it runs on.
#pragma once
#include <cstddef>
#include <span>

namespace squall {

class transport {
 public:
  virtual ~transport() = default;

  // Sends one packet (head followed by body) to `dest`, waking it if no thread of it is
  // polling. False when there is no room now; the transport then signals this node when
  // room appears, and the caller retries from its progress loop.
  virtual bool try_send(int dest, std::span<const std::byte> head,
                        std::span<const std::byte> body) = 0;
  // The next packet from `src`, or an empty span; valid until release(src).
  virtual std::span<const std::byte> peek(int src) = 0;
  virtual void release(int src) = 0;
  virtual bool any_incoming() = 0;
  virtual std::size_t max_packet() const = 0;
};

}  // namespace squall
