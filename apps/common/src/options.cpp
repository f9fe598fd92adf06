// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/options.hpp"

#include <iostream>
#include <string>

#include <cerrno>
#include <cstdlib>

namespace squall::apps {
namespace {

// strtoull alone would take a leading space or sign (" -1" as 2^64-1) and saturate a value
// beyond 2^64-1: only digits are taken, and a value above `max` is refused.
std::uint64_t parse_count(const std::string& name, const std::string& text, std::uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw OptionError("--" + name + ": expected a non-negative integer, got '" + text + "'");
  }
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value > max) {
    throw OptionError("--" + name + ": " + text + " is too large (at most " + std::to_string(max) + ")");
  }
  return value;
}

// Whether this process is the first of its job as its launcher numbers it: squallrun's
// SQUALL_NODE, or a PMIx launcher's PMIX_RANK (mpirun, for the MPI versions), the two that
// Squall's runtime reads, then the ranks of launchers without PMIx (MPICH's Hydra PMI_RANK,
// Slurm's SLURM_PROCID), for the MPI versions. Read from the environment, since some
// programs read their options before they start a runtime; a process started alone is the
// first of a job of one.
bool first_of_job() {
  for (const char* name : {"SQUALL_NODE", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::strtol(value, nullptr, 10) == 0;
  }
  return true;
}

}  // namespace

Options::Options(int argc, const char* const* argv) {
  std::string current;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.size() > 2 && word.compare(0, 2, "--") == 0) {
      current = word.substr(2);
      if (values_.count(current)) throw OptionError("--" + current + " given twice");
      values_[current];
    } else if (current.empty()) {
      throw OptionError("unexpected argument '" + word + "' (options are --name value)");
    } else {
      values_[current].push_back(word);
    }
  }
}

const std::vector<std::string>* Options::take(const std::string& name, std::size_t arity) {
  auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  read_[name] = true;
  if (it->second.size() != arity) {
    throw OptionError("--" + name + " takes " + std::to_string(arity) + " value(s), got " +
                      std::to_string(it->second.size()));
  }
  return &it->second;
}

bool Options::flag(const std::string& name) { return take(name, 0) != nullptr; }

std::uint64_t Options::count(const std::string& name, std::uint64_t fallback, std::uint64_t max) {
  const auto* values = take(name, 1);
  return values ? parse_count(name, values->front(), max) : fallback;
}

std::vector<std::uint64_t> Options::counts(const std::string& name, std::vector<std::uint64_t> fallback,
                                           std::uint64_t max) {
  const auto* values = take(name, fallback.size());
  if (!values) return fallback;
  std::vector<std::uint64_t> result;
  for (const auto& text : *values) result.push_back(parse_count(name, text, max));
  return result;
}

std::size_t Options::block_size(std::size_t fallback) {
  const std::uint64_t bytes = count("block-size", fallback);
  if (bytes < kMinBlockSize || bytes > kMaxBlockSize || (bytes & (bytes - 1)) != 0) {
    throw OptionError("--block-size: expected a power of two from " + std::to_string(kMinBlockSize) + " to " +
                      std::to_string(kMaxBlockSize) + " (bytes), got " + std::to_string(bytes));
  }
  return bytes;
}

void Options::finish() const {
  for (const auto& [name, values] : values_) {
    if (!read_.count(name)) throw OptionError("unknown option --" + name);
  }
}

int run_program(int argc, const char* const* argv, const char* program, const char* usage,
                int (*run)(Options& options)) {
  // Every process of a job reads the same command line and so answers it alike (an OptionError
  // must not depend on the node): the first alone prints the answer, once for the job rather
  // than once a node, and every process returns the status. The others do not end the job
  // before it has printed: squall::finalize and MPI_Finalize wait for every process, and
  // squallrun gives a node that never started the runtime its grace before killing it.
  const bool answers = first_of_job();
  try {
    Options options(argc, argv);
    if (options.flag("help")) {
      if (answers) std::cout << usage;
      return 0;
    }
    return run(options);
  } catch (const OptionError& error) {
    if (answers) std::cerr << std::string(program) + ": " + error.what() + "\n" + usage;
    return 2;
  } catch (const std::exception& error) {
    // Each message in one write: the nodes of a job print theirs at the same moment.
    std::cerr << std::string(program) + ": " + error.what() + "\n";
    return 1;
  }
}

}  // namespace squall::apps
