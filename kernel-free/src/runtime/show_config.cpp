// SPDX-License-Identifier: BSD-3-Clause
#include "runtime/show_config.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <squall/collectives.hpp>

#include "common/config.hpp"
#include "common/log.hpp"
#include "common/variables.hpp"

extern char** environ;

namespace squall::rt {
namespace {

// What each node reports to node 0: the values that may differ between nodes.
enum field : std::size_t {
  usable_processors,
  nodes_on_host,
  launcher_bound,
  bound,
  oversubscribed,
  spin_us,
  progress_spin_us,
  linger_us,
  lock_bias,
  network_peers,
  cpu_words_start,
};
constexpr std::size_t cpu_words = 16;  // processors 0-1023
constexpr std::size_t record_words = cpu_words_start + cpu_words;
using record = std::array<std::uint64_t, record_words>;

record this_node(const node_runtime& nd, const host_processors& host) {
  record r{};
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) CPU_ZERO(&mask);
  const auto local = static_cast<int>(std::count(nd.on_this_host.begin(), nd.on_this_host.end(), true));
  r[usable_processors] = static_cast<std::uint64_t>(host.topology ? host.count() : CPU_COUNT(&mask));
  r[nodes_on_host] = static_cast<std::uint64_t>(local);
  r[launcher_bound] = host.launcher_bound;
  r[bound] = nd.config.bind;
  r[oversubscribed] = nd.config.oversubscribed;
  r[spin_us] = static_cast<std::uint64_t>(nd.config.wait_spin_ns / 1000);
  r[progress_spin_us] = static_cast<std::uint64_t>(nd.config.progress_spin_ns / 1000);
  r[linger_us] = static_cast<std::uint64_t>(nd.config.linger_ns / 1000);
  r[lock_bias] = nd.config.lock_bias;
  if (nd.net) {
    int far = 0;
    for (int i = 0; i < nd.n; ++i) far += nd.net->reaches(i) ? 1 : 0;
    r[network_peers] = static_cast<std::uint64_t>(far);
  }
  for (unsigned c = 0; c < 64 * cpu_words && c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mask)) r[cpu_words_start + c / 64] |= std::uint64_t{1} << (c % 64);
  }
  return r;
}

std::string cpus_of(const record& r) {
  cpu_set_ptr cpus(hwloc_bitmap_alloc());
  for (unsigned c = 0; c < 64 * cpu_words; ++c) {
    if ((r[cpu_words_start + c / 64] >> (c % 64)) & 1) hwloc_bitmap_set(cpus.get(), c);
  }
  return cpu_list(cpus.get());
}

// "50" when every node has the same, else runs of nodes: "nodes 0-3: 50, nodes 4-7: 5".
std::string per_node(const std::vector<std::string>& values) {
  if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) return values[0];
  std::string out;
  for (std::size_t first = 0; first < values.size();) {
    std::size_t last = first;
    while (last + 1 < values.size() && values[last + 1] == values[first]) ++last;
    if (!out.empty()) out += ", ";
    out += last == first ? format("node %zu: %s", first, values[first].c_str())
                         : format("nodes %zu-%zu: %s", first, last, values[first].c_str());
    first = last + 1;
  }
  return out;
}

std::vector<std::string> column(const std::vector<record>& nodes, field f) {
  std::vector<std::string> values;
  for (const record& r : nodes) values.push_back(std::to_string(r[f]));
  return values;
}

const char* reader_note(config::reader r) {
  switch (r) {
    case config::reader::libtsm:
      return " (libtsm)";
    case config::reader::libarrays:
      return " (libarrays)";
    case config::reader::squallrun:
      return " (squallrun)";
    default:
      return "";
  }
}

