// SPDX-License-Identifier: BSD-3-Clause
// SQUALL_STATS on 8 nodes of a small TSM program: node 0 prints one table that fits a screen
// (at most 50 lines of at most 100 columns), whose totals, minima and maxima are those of the
// nodes' values in the JSON it writes too; counters at zero on every node are hidden; the
// program's handler is listed apart from the runtime's; the JSON is valid.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "patterns.hpp"
#include "run_command.hpp"
#include "stats_json.hpp"

namespace {

using squall::test::run;

constexpr int nodes = 8;
constexpr std::size_t label_columns = 40, number_columns = 10;

std::size_t columns(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Columns [from, from + count) of a line, spaces trimmed (UTF-8 aware: µ is one column).
std::string cut(const std::string& line, std::size_t from, std::size_t count) {
  std::string out;
  std::size_t column = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((line[i] & 0xC0) != 0x80 && i > 0) ++column;
    if (column >= from && column < from + count) out += line[i];
  }
  const auto first = out.find_first_not_of(' '), last = out.find_last_not_of(' ');
  return first == std::string::npos ? "" : out.substr(first, last - first + 1);
}

// "12.3k" -> 12300, "4.50 MiB" -> 4718592, "812 µs" -> 812000 (nanoseconds).
double value_of(const std::string& text) {
  std::istringstream in(text);
  double x = 0;
  in >> x;
  std::string suffix;
  std::getline(in, suffix);
  suffix.erase(0, suffix.find_first_not_of(' '));
  const std::map<std::string, double> scale{
      {"", 1},          {"k", 1e3},       {"M", 1e6},          {"G", 1e9},         {"B", 1},
      {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"ns", 1},      {"µs", 1e3},
      {"ms", 1e6},      {"s", 1e9}};
  const auto it = scale.find(suffix);
  EXPECT_NE(it, scale.end()) << "unknown unit in '" << text << "'";
  return it == scale.end() ? -1 : x * it->second;
}

// A shown value stands for `exact` when it is within its three significant digits.
void expect_shows(const std::string& shown, std::uint64_t exact, const std::string& what) {
  const double x = value_of(shown), e = static_cast<double>(exact);
  EXPECT_LE(std::fabs(x - e), 0.006 * e + 0.5) << what << ": shows " << shown << ", the nodes' values give " << exact;
}

struct row {
  std::string label, total, min, max, imbalance, bytes;
};

row parse_row(const std::string& line) {
  return {cut(line, 0, label_columns), cut(line, label_columns, number_columns),
          cut(line, label_columns + number_columns, number_columns),
          cut(line, label_columns + 2 * number_columns, number_columns),
          cut(line, label_columns + 3 * number_columns, number_columns),
          cut(line, label_columns + 4 * number_columns, number_columns)};
}

void expect_row_matches(const row& r, const std::vector<std::uint64_t>& values, const std::string& what) {
  ASSERT_EQ(values.size(), static_cast<std::size_t>(nodes)) << what;
  std::uint64_t sum = 0;
  for (auto v : values) sum += v;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  expect_shows(r.total, sum, what + " total");
  expect_shows(r.min, *lo, what + " min");
  expect_shows(r.max, *hi, what + " max");
  EXPECT_NEAR(std::stod(r.imbalance), static_cast<double>(*hi) * nodes / static_cast<double>(sum), 0.0051) << what;
}

class StatsReport : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/squall-stats-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { run("rm -rf " + dir_); }
  std::string dir_;
};

