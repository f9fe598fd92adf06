// SPDX-License-Identifier: BSD-3-Clause
#include "common/variables.hpp"

#include <algorithm>
#include <iterator>

namespace squall::config {
namespace {

using enum reader;

constexpr variable table[] = {
    {"SQUALL_TRANSPORT", runtime, "shm"},
    {"SQUALL_NETWORK", runtime, "auto (ucx when built with UCX and the host has an RDMA device, else tcp)"},
    {"SQUALL_FAULT_PATH", runtime, "auto"},
    {"SQUALL_RECORD_WRITES", runtime, "1"},
    {"SQUALL_HOME_VIEWS", runtime, "1"},
    {"SQUALL_REMOTE_READS", runtime, "auto (on over UCX unless its lanes are TCP)"},
    {"SQUALL_OVERSUBSCRIBED", runtime, "1 with more nodes on the host than processors, else 0"},
    {"SQUALL_BIND", runtime, "1 with 2 or more nodes on the host and no more nodes than processors, else 0"},
    {"SQUALL_SPIN_US", runtime, "50 (5 with more nodes than processors)"},
    {"SQUALL_WAIT_NOTICE_S", runtime, "60"},
    {"SQUALL_PROGRESS_SPIN_US", runtime, "10 (0 with more nodes than processors)"},
    {"SQUALL_LINGER_US", runtime, "50 (0 with more nodes than processors, one node, or peers over the network)"},
    {"SQUALL_LOCK_BIAS", runtime, "1 (0 with more nodes than processors)"},
    {"SQUALL_QUIET_POLLS", runtime, "4"},
    {"SQUALL_QUIET_POLLS_MAX", runtime, "32"},
    {"SQUALL_MAILBOX_DEMOTE", runtime, "1"},
    {"SQUALL_PROGRESS_THREAD", runtime, "1"},
    {"SQUALL_POKE", runtime, "1 (0 with more nodes than processors, or with no progress thread)"},
    {"SQUALL_AGGREGATION", runtime, "1"},
    {"SQUALL_RING_BYTES", runtime, "262144"},
    {"SQUALL_LIVENESS_S", runtime, "30"},
    {"SQUALL_STATS", runtime, "0"},
    {"SQUALL_SHOW_CONFIG", runtime, "0"},
    {"SQUALL_SEGMENT_BASE", runtime, "0x500000000000 (0x1000000000 in a TSan build)"},
    {"SQUALL_SEGMENT_SPACE_GIB", runtime, "1024 (256 in a TSan build)"},
    {"SQUALL_TCP_ADDR", runtime, "127.0.0.1 on one host, else the first non-loopback IPv4 interface"},
    {"SQUALL_TCP_PORT", runtime, "0 (any free port); 41000 with --hosts"},
    {"SQUALL_TCP_TIMEOUT", runtime, "30"},
    {"SQUALL_TSM_HEAP_MIB", libtsm, "1024"},
    {"SQUALL_TSM_HOLD_US", libtsm, "50"},
    {"SQUALL_TSM_FAULT_AROUND", libtsm, "16"},
    {"SQUALL_TSM_ONE_SIDED", libtsm, "1"},
    {"SQUALL_TSM_PROTOCOL", libtsm, "stache"},
    {"SQUALL_PARMACS_LOCKS", libtsm, "65536"},
    {"SQUALL_PARMACS_OBJECTS", libtsm, "65536"},
    {"SQUALL_WORKERS_PER_NODE", libtsm, "the node's processors"},
    {"SQUALL_GRACE", squallrun, "3"},
    {"SQUALL_LABEL", squallrun, "0"},
    {"SQUALL_HOST_INDEX", squallrun, "the listed address that belongs to this machine"},
    {"SQUALL_JOB_SECRET", job, "made at start-up"},
    {"SQUALL_JOB_FD", job, ""},
    {"SQUALL_NODE", job, ""},
    {"SQUALL_NODES", job, ""},
    {"SQUALL_HOSTS", job, ""},
    {"SQUALL_NODES_PER_HOST", job, ""},
    {"SQUALL_STAND_IN", job, ""},  // squallrun run as a lost node's stand-in (launcher/stand_in.hpp)
    {"SQUALL_TEST_NODES", scripts, ""},
    {"SQUALL_TEST_SANITIZERS", scripts, ""},
    {"SQUALL_FAULT_SEED", scripts, ""},
    {"SQUALL_FUZZ_SECONDS", scripts, ""},
    {"SQUALL_BUILD_DIR", scripts, ""},
    {"SQUALL_BENCH_NODES", scripts, ""},
    {"SQUALL_CC", scripts, ""},  // the C compiler of squall-parmacs-cc (cmake/squall-parmacs-cc.in)
};

// Levenshtein distance, one row at a time.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A known name a few edits away (about one in three letters after "SQUALL_"), or one whose
// name holds the other's (SQUALL_HEAP_MIB for SQUALL_TSM_HEAP_MIB).
std::string closest_known(std::string_view name) {
  constexpr std::string_view prefix = "SQUALL_";
  const std::string_view tail = name.substr(prefix.size());
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, tail.size() / 3) + 1;
  for (const variable& v : table) {
    const std::string_view known = std::string_view(v.name).substr(prefix.size());
    std::size_t d = edit_distance(tail, known);
    if (!tail.empty() && (known.find(tail) != std::string_view::npos || tail.find(known) != std::string_view::npos)) {
      d = std::min<std::size_t>(d, 1);
    }
    if (d < best_distance) {
      best_distance = d;
      best = v.name;
    }
  }
  return best;
}

}  // namespace

std::span<const variable> known_variables() { return table; }

const variable* find_variable(std::string_view name) {
  const auto it = std::find_if(std::begin(table), std::end(table), [&](const variable& v) { return name == v.name; });
  return it == std::end(table) ? nullptr : &*it;
}

std::vector<unknown_variable> unknown_variables(char** environment) {
  std::vector<unknown_variable> unknown;
  for (char** entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (!text.starts_with("SQUALL_")) continue;
    const std::string_view name = text.substr(0, text.find('='));
    if (find_variable(name) == nullptr) unknown.push_back({std::string(name), closest_known(name)});
  }
  return unknown;
}

}  // namespace squall::config