std::string table(const node_runtime& nd, const std::vector<record>& nodes) {
  std::vector<std::string> cpus;
  for (const record& r : nodes) cpus.push_back(cpus_of(r));
  const auto host_dependent = [&](const char* name) -> std::vector<std::string> {
    const std::string n = name;
    if (n == "SQUALL_SPIN_US") return column(nodes, spin_us);
    if (n == "SQUALL_PROGRESS_SPIN_US") return column(nodes, progress_spin_us);
    if (n == "SQUALL_LINGER_US") return column(nodes, linger_us);
    if (n == "SQUALL_LOCK_BIAS") return column(nodes, lock_bias);
    if (n == "SQUALL_BIND") return column(nodes, bound);
    if (n == "SQUALL_OVERSUBSCRIBED") return column(nodes, oversubscribed);
    return {};
  };
  std::string out = format("squall: configuration in force (SQUALL_SHOW_CONFIG), %d node%s\n", nd.n, nd.n == 1 ? "" : "s");
  for (const config::variable& v : config::known_variables()) {
    if (v.read_by == config::reader::job || v.read_by == config::reader::scripts) continue;
    const char* env = std::getenv(v.name);
    const bool from_env = env != nullptr && *env != '\0';
    std::string value = from_env ? env : v.fallback;
    if (const auto in_force = value_in_force(v.name)) value = *in_force;
    if (const auto values = host_dependent(v.name); !values.empty()) value = per_node(values);
    out += format("squall:   %-25s %-12s %s%s\n", v.name, from_env ? "environment" : "default", value.c_str(),
                  reader_note(v.read_by));
  }
  if (const char* secret = std::getenv("SQUALL_JOB_SECRET"); secret != nullptr && *secret != '\0') {
    out += "squall:   SQUALL_JOB_SECRET         environment  (set, not shown)\n";
  }
  std::vector<std::string> host;
  for (const record& r : nodes) {
    host.push_back(format("%llu on %llu processors%s", static_cast<unsigned long long>(r[nodes_on_host]),
                          static_cast<unsigned long long>(r[usable_processors]),
                          r[nodes_on_host] > r[usable_processors] ? " (more nodes than processors)" : ""));
  }
  out += "squall:   nodes per host: " + per_node(host) + "\n";
  std::vector<std::string> launcher;
  for (const record& r : nodes) launcher.push_back(r[launcher_bound] != 0 ? "yes" : "no");
  out += "squall:   processors of each node: " + per_node(cpus) + "\n";
  out += "squall:   bound by the cluster launcher: " + per_node(launcher) + "\n";
  out += "squall:   nodes reached over the network (" + (nd.net ? nd.net->describe() : std::string("none")) +
         " on node 0): " + per_node(column(nodes, network_peers)) + "\n";
  return out;
}

}  // namespace

void warn_unknown_variables(const node_runtime& nd) {
  if (nd.me != 0) return;
  for (const auto& u : config::unknown_variables(environ)) {
    if (u.closest.empty()) {
      warn("unused environment variable %s (no part of Squall reads it)", u.name.c_str());
    } else {
      warn("unused environment variable %s (did you mean %s?)", u.name.c_str(), u.closest.c_str());
    }
  }
}

void show_config(const node_runtime& nd, const host_processors& host) {
  std::uint8_t show = nd.me == 0 && env_bool("SQUALL_SHOW_CONFIG", false);
  broadcast(show);
  if (show == 0) return;
  const record mine = this_node(nd, host);
  std::vector<std::uint64_t> in(record_words * static_cast<std::size_t>(nd.n), 0), out(in.size(), 0);
  std::copy(mine.begin(), mine.end(), in.begin() + static_cast<std::ptrdiff_t>(record_words) * nd.me);
  reduce(std::span<const std::uint64_t>(in), std::span<std::uint64_t>(out));
  if (nd.me != 0) return;
  std::vector<record> nodes(static_cast<std::size_t>(nd.n));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(i * record_words), record_words, nodes[i].begin());
  }
  const std::string text = table(nd, nodes);
  [[maybe_unused]] auto w = ::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace squall::rt