TEST_F(StatsReport, EightNodesTableFitsAScreenAndAddsUpToTheJson) {
  const std::string json = dir_ + "/stats.json";
  const auto o = run(std::string(SQUALLRUN) + " -n 8 --stats=1,nodes,json:" + json + " " + STATS_PROGRAM, 120);
  ASSERT_EQ(o.status, 0) << o.output;

  const auto valid = run("python3 -m json.tool " + json + " >/dev/null");
  EXPECT_EQ(valid.status, 0) << valid.output;
  const squall::test::stats_json j(json);
  ASSERT_FALSE(j.text.empty()) << "node 0 did not write " << json << "\n" << o.output;
  EXPECT_EQ(j.nodes, nodes);
  EXPECT_EQ(j.hosts.size(), static_cast<std::size_t>(nodes));
  EXPECT_TRUE(squall::test::match_whole(j.date, "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z")) << j.date;

  // The table: from its title to its "not shown" line.
  std::vector<std::string> table;
  {
    std::istringstream in(o.output);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("squall stats: 8 nodes on ")) inside = true;
      if (inside) table.push_back(line);
      if (inside && line.starts_with("not shown: ")) break;
    }
  }
  ASSERT_GE(table.size(), 4u) << o.output;
  ASSERT_TRUE(table.back().starts_with("not shown: ")) << o.output;
  EXPECT_LE(table.size(), 50u) << o.output;
  for (const auto& line : table) EXPECT_LE(columns(line), 100u) << line;

  // Counters: every row adds up; every counter nonzero somewhere has a row, the others none.
  std::map<std::string, row> shown;
  std::size_t at = 2;
  for (std::string layer; at < table.size() && !table[at].starts_with("program's handlers"); ++at) {
    const row r = parse_row(table[at]);
    const std::string first = cut(table[at], 0, 9);
    if (!first.empty()) layer = first;
    shown[layer + "." + cut(table[at], 9, label_columns - 9)] = r;
  }
  std::size_t zeros = 0;
  for (const auto& [name, values] : j.counters) {
    const bool zero = std::all_of(values.begin(), values.end(), [](auto v) { return v == 0; });
    zeros += zero ? 1 : 0;
    EXPECT_EQ(shown.count(name), zero ? 0u : 1u) << name << (zero ? " is zero on every node but shown" : " is not shown");
    if (!zero && shown.count(name) != 0) expect_row_matches(shown[name], values, name);
  }
  EXPECT_EQ(shown.size(), j.counters.size() - zeros) << o.output;
  EXPECT_GT(zeros, 0u) << "a shared-memory job should leave the TCP counters at zero";
  EXPECT_GT(j.total("tsm.read_misses"), 0u);
  EXPECT_NE(table.back().find("not shown: " + std::to_string(zeros) + " counters"), std::string::npos) << table.back();

  // Handlers: the program's, Squall's libraries' (libtsm's, named squall::...) and the
  // runtime's (flagged internal) each in their own section.
  enum section { program, library, runtime };
  std::map<std::string, section> listed;  // handler -> the section listing it
  std::map<section, std::uint64_t> more;  // the handlers a section's "N more" line stands for
  section current = program;
  for (; at + 1 < table.size(); ++at) {
    if (table[at].starts_with("program's handlers")) continue;
    if (table[at].starts_with("library handlers")) {
      current = library;
      continue;
    }
    if (table[at].starts_with("runtime handlers")) {
      current = runtime;
      continue;
    }
    const row r = parse_row(table[at]);
    if (const auto n = squall::test::match_whole(r.label, "([0-9]+) more")) {
      more[current] += std::stoull(n->groups[1]);
      continue;
    }
    // The table leaves out the "{anonymous}::" of a name; "…" starts a name cut short.
    const auto without_anonymous = [](std::string name) {
      for (std::size_t at_anon; (at_anon = name.find("{anonymous}::")) != std::string::npos;) name.erase(at_anon, 13);
      return name;
    };
    const std::string& label = r.label;
    const auto match = std::find_if(j.handlers.begin(), j.handlers.end(), [&](const auto& h) {
      return without_anonymous(h.first) == label ||
             (label.starts_with("…") && without_anonymous(h.first).ends_with(label.substr(3)));
    });
    ASSERT_NE(match, j.handlers.end()) << "no handler " << r.label << " in the JSON";
    listed[match->first] = current;
    EXPECT_EQ(match->second.internal, current == runtime) << match->first;
    if (current != runtime) {
      EXPECT_EQ(match->first.starts_with("squall::"), current == library) << match->first;
    }
    expect_row_matches(r, match->second.received, match->first);
  }
  const auto note = std::find_if(listed.begin(), listed.end(), [](const auto& h) { return h.first.ends_with("on_stats_note"); });
  ASSERT_NE(note, listed.end()) << o.output;
  EXPECT_EQ(note->second, program) << "the program's handler is listed with Squall's\n" << o.output;
  EXPECT_EQ(j.handlers.at(note->first).received, (std::vector<std::uint64_t>{40, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(std::any_of(listed.begin(), listed.end(), [](const auto& h) { return h.second == runtime; })) << o.output;
  EXPECT_TRUE(std::any_of(listed.begin(), listed.end(), [](const auto& h) { return h.second == library; })) << o.output;
  // Every handler that handled a message is listed or counted in its section's "N more".
  std::map<section, std::uint64_t> busy;
  for (const auto& [name, h] : j.handlers) {
    std::uint64_t received = 0;
    for (auto v : h.received) received += v;
    if (received == 0) {
      EXPECT_EQ(listed.count(name), 0u) << name;
    } else {
      ++busy[h.internal ? runtime : name.starts_with("squall::") ? library : program];
    }
  }
  for (const section s : {program, library, runtime}) {
    std::uint64_t shown_here = 0;
    for (const auto& [name, in] : listed) shown_here += in == s ? 1 : 0;
    EXPECT_EQ(shown_here + more[s], busy[s]) << "section " << s << "\n" << o.output;
  }

  // The per-node form: a column per node, within 100 columns, the same exact small values.
  const auto per_node = o.output.find("squall stats per node: 8 nodes on ");
  ASSERT_NE(per_node, std::string::npos) << o.output;
  std::istringstream in(o.output.substr(per_node));
  std::string line;
  std::getline(in, line);  // its title
  bool titled = false;
  while (std::getline(in, line) && !line.starts_with("squall")) {
    EXPECT_LE(columns(line), 100u) << line;
    if (line.starts_with("counter")) titled = line.ends_with("   node 7");
    if (line.find("on_stats_note") != std::string::npos) {
      EXPECT_TRUE(squall::test::search(line, " 40( +0){7}$")) << line;
    }
  }
  EXPECT_TRUE(titled) << o.output.substr(per_node);
}

}  // namespace
