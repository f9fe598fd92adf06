// SPDX-License-Identifier: BSD-3-Clause
#include "stats/tables.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stats/units.hpp"

namespace squall::stats {
namespace {

constexpr std::size_t label_width = 40;   // summary: layer and counter, or a handler's name
constexpr std::size_t layer_width = 9;
constexpr std::size_t number_width = 10;
constexpr std::size_t node_label_width = 28;  // per node: the counter's full name
constexpr std::size_t node_width = 9;
constexpr int nodes_per_block = 8;

// The layers in the order of the stack, from messages down to the libraries above them;
// layers not listed follow in the order of their names.
constexpr std::array layer_order{"am", "shm", "tcp", "progress", "wait", "lock", "memory", "channel", "tsm", "parmacs", "chaos"};

std::size_t layer_rank(std::string_view layer) {
  const auto it = std::find(layer_order.begin(), layer_order.end(), layer);
  return static_cast<std::size_t>(it - layer_order.begin());
}

std::string_view layer_of(std::string_view name) { return name.substr(0, name.find('.')); }

// Counter names in the order the tables list them: by layer, then by name (the map's order).
std::vector<std::string_view> ordered_counters(const job_counters& job) {
  std::vector<std::string_view> names;
  for (const auto& [name, values] : job.counters) names.push_back(name);
  std::stable_sort(names.begin(), names.end(), [](std::string_view a, std::string_view b) {
    return layer_rank(layer_of(a)) < layer_rank(layer_of(b));
  });
  return names;
}

std::string where(const job_counters& job) {
  std::vector<std::string> distinct = job.hosts;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const std::string nodes = std::to_string(job.nodes) + (job.nodes == 1 ? " node" : " nodes");
  if (distinct.size() == 1) return nodes + " on " + distinct[0];
  return nodes + " on " + std::to_string(distinct.size()) + " hosts";
}

// "network: ucx: tcp/eth0" (each distinct network transport, with how many nodes use it when
// not all do), or "" when no node had one.
std::string networks(const job_counters& job) {
  std::map<std::string, std::vector<int>> nodes_of;
  for (std::size_t i = 0; i < job.networks.size(); ++i) {
    if (!job.networks[i].empty()) nodes_of[job.networks[i]].push_back(static_cast<int>(i));
  }
  if (nodes_of.empty()) return "";
  std::string out = "network: ";
  const char* separator = "";
  for (const auto& [network, nodes] : nodes_of) {
    out += separator + network;
    if (nodes.size() != static_cast<std::size_t>(job.nodes)) out += " (" + std::to_string(nodes.size()) + " nodes)";
    separator = "; ";
  }
  return out + "\n";
}

std::string summary_row(std::string label, const per_node& values, unit u) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double mean = static_cast<double>(total(values)) / static_cast<double>(values.size());
  char imbalance[32];
  std::snprintf(imbalance, sizeof imbalance, "%.2f", static_cast<double>(*hi) / mean);
  return align_left(label, label_width) + align_right(human(total(values), u), number_width) +
         align_right(human(*lo, u), number_width) + align_right(human(*hi, u), number_width) +
         align_right(imbalance, number_width);
}

std::string column_titles(std::string_view label, bool with_bytes) {
  return align_left(label, label_width) + align_right("total", number_width) + align_right("min", number_width) +
         align_right("max", number_width) + align_right("max/mean", number_width) +
         (with_bytes ? align_right("bytes", number_width) : "") + "\n";
}

// Who a handler belongs to, for the report only: the runtime's plumbing (registered as such),
// Squall's libraries (libtsm's, CHAOS's protocol messages: named in namespace squall::), or the
// program. Only the first decides anything (what fence() counts); the other two are shown apart
// so that a program's own messages are not lost among its libraries'.
enum class owner { program, library, runtime };

owner owner_of(const job_handler& h) {
  if (h.internal) return owner::runtime;
  return std::string_view(h.name).starts_with("squall::") ? owner::library : owner::program;
}

std::string_view title_of(owner o) {
  switch (o) {
    case owner::program: return "program's handlers";
    case owner::library: return "library handlers";
    case owner::runtime: return "runtime handlers";
  }
  return "";
}

// A handler's name as the tables show it: without the "{anonymous}::" of handlers defined in
// an unnamed namespace (the JSON keeps the full name).
std::string shown_name(std::string_view name) {
  constexpr std::string_view anonymous = "{anonymous}::";
  std::string out;
  for (std::size_t at = 0; at < name.size();) {
    if (name.substr(at).starts_with(anonymous)) {
      at += anonymous.size();
    } else {
      out += name[at++];
    }
  }
  return out;
}

// The summary fits a screen: at most this many lines, title to "not shown" line included.
constexpr std::size_t screen_lines = 50;

// How many of an owner's handlers the summary lists at most, the busiest first; the rest are
// one line (SQUALL_STATS=nodes and json:FILE list every one).
std::size_t rows_wanted(owner o) { return o == owner::program ? 12 : 6; }
constexpr std::size_t fewest_rows = 2;

constexpr owner owners[] = {owner::program, owner::library, owner::runtime};

// The handlers of one owner that handled messages, the busiest first.
std::vector<const job_handler*> busy_handlers(const job_counters& job, owner who) {
  std::vector<const job_handler*> busy;
  for (const auto& h : job.handlers) {
    if (owner_of(h) == who && total(h.received) != 0) busy.push_back(&h);
  }
  std::stable_sort(busy.begin(), busy.end(),
                   [](const job_handler* a, const job_handler* b) { return total(a->received) > total(b->received); });
  return busy;
}

// Lines a handler section takes with at most `rows` handler rows: its title, the rows, and
// the line of the rest. A program with no busy handler gets one line saying so.
std::size_t section_lines(std::size_t busy, std::size_t rows, owner who) {
  if (busy == 0) return who == owner::program ? 1 : 0;
  return 1 + std::min(busy, rows) + (busy > rows ? 1 : 0);
}

// Rows per owner so that the sections fit in `lines` (counters come first, and every row of
// them is shown): each starts at rows_wanted and, while the sections do not fit, the owner
// listing most rows lists one fewer, down to fewest_rows.
std::array<std::size_t, 3> rows_within(const std::array<std::size_t, 3>& busy, std::size_t lines) {
  std::array<std::size_t, 3> rows{};
  for (std::size_t i = 0; i < 3; ++i) rows[i] = std::min(busy[i], rows_wanted(owners[i]));
  auto used = [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < 3; ++i) n += section_lines(busy[i], rows[i], owners[i]);
    return n;
  };
  while (used() > lines) {
    std::size_t most = 3;
    for (std::size_t i = 0; i < 3; ++i) {
      if (rows[i] > fewest_rows && (most == 3 || rows[i] > rows[most])) most = i;
    }
    if (most == 3) break;  // as few as they go: the summary is longer than a screen
    --rows[most];
  }
  return rows;
}

