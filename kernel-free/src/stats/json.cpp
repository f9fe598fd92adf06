// SPDX-License-Identifier: BSD-3-Clause
#include "stats/json.hpp"

#include <cstdio>

namespace squall::stats {
namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string array(const per_node& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

std::string to_json(const job_counters& job, const std::string& iso_date) {
  std::string out = "{\n  \"host\": " + quoted(job.hosts.empty() ? "" : job.hosts[0]) + ",\n  \"hosts\": [";
  for (std::size_t i = 0; i < job.hosts.size(); ++i) out += (i == 0 ? "" : ", ") + quoted(job.hosts[i]);
  out += "],\n  \"networks\": [";
  for (std::size_t i = 0; i < job.networks.size(); ++i) out += (i == 0 ? "" : ", ") + quoted(job.networks[i]);
  out += "],\n  \"nodes\": " + std::to_string(job.nodes) + ",\n  \"date\": " + quoted(iso_date) +
         ",\n  \"counters\": {";
  const char* separator = "\n";
  for (const auto& [name, values] : job.counters) {
    out += separator + std::string("    ") + quoted(name) + ": " + array(values);
    separator = ",\n";
  }
  out += "\n  },\n  \"handlers\": [";
  separator = "\n";
  for (const auto& h : job.handlers) {
    out += separator + std::string("    {\"name\": ") + quoted(h.name) + ", \"internal\": " +
           (h.internal ? "true" : "false") + ",\n     \"sent\": " + array(h.sent) + ", \"sent_bytes\": " +
           array(h.sent_bytes) + ",\n     \"received\": " + array(h.received) +
           ", \"received_bytes\": " + array(h.received_bytes) + "}";
    separator = ",\n";
  }
  return out + "\n  ]\n}\n";
}

}  // namespace squall::stats
