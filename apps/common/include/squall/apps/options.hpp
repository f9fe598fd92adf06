// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Command-line options of the form `--name value...` and `--flag`.
//
// A program reads each option it knows with a default, then calls finish(), which rejects
// anything it did not read; every error is an OptionError naming the option.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace squall::apps {

class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The coherence blocks tsm::alloc takes (libtsm's tsm::max_block_size; apps/common does not
// link libtsm: the TSM versions check that the two agree).
inline constexpr std::size_t kMinBlockSize = 4096;
inline constexpr std::size_t kMaxBlockSize = std::size_t{64} << 20;

class Options {
 public:
  Options(int argc, const char* const* argv);

  bool flag(const std::string& name);  // present without values
  // A non-negative integer of the digits 0-9 alone (no sign or space), at most `max`.
  std::uint64_t count(const std::string& name, std::uint64_t fallback,
                      std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
  // The same, at most what the caller's type T holds: a larger value is refused, not wrapped.
  template <class T>
  T count_as(const std::string& name, T fallback) {
    static_assert(std::is_integral_v<T>);
    return static_cast<T>(count(name, static_cast<std::uint64_t>(fallback),
                                static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
  }
  // Exactly `fallback.size()` non-negative integers, each at most `max`.
  std::vector<std::uint64_t> counts(const std::string& name, std::vector<std::uint64_t> fallback,
                                    std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
  // --block-size of the TSM and XSM versions: a power of two from kMinBlockSize to kMaxBlockSize
  // bytes, what tsm::alloc takes. Checked here, with the option's name, for every version alike:
  // each checked its own (or not at all), and tsm::alloc's refusal came from every node, with
  // status 1.
  std::size_t block_size(std::size_t fallback = 4096);
  void finish() const;  // throws on an option no getter asked for

 private:
  const std::vector<std::string>* take(const std::string& name, std::size_t arity);

  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, bool> read_;
};

// The main() of every program: parses the options, answers --help with `usage`, runs
// `run`, and turns errors into a message naming the program (exit 2 for bad options,
// 1 for any other failure). In a job of several processes (squallrun, mpirun) the first alone
// prints the usage and a bad option's message; every process returns the status.
int run_program(int argc, const char* const* argv, const char* program, const char* usage,
                int (*run)(Options& options));

}  // namespace squall::apps