void handler_rows(std::string& out, const std::vector<const job_handler*>& busy, owner who, std::size_t rows) {
  if (busy.empty()) {
    if (who == owner::program) out += std::string(title_of(who)) + ": none handled a message\n";
    return;
  }
  out += column_titles(std::string(title_of(who)) + " (messages handled)", true);
  std::uint64_t rest_messages = 0, rest_bytes = 0;
  for (std::size_t i = 0; i < busy.size(); ++i) {
    const auto& h = *busy[i];
    if (i < rows) {
      out += summary_row("  " + keep_tail(shown_name(h.name), label_width - 3), h.received, unit::count) +
             align_right(human(total(h.received_bytes), unit::bytes), number_width) + "\n";
    } else {
      rest_messages += total(h.received);
      rest_bytes += total(h.received_bytes);
    }
  }
  if (busy.size() > rows) {
    out += align_left("  " + std::to_string(busy.size() - rows) + " more", label_width) +
           align_right(human(rest_messages, unit::count), number_width) + align_right("", 3 * number_width) +
           align_right(human(rest_bytes, unit::bytes), number_width) + "\n";
  }
}

}  // namespace

std::string summary_table(const job_counters& job, const std::string& date) {
  std::string out = "squall stats: " + where(job) + ", " + date + "; zeros hidden\n" + networks(job);
  out += column_titles(align_left("layer", layer_width) + "counter", false);
  int hidden_counters = 0, hidden_handlers = 0;
  std::string_view previous_layer;
  for (const auto name : ordered_counters(job)) {
    const auto& values = job.counters.find(name)->second;
    if (total(values) == 0) {
      ++hidden_counters;
      continue;
    }
    const auto layer = layer_of(name);
    const auto counter = layer.size() < name.size() ? name.substr(layer.size() + 1) : name;
    std::string label = align_left(layer == previous_layer ? "" : layer, layer_width - 1) + " " +
                        keep_tail(counter, label_width - layer_width - 1);
    out += summary_row(std::move(label), values, unit_of(name)) + "\n";
    previous_layer = layer;
  }
  for (const auto& h : job.handlers) hidden_handlers += total(h.received) == 0 ? 1 : 0;
  std::array<std::vector<const job_handler*>, 3> busy;
  std::array<std::size_t, 3> busy_count{};
  for (std::size_t i = 0; i < 3; ++i) {
    busy[i] = busy_handlers(job, owners[i]);
    busy_count[i] = busy[i].size();
  }
  const std::size_t used = static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')) + 1;  // + "not shown"
  const auto rows = rows_within(busy_count, screen_lines > used ? screen_lines - used : 0);
  for (std::size_t i = 0; i < 3; ++i) handler_rows(out, busy[i], owners[i], rows[i]);
  out += "not shown: " + std::to_string(hidden_counters) + " counters and " + std::to_string(hidden_handlers) +
         " handlers at zero on every node (SQUALL_STATS=json:FILE has all)\n";
  return out;
}

std::string per_node_table(const job_counters& job, const std::string& date) {
  std::string out = "squall stats per node: " + where(job) + ", " + date + "; zeros on every node hidden\n" + networks(job);
  for (int first = 0; first < job.nodes; first += nodes_per_block) {
    const int last = std::min(job.nodes, first + nodes_per_block);
    const auto row = [&](std::string_view label, const per_node& values, unit u) {
      out += align_left(keep_tail(label, node_label_width - 1), node_label_width);
      for (int i = first; i < last; ++i) out += align_right(human(values[static_cast<std::size_t>(i)], u), node_width);
      out += "\n";
    };
    const auto titles = [&](std::string_view label) {
      out += align_left(label, node_label_width);
      for (int i = first; i < last; ++i) out += align_right("node " + std::to_string(i), node_width);
      out += "\n";
    };
    titles("counter");
    for (const auto name : ordered_counters(job)) {
      const auto& values = job.counters.find(name)->second;
      if (total(values) != 0) row(name, values, unit_of(name));
    }
    for (const owner who : {owner::program, owner::library, owner::runtime}) {
      titles(title_of(who));
      for (const auto& h : job.handlers) {
        if (owner_of(h) == who && total(h.received) != 0) row("  " + shown_name(h.name), h.received, unit::count);
      }
    }
  }
  return out;
}

}  // namespace squall::stats
