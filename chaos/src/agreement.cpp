// SPDX-License-Identifier: BSD-3-Clause
#include "agreement.hpp"

#include <squall/collectives.hpp>
#include <squall/error.hpp>

#include <cstdint>
#include <span>

namespace squall::chaos::detail {

void agree_or_throw(const std::string& problem, const char* api) {
  std::int64_t flag = problem.empty() ? 0 : 1;
  allreduce(std::span<const std::int64_t>(&flag, 1), std::span<std::int64_t>(&flag, 1), op::max{});
  if (flag == 0) return;
  throw usage_error(std::string(api) + ": " + (problem.empty() ? "another node found its input invalid" : problem));
}

}  // namespace squall::chaos::detail
