// SPDX-License-Identifier: BSD-3-Clause
// The table of active-message handlers: id (hash of the name) -> dispatch function.
// Lock-free to read, so receivers look ids up without taking a lock.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include <squall/am.hpp>

namespace squall::am {

struct handler_entry {
  handler_id id = 0;
  std::string_view name;
  detail::dispatch_fn fn = nullptr;
  const void* ctx = nullptr;
  int index = -1;         // slot of its counters
  bool internal = false;  // the runtime's own plumbing (handler_role::runtime): not counted by fence
};

// The names of the runtime's own handlers start with this; no other handler's may.
inline constexpr std::string_view runtime_prefix = "squall.";

// Registers one of the runtime's own handlers under `name` ("squall.<what>"), before main
// runs on every node (call it to initialise a namespace-scope variable).
template <auto F>
const handler_entry* register_runtime_handler(std::string_view name) {
  return detail::register_handler(name, &detail::dispatch<F>, nullptr, detail::handler_role::runtime);
}

// A handler's name as the registry keeps it. The compiler names a handler (am.hpp's
// handler_name, from __PRETTY_FUNCTION__), and compilers spell an unnamed namespace
// differently: GCC "{anonymous}", clang "(anonymous namespace)". Kept in GCC's spelling, a
// handler's name and id (the name's hash) do not depend on the compiler that built it, the
// statistics tables leave the namespace out whichever built it, and stats::snapshot::handler
// finds it under either spelling.
std::string one_spelling(std::string_view name);

// As detail::register_handler, but a name it cannot take (reserved, registered already with
// another function, another name's id, a full table) gives nullptr and `why`, not fatal.
const handler_entry* try_register_handler(std::string_view name, detail::dispatch_fn fn, const void* ctx,
                                          detail::handler_role role, std::string& why);

// The entry for an id, or nullptr when no handler of that id is registered on this node.
const handler_entry* find_handler(handler_id id);
void for_each_handler(const std::function<void(int index, std::string_view name, bool internal)>& f);

}  // namespace squall::am
