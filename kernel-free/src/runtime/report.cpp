#include "runtime/report.hpp"

#include <cstdio>
#include <string>

#include <squall/collectives.hpp>
#include <squall/stats.hpp>

namespace squall::rt {

void print_report(node_runtime& nd) {
  const auto s = stats::take();
  std::string text = "squall stats, node " + std::to_string(nd.me) + " of " + std::to_string(nd.n) + ":\n";
  char line[256];
  for (const auto& [name, value] : s.counters) {
    std::snprintf(line, sizeof line, "  %-32s %14llu\n", name.c_str(), static_cast<unsigned long long>(value));
    text += line;
  }
  for (const auto& h : s.handlers) {
    if (h.sent == 0 && h.received == 0) continue;
    std::snprintf(line, sizeof line, "  handler %-40s sent %10llu (%llu B)  received %10llu (%llu B)\n",
                  h.name.c_str(), static_cast<unsigned long long>(h.sent),
                  static_cast<unsigned long long>(h.sent_bytes),
                  static_cast<unsigned long long>(h.received),
                  static_cast<unsigned long long>(h.received_bytes));
    text += line;
  }
  for (int i = 0; i < nd.n; ++i) {
    if (i == nd.me) {
      std::fflush(stdout);
      std::fputs(text.c_str(), stderr);
      std::fflush(stderr);
    }
    barrier();
  }
}

}  // namespace squall::rt
