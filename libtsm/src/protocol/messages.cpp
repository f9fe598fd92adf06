// SPDX-License-Identifier: BSD-3-Clause
// Routing protocol messages to the object that runs their block, and carrying block bytes.
#include <squall/tsm/messages.hpp>

#include <cstdio>
#include <cstring>
#include <cxxabi.h>
#include <memory>
#include <string>

#include <squall/error.hpp>

#include "binding.hpp"

namespace squall::tsm {
namespace {

std::string readable(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 ? std::string(name.get()) : std::string(t.name());
}

std::string hex(std::uintptr_t address) {
  char text[32];
  std::snprintf(text, sizeof text, "%#zx", static_cast<std::size_t>(address));
  return text;
}

// Where a block's bytes go; checked like a routed message.
segment live_segment(std::uintptr_t address) {
  try {
    return memory::segment_of(reinterpret_cast<const void*>(address));
  } catch (const usage_error&) {
    throw usage_error("a protocol message for address " + hex(address) +
                      " arrived, but no live segment holds it (was the segment freed with messages still on the way?)");
  }
}

void fill_msg(am::token&, std::uintptr_t address, std::uint64_t offset, am::payload bytes) {
  const segment s = live_segment(address);
  block_part{offset, bytes}.store(s, s.block_of(reinterpret_cast<const void*>(address)));
}

}  // namespace

void block_part::store(segment s, block_index b) const {
  if (!bytes.empty()) std::memcpy(s.protocol_view(b).data() + offset, bytes.data(), bytes.size());
}

void block_part::install(segment s, block_index b, tag t) const {
  if (offset == 0 && bytes.size() == s.block_size()) {
    s.install(b, bytes, t);  // the whole block at once: the cheapest way in
  } else {
    store(s, b);
    s.set_tag(b, t);
  }
}

namespace detail {

located locate(std::uintptr_t address, const std::type_info& expected) {
  const segment s = live_segment(address);
  const block_index b = s.block_of(reinterpret_cast<const void*>(address));
  auto* bound = dynamic_cast<binding*>(s.bound_protocol());
  if (bound == nullptr) {
    throw usage_error("a message for protocol " + readable(expected) + " arrived for address " + hex(address) +
                      ", which is in a segment that is not TSM memory");
  }
  protocol& p = bound->protocol_for(b);
  if (typeid(p) != expected) {
    throw usage_error("a message for protocol " + readable(expected) + " arrived for block " + std::to_string(b) +
                      " (address " + hex(address) + "), which protocol '" + std::string(p.name()) + "' (" +
                      readable(typeid(p)) + ") runs here");
  }
  return {s, b, &p};
}

block_part send_leading_parts(segment s, block_index b, int dest, bool with_bytes) {
  if (!with_bytes) return {};
  const std::span<const std::byte> all = s.protocol_view(b);
  const std::size_t chunk = am::max_payload();
  std::size_t at = 0;
  for (; all.size() - at > chunk; at += chunk) {
    am::send<fill_msg>(dest, address_of(s, b), std::uint64_t{at}, am::payload(all.subspan(at, chunk)));
  }
  return {at, am::payload(all.subspan(at))};
}

}  // namespace detail
}  // namespace squall::tsm
