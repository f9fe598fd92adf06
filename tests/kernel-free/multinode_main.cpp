// SPDX-License-Identifier: BSD-3-Clause
// main() of the multi-node GoogleTest programs: every node runs every test (SPMD), node 0
// prints the usual report and the other nodes print only their failures.
#include <gtest/gtest.h>

#include <squall/squall.hpp>

#include <cstdio>
#include <cstdlib>

namespace {

class failures_only : public testing::EmptyTestEventListener {
 public:
  explicit failures_only(int node) : node_(node) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[node %d] %s:%d: failure\n%s\n", node_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
    }
  }

 private:
  int node_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  squall::init(&argc, &argv);
  // A test under another launcher names the job's size: a bootstrap that fell back to
  // one-node jobs would otherwise pass every test.
  if (const char* want = std::getenv("SQUALL_TEST_NODES"); want != nullptr && std::atoi(want) != squall::nodes()) {
    std::fprintf(stderr, "node %d: the job has %d nodes, expected %s\n", squall::node(), squall::nodes(), want);
    return 1;
  }
  if (squall::node() != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new failures_only(squall::node()));
  }
  const int result = RUN_ALL_TESTS();
  squall::finalize();
  return result;
}
