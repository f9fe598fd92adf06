// SPDX-License-Identifier: BSD-3-Clause
// The protocol registry's entry for libtsm's own callers: make_protocol with the API named.
#pragma once
#include <memory>
#include <string_view>

#include <squall/tsm/protocol.hpp>

namespace squall::tsm::detail {

// tsm::make_protocol, its usage_error starting with `api`.
std::unique_ptr<protocol> make_named(std::string_view name, const char* api);

}  // namespace squall::tsm::detail
