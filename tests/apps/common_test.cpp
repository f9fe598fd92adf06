// SPDX-License-Identifier: BSD-3-Clause
// The shared pieces: keyed random numbers, checksums, options and figures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "squall/apps/checksum.hpp"
#include "squall/apps/counter_rng.hpp"
#include "squall/apps/figures.hpp"
#include "squall/apps/options.hpp"
#include "squall/apps/phase_timer.hpp"

namespace squall::apps {
namespace {

// Known-answer vectors published with Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox, MatchesPublishedKnownAnswers) {
  using Words = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(KeyedRandom, SameKeyGivesSameDrawsWhateverTheOrder) {
  KeyedRandom first(7, Stream::kTest, 12345, 3);
  std::vector<std::uint64_t> expected;
  for (int i = 0; i < 10; ++i) expected.push_back(first.next_u64());
  // Interleave with other entities: their draws must not disturb this entity's stream.
  KeyedRandom other(7, Stream::kTest, 12346, 3);
  KeyedRandom again(7, Stream::kTest, 12345, 3);
  for (int i = 0; i < 10; ++i) {
    other.next_u64();
    EXPECT_EQ(again.next_u64(), expected[i]);
  }
}

TEST(KeyedRandom, SeedStreamEntityAndStepEachChangeTheDraws) {
  const std::uint64_t base = KeyedRandom(1, Stream::kTest, 5, 2).next_u64();
  EXPECT_NE(KeyedRandom(2, Stream::kTest, 5, 2).next_u64(), base);
  EXPECT_NE(KeyedRandom(1, Stream::kCollision, 5, 2).next_u64(), base);
  EXPECT_NE(KeyedRandom(1, Stream::kTest, 6, 2).next_u64(), base);
  EXPECT_NE(KeyedRandom(1, Stream::kTest, 5, 3).next_u64(), base);
  EXPECT_NE(KeyedRandom(1, Stream::kTest, 5ull << 32, 2).next_u64(), base);
}

TEST(KeyedRandom, UniformAndNormalHaveTheRightMoments) {
  constexpr int kDraws = 200000;
  double uniform_sum = 0, normal_sum = 0, normal_square = 0;
  KeyedRandom random(3, Stream::kTest, 0);
  for (int i = 0; i < kDraws; ++i) {
    const double u = random.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    uniform_sum += u;
    const double z = random.normal();
    normal_sum += z;
    normal_square += z * z;
  }
  EXPECT_NEAR(uniform_sum / kDraws, 0.5, 0.003);
  EXPECT_NEAR(normal_sum / kDraws, 0.0, 0.01);
  EXPECT_NEAR(normal_square / kDraws, 1.0, 0.01);
}

TEST(KeyedRandom, BelowCoversItsRangeEvenly) {
  KeyedRandom random(4, Stream::kTest, 0);
  std::array<int, 7> histogram{};
  for (int i = 0; i < 70000; ++i) {
    const std::uint32_t value = random.below(7);
    ASSERT_LT(value, 7u);
    ++histogram[value];
  }
  for (int count : histogram) EXPECT_NEAR(count, 10000, 400);
  EXPECT_EQ(random.below(1), 0u);
}

TEST(KeyedRandom, PoissonHasItsMeanAndRespectsTheCap) {
  KeyedRandom random(5, Stream::kTest, 0);
  double sum = 0, square = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double k = random.poisson(6.5, 255);
    sum += k;
    square += k * k;
  }
  const double mean = sum / kDraws;
  EXPECT_NEAR(mean, 6.5, 0.05);
  EXPECT_NEAR(square / kDraws - mean * mean, 6.5, 0.15);  // variance = mean
  EXPECT_LE(random.poisson(100.0, 3), 3u);
}

TEST(Checksum, DependsOnValuesAndOrderButNotOnSubQuantumNoise) {
  Checksum a, b, c, d;
  a.add_quantised(1.0, 1e-9);
  a.add_quantised(2.0, 1e-9);
  b.add_quantised(1.0 + 1e-13, 1e-9);
  b.add_quantised(2.0, 1e-9);
  c.add_quantised(2.0, 1e-9);
  c.add_quantised(1.0, 1e-9);
  d.add_quantised(1.0, 1e-9);
  d.add_quantised(2.0 + 1e-8, 1e-9);
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value(), c.value());
  EXPECT_NE(a.value(), d.value());
  EXPECT_EQ(a.hex().size(), 16u);
  EXPECT_EQ(Checksum{}.hex(), "cbf29ce484222325");
}

