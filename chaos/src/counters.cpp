// SPDX-License-Identifier: BSD-3-Clause
#include "counters.hpp"

#include <squall/stats.hpp>

namespace squall::chaos::detail {
namespace {
stats::counter& c(const char* name) {
  // One per name, registered on first use; never destroyed (counted at exit too).
  return *new stats::counter(name);
}
}  // namespace

void count_message(std::size_t bytes) {
  static stats::counter& messages = c("chaos.messages");
  static stats::counter& sent = c("chaos.bytes");
  messages.add();
  sent.add(bytes);
}
void count_elements(std::size_t n) {
  static stats::counter& elements = c("chaos.elements");
  elements.add(n);
}
void count_execution() {
  static stats::counter& executions = c("chaos.executions");
  executions.add();
}
void count_early_message() {
  static stats::counter& early = c("chaos.early_messages");
  early.add();
}
void count_inspector_ns(std::uint64_t ns) {
  static stats::counter& inspector = c("chaos.inspector_ns");
  inspector.add(ns);
}
void count_lookups(std::size_t n, std::size_t requests) {
  static stats::counter& lookups = c("chaos.table.lookups");
  static stats::counter& lookup_requests = c("chaos.table.requests");
  lookups.add(n);
  lookup_requests.add(requests);
}

}  // namespace squall::chaos::detail
