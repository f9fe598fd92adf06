// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Command-line options of the form `--name value...` and `--flag`.
//
// A program reads each option it knows with a default, then calls finish(), which rejects
// anything it did not read; every error is an OptionError naming the option.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace squall::apps {

class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Options {
 public:
  Options(int argc, const char* const* argv);

  bool flag(const std::string& name);  // present without values
  std::uint64_t count(const std::string& name, std::uint64_t fallback);  // non-negative integer
  // Exactly `fallback.size()` non-negative integers.
  std::vector<std::uint64_t> counts(const std::string& name, std::vector<std::uint64_t> fallback);
  void finish() const;  // throws on an option no getter asked for

 private:
  const std::vector<std::string>* take(const std::string& name, std::size_t arity);

  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, bool> read_;
};

// The main() of every program: parses the options, answers --help with `usage`, runs
// `run`, and turns errors into a message naming the program (exit 2 for bad options,
// 1 for any other failure).
int run_program(int argc, const char* const* argv, const char* program, const char* usage,
                int (*run)(Options& options));

}  // namespace squall::apps