TEST(Options, ReadsValuesFlagsAndDefaults) {
  const char* argv[] = {"prog", "--nodes", "100", "--cells", "3", "4", "5", "--json"};
  Options options(8, argv);
  EXPECT_EQ(options.count("nodes", 7), 100u);
  EXPECT_EQ(options.count("steps", 7), 7u);
  EXPECT_EQ(options.counts("cells", {1, 1, 1}), (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_TRUE(options.flag("json"));
  EXPECT_FALSE(options.flag("help"));
  EXPECT_NO_THROW(options.finish());
}

TEST(Options, RejectsMistakesWithTheOptionsName) {
  const char* unknown[] = {"prog", "--nodez", "5"};
  Options misspelt(3, unknown);
  misspelt.count("nodes", 1);
  EXPECT_THROW(misspelt.finish(), OptionError);

  const char* negative[] = {"prog", "--nodes", "-5"};
  Options with_negative(3, negative);
  EXPECT_THROW(with_negative.count("nodes", 1), OptionError);

  const char* missing[] = {"prog", "--nodes"};
  Options without_value(2, missing);
  EXPECT_THROW(without_value.count("nodes", 1), OptionError);

  const char* stray[] = {"prog", "5"};
  EXPECT_THROW(Options(2, stray), OptionError);
}

// The message that reading `text` as --name throws, or "" when it is taken.
template <class Read>
std::string refusal(const std::string& text, Read read) {
  const char* argv[] = {"prog", "--name", text.c_str()};
  Options options(3, argv);
  try {
    read(options);
  } catch (const OptionError& e) {
    return e.what();
  }
  return "";
}

// strtoull alone takes a leading space or sign (" -1" as 2^64-1) and saturates what is too
// large; a caller's narrower type would then wrap (2^32 steps as 0).
TEST(Options, RefusesSignsSpacesAndValuesOutOfRange) {
  const auto as_u64 = [](Options& o) { o.count("name", 1); };
  for (const std::string text : {" -1", "-1", "+5", " 5", "5 ", "0x10", ""}) {
    EXPECT_EQ(refusal(text, as_u64), "--name: expected a non-negative integer, got '" + text + "'") << text;
  }
  EXPECT_EQ(refusal("99999999999999999999", as_u64),
            "--name: 99999999999999999999 is too large (at most 18446744073709551615)");
  EXPECT_EQ(refusal("18446744073709551615", as_u64), "");

  const auto as_int = [](Options& o) { o.count_as<int>("name", 1); };
  EXPECT_EQ(refusal("4294967296", as_int), "--name: 4294967296 is too large (at most 2147483647)");
  EXPECT_EQ(refusal("2147483648", as_int), "--name: 2147483648 is too large (at most 2147483647)");
  EXPECT_EQ(refusal("2147483647", as_int), "");
  EXPECT_EQ(refusal("4294967296", [](Options& o) { o.count_as<std::uint32_t>("name", 1); }),
            "--name: 4294967296 is too large (at most 4294967295)");
  EXPECT_EQ(refusal("70000", [](Options& o) { o.counts("name", {1}, 65535); }),
            "--name: 70000 is too large (at most 65535)");

  const char* argv[] = {"prog", "--steps", "2147483647"};
  Options options(3, argv);
  EXPECT_EQ(options.count_as<int>("steps", 30), 2147483647);
  EXPECT_EQ(options.count_as<int>("cells", 13), 13);
}

// A program of one option, --cells C, that ends with status C.
int cells_as_status(Options& options) {
  const auto cells = options.count("cells", 1);
  options.finish();
  return static_cast<int>(cells);
}

// What one process of a job answers to a command line: run_program's status and what it
// printed, with `variable` (SQUALL_NODE, PMIX_RANK, or "" for neither) set to `value`.
struct Answer {
  int status;
  std::string out, err;
};
Answer answer_as(const char* variable, const char* value, std::vector<const char*> argv) {
  for (const char* name : {"SQUALL_NODE", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(name);
  if (*variable != '\0') setenv(variable, value, 1);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int status =
      run_program(static_cast<int>(argv.size()), argv.data(), "prog", "usage: prog [--cells C]\n", cells_as_status);
  Answer a{status, testing::internal::GetCapturedStdout(), testing::internal::GetCapturedStderr()};
  if (*variable != '\0') unsetenv(variable);
  return a;
}

// Every process of a job refuses a bad command line with status 2, but only the first, as
// squallrun (SQUALL_NODE, zero-padded) or a PMIx launcher such as mpirun (PMIX_RANK) numbers
// it, says why: a job of N nodes said it N times. --help alike.
TEST(RunProgram, OnlyTheFirstProcessOfAJobAnswersTheCommandLine) {
  const struct {
    const char* variable;
    const char* value;
    bool first;
  } cases[] = {{"", "", true},
               {"SQUALL_NODE", "0", true},
               {"SQUALL_NODE", "00", true},
               {"SQUALL_NODE", "1", false},
               {"SQUALL_NODE", "03", false},
               {"PMIX_RANK", "0", true},
               {"PMIX_RANK", "2", false},
               {"PMI_RANK", "0", true},  // MPICH's Hydra
               {"PMI_RANK", "1", false},
               {"SLURM_PROCID", "0", true},  // srun without PMIx
               {"SLURM_PROCID", "5", false}};
  for (const auto& c : cases) {
    const std::string as = std::string(c.variable) + "=" + c.value;
    const Answer bad = answer_as(c.variable, c.value, {"prog", "--bogus", "1"});
    EXPECT_EQ(bad.status, 2) << as;
    EXPECT_EQ(bad.err, c.first ? "prog: unknown option --bogus\nusage: prog [--cells C]\n" : "") << as;
    const Answer help = answer_as(c.variable, c.value, {"prog", "--help"});
    EXPECT_EQ(help.status, 0) << as;
    EXPECT_EQ(help.out, c.first ? "usage: prog [--cells C]\n" : "") << as;
    EXPECT_EQ(answer_as(c.variable, c.value, {"prog", "--cells", "3"}).status, 3) << as;  // a run's, everywhere
  }
}

TEST(Figures, PrintsOneJsonObjectOnOneLine) {
  Figures figures;
  figures.add("app", std::string("x\"y"));
  figures.add("count", std::int64_t{42});
  figures.add("ratio", 0.25);
  std::ostringstream out;
  figures.print_json(out);
  EXPECT_EQ(out.str(), "{\"app\":\"x\\\"y\",\"count\":42,\"ratio\":0.25}\n");
}

// What a speedup divides: every phase but input generation, however often each was timed.
TEST(PhaseTimer, ComputeSecondsLeavesOutGenerationOnly) {
  PhaseTimer timer;
  timer.add("generate", 5.0);
  timer.add("move", 0.25);
  timer.add("collide", 0.5);
  timer.add("move", 0.125);
  EXPECT_DOUBLE_EQ(timer.seconds("move"), 0.375);
  EXPECT_DOUBLE_EQ(timer.compute_seconds(), 0.875);
  EXPECT_DOUBLE_EQ(PhaseTimer().compute_seconds(), 0.0);
}

// --block-size, read alike by every TSM and XSM version: what tsm::alloc takes, refused by name
// before the runtime (each version checked its own, or left it to tsm::alloc on every node).
TEST(Options, BlockSizeIsAPowerOfTwoFromAPageTo64MiB) {
  const auto block = [](const std::string& text) {
    const char* argv[] = {"prog", "--block-size", text.c_str()};
    Options options(3, argv);
    try {
      return std::to_string(options.block_size());
    } catch (const OptionError& e) {
      return std::string(e.what());
    }
  };
  for (const std::string ok : {"4096", "8192", "65536", "67108864"}) EXPECT_EQ(block(ok), ok);
  for (const std::string bad : {"0", "1", "2048", "4097", "6000", "134217728", "1099511627776"}) {
    EXPECT_EQ(block(bad), "--block-size: expected a power of two from 4096 to 67108864 (bytes), got " + bad) << bad;
  }
  const char* none[] = {"prog"};
  Options without(1, none);
  EXPECT_EQ(without.block_size(), 4096u);
}

}  // namespace
}  // namespace squall::apps
