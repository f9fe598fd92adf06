// SPDX-License-Identifier: BSD-3-Clause
// A failed link's verdict held for a better one only while a node of the lost node's host
// may still give it (transport/held_verdict.hpp). The holds here are an hour long where a
// verdict must still be held, so that nothing depends on how fast the test runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transport/held_verdict.hpp"

namespace {

using squall::held_verdict;
constexpr std::int64_t hour_ns = 3'600'000'000'000;

struct reports {
  std::vector<int> nodes;
  std::vector<std::string> whys;
  squall::lost_fn fn() {
    return [this](int node, const std::string& why, std::uint32_t silent_ms) {
      EXPECT_EQ(silent_ms, 0u);
      nodes.push_back(node);
      whys.push_back(why);
    };
  }
};

// Four nodes: node 0 (this one) alone on host 0; nodes 1 and 2 on host 1; node 3
// alone on host 3.
const std::vector<int> hosts{0, 1, 1, 3};

TEST(HeldVerdict, NodeAloneOnItsHostIsReportedAtOnce) {
  held_verdict v(hosts, hour_ns);
  reports r;
  v.failed(3, "its TCP connection failed");
  v.report_if_due(r.fn());
  EXPECT_EQ(r.nodes, std::vector<int>{3});
  EXPECT_EQ(r.whys, std::vector<std::string>{"its TCP connection failed"});
  EXPECT_FALSE(v.holding());
}

TEST(HeldVerdict, HeldWhileAHostMateMaySpeak) {
  held_verdict v(hosts, hour_ns);
  reports r;
  v.failed(1, "reset");
  v.report_if_due(r.fn());
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_TRUE(v.holding());
}

// A whole host lost: the verdict on its first node is reported once its last node's link
// has failed too, and it is the first verdict that counts.
TEST(HeldVerdict, ReportedOnceTheWholeHostIsGone) {
  held_verdict v(hosts, hour_ns);
  reports r;
  v.failed(2, "first");
  v.report_if_due(r.fn());
  EXPECT_TRUE(r.nodes.empty());
  v.failed(1, "second");
  v.report_if_due(r.fn());
  EXPECT_EQ(r.nodes, std::vector<int>{2});
  EXPECT_EQ(r.whys, std::vector<std::string>{"first"});
  v.report_if_due(r.fn());
  EXPECT_EQ(r.nodes.size(), 1u);
}

// A host-mate that said goodbye (or whose link closed as this node left) cannot speak.
TEST(HeldVerdict, AHostMateWhoseLinkEndedCannotSpeak) {
  {
    held_verdict v(hosts, hour_ns);
    reports r;
    v.ended(1);
    v.failed(2, "reset");
    v.report_if_due(r.fn());
    EXPECT_EQ(r.nodes, std::vector<int>{2});
  }
  {
    held_verdict v(hosts, hour_ns);
    reports r;
    v.failed(2, "reset");
    v.ended(1);
    v.report_if_due(r.fn());
    EXPECT_EQ(r.nodes, std::vector<int>{2});
  }
}

// A failure elsewhere does not shorten the hold: node 1 may still say how node 2 ended.
TEST(HeldVerdict, AFailureOnAnotherHostLeavesTheHold) {
  held_verdict v(hosts, hour_ns);
  reports r;
  v.failed(2, "first");
  v.failed(3, "other host");
  v.report_if_due(r.fn());
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_TRUE(v.holding());
}

// Nodes without a link to this one (here node 1, on this node's host, reached through shared
// memory, which never ends its link) count as able to speak: their launcher sees the node end.
TEST(HeldVerdict, HostMatesReachedOtherwiseMaySpeak) {
  held_verdict v(std::vector<int>{0, 0, 0}, hour_ns);
  reports r;
  v.failed(2, "reset");
  v.report_if_due(r.fn());
  EXPECT_TRUE(r.nodes.empty());
}

TEST(HeldVerdict, ReportedWhenTheHoldRunsOut) {
  held_verdict v(hosts, 1'000'000);  // 1 ms
  reports r;
  v.failed(1, "reset");
  while (r.nodes.empty()) v.report_if_due(r.fn());
  EXPECT_EQ(r.nodes, std::vector<int>{1});
  EXPECT_FALSE(v.holding());
}

// Without hosts (unknown), every verdict is held.
TEST(HeldVerdict, UnknownHostsHold) {
  held_verdict v({}, hour_ns);
  reports r;
  v.failed(0, "reset");
  v.report_if_due(r.fn());
  EXPECT_TRUE(r.nodes.empty());
}

}  // namespace
