// SPDX-License-Identifier: BSD-3-Clause
// Balance figures of a partition, computed from every element's part (the same list, hence the
// same figures, on every node).
#include <algorithm>

#include "partition_support.hpp"

namespace squall::chaos::detail {

partition_quality quality_of(std::span<const int> owner, std::span<const double> weights, int parts) {
  std::vector<index> elements(static_cast<std::size_t>(parts), 0);
  std::vector<double> weight(static_cast<std::size_t>(parts), 0.0);
  for (std::size_t e = 0; e < owner.size(); ++e) {
    const auto p = static_cast<std::size_t>(owner[e]);
    ++elements[p];
    weight[p] += weights.empty() ? 1.0 : weights[e];
  }
  partition_quality q;
  q.parts = parts;
  if (parts == 0) return q;
  const auto [min_e, max_e] = std::minmax_element(elements.begin(), elements.end());
  const auto [min_w, max_w] = std::minmax_element(weight.begin(), weight.end());
  q.min_elements = *min_e;
  q.max_elements = *max_e;
  q.min_weight = *min_w;
  q.max_weight = *max_w;
  double total = 0;
  for (double w : weight) total += w;
  // Nothing to balance when everything weighs nothing: call it perfect.
  q.imbalance = total > 0 ? q.max_weight / (total / parts) : 1.0;
  return q;
}

}  // namespace squall::chaos::detail
