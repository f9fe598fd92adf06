// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Wall-clock time accumulated per named phase, kept in first-use order for printing.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace squall::apps {

// Seconds from t0 to now.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class PhaseTimer {
 public:
  // Times one interval of a phase from construction to destruction.
  class Scope {
   public:
    Scope(PhaseTimer& timer, std::string phase);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    PhaseTimer& timer_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
  };

  Scope time(std::string phase) { return Scope(*this, std::move(phase)); }
  void add(const std::string& phase, double seconds);
  double seconds(const std::string& phase) const;  // 0 for a phase never timed
  // Every phase's time but input generation's ("generate"): what the _seq programs report as
  // compute_s, and what a speedup divides.
  double compute_seconds() const;
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }

 private:
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace squall::apps
