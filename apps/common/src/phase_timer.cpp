// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/phase_timer.hpp"

#include <algorithm>

namespace squall::apps {

PhaseTimer::Scope::Scope(PhaseTimer& timer, std::string phase)
    : timer_(timer), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}

PhaseTimer::Scope::~Scope() {
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
  timer_.add(phase_, elapsed.count());
}

void PhaseTimer::add(const std::string& phase, double seconds) {
  auto it = std::find_if(phases_.begin(), phases_.end(),
                         [&](const auto& entry) { return entry.first == phase; });
  if (it == phases_.end()) {
    phases_.emplace_back(phase, seconds);
  } else {
    it->second += seconds;
  }
}

double PhaseTimer::seconds(const std::string& phase) const {
  auto it = std::find_if(phases_.begin(), phases_.end(),
                         [&](const auto& entry) { return entry.first == phase; });
  return it == phases_.end() ? 0.0 : it->second;
}

double PhaseTimer::compute_seconds() const {
  double total = 0;
  for (const auto& [phase, seconds] : phases_) {
    if (phase != "generate") total += seconds;
  }
  return total;
}

}  // namespace squall::apps
