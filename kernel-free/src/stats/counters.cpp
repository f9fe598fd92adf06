// SPDX-License-Identifier: BSD-3-Clause
#include "stats/counters.hpp"

#include <array>
#include <mutex>
#include <string>

#include <squall/stats.hpp>

#include "am/registry.hpp"
#include "common/log.hpp"

namespace squall::stats {
namespace {

struct named_counters {
  std::mutex mutex;  // guards creation of slots only
  std::array<std::string, max_counters> names;
  int used = 0;
};

// Never destroyed: counters are created by threads that may outlive static destruction.
named_counters& named() {
  static named_counters& c = *new named_counters;
  return c;
}

}  // namespace

int counter_slot(std::string_view name) {
  auto& c = named();
  std::lock_guard g(c.mutex);
  for (int i = 0; i < c.used; ++i) {
    if (c.names[i] == name) return i;
  }
  if (c.used == max_counters) fatal("more than %d named counters", max_counters);
  c.names[c.used] = std::string(name);
  return c.used++;
}


counter::counter(std::string_view name) : value_(&counter_at(counter_slot(name))) {}

std::uint64_t snapshot::get(std::string_view name) const {
  auto it = counters.find(name);
  return it == counters.end() ? 0 : it->second;
}

handler_counts snapshot::handler(std::string_view given) const {
  const std::string name = am::one_spelling(given);
  for (const auto& h : handlers) {
    if (h.name == name) return h;
  }
  return handler_counts{name};
}

snapshot take() {
  snapshot s;
  auto& c = named();
  {
    std::lock_guard g(c.mutex);
    for (int i = 0; i < c.used; ++i) s.counters[c.names[i]] = counter_values[i].load(std::memory_order_relaxed);
  }
  std::uint64_t sent = 0, received = 0;
  am::for_each_handler([&](int index, std::string_view name, bool internal) {
    auto& h = handler_at(index);
    s.handlers.push_back({std::string(name), internal,
                          h.sent.load(std::memory_order_relaxed) + h.staged_sent.load(std::memory_order_relaxed),
                          h.sent_bytes.load(std::memory_order_relaxed) +
                              h.staged_sent_bytes.load(std::memory_order_relaxed),
                          h.received.load(std::memory_order_relaxed),
                          h.received_bytes.load(std::memory_order_relaxed)});
    sent += s.handlers.back().sent;
    received += s.handlers.back().received;
  });
  // Totals are sums over handlers rather than counters of their own (one store less per message).
  s.counters["am.messages_sent"] = sent;
  s.counters["am.messages_received"] = received;
  return s;
}

void reset() {
  auto& c = named();
  {
    std::lock_guard g(c.mutex);
    for (int i = 0; i < c.used; ++i) counter_values[i].store(0, std::memory_order_relaxed);
  }
  for (auto& h : handler_slots) {
    h.sent.store(0, std::memory_order_relaxed);
    h.sent_bytes.store(0, std::memory_order_relaxed);
    h.staged_sent.store(0, std::memory_order_relaxed);
    h.staged_sent_bytes.store(0, std::memory_order_relaxed);
    h.received.store(0, std::memory_order_relaxed);
    h.received_bytes.store(0, std::memory_order_relaxed);
  }
}

}  // namespace squall::stats
