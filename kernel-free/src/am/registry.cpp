// SPDX-License-Identifier: BSD-3-Clause
#include "am/registry.hpp"

#include <array>
#include <atomic>
#include <deque>
#include <cstdio>
#include <mutex>
#include <string>

#include "common/log.hpp"
#include "stats/counters.hpp"

namespace squall::am {
namespace {

constexpr std::size_t table_size = 2 * stats::max_handlers;  // power of two, load <= 1/2

struct registry {
  std::mutex mutex;  // serialises registration; lookups read `slots` without it
  std::array<std::atomic<const handler_entry*>, table_size> slots{};
  std::deque<handler_entry> entries;  // stable addresses
  std::deque<std::string> names;      // owned copies of names given at run time
};

// Never destroyed: a progress thread may still look handlers up while the process exits.
registry& reg() {
  static registry& r = *new registry;
  return r;
}

// FNV-1a: stable across builds and nodes; 0 is reserved for "no handler".
handler_id hash_name(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;
}

}  // namespace

std::string one_spelling(std::string_view name) {
  constexpr std::string_view clang_form = "(anonymous namespace)", gcc_form = "{anonymous}";
  std::string out(name);
  for (std::size_t at = out.find(clang_form); at != std::string::npos; at = out.find(clang_form, at)) {
    out.replace(at, clang_form.size(), gcc_form);
  }
  return out;
}

const handler_entry* try_register_handler(std::string_view given, detail::dispatch_fn fn, const void* ctx,
                                          detail::handler_role role, std::string& why) {
  const std::string name = one_spelling(given);
  const bool runtime = role == detail::handler_role::runtime;
  const std::string quoted = "'" + name + "'";
  if (runtime && !name.starts_with(runtime_prefix)) {
    why = "internal error: the runtime's handler " + quoted + " is not named \"squall.<what>\"";
    return nullptr;
  }
  if (!runtime && name.starts_with(runtime_prefix)) {
    why = "active-message handler name " + quoted +
          " is reserved for Squall's runtime (names starting with \"squall.\"); choose another";
    return nullptr;
  }
  auto& r = reg();
  std::lock_guard g(r.mutex);
  const handler_id id = hash_name(name);
  std::size_t i = id & (table_size - 1);
  for (; const handler_entry* e = r.slots[i].load(std::memory_order_acquire);
       i = (i + 1) & (table_size - 1)) {
    if (e->id != id) continue;
    if (e->name == name && e->fn == fn && e->ctx == ctx) return e;  // registered twice: fine
    char hex[16];
    std::snprintf(hex, sizeof hex, "%#x", id);
    why = e->name == name ? "active-message handler " + quoted + " is registered already, with another function"
                          : "active-message handlers '" + std::string(e->name) + "' and " + quoted +
                                " have the same id " + hex + "; rename one";
    return nullptr;
  }
  if (r.entries.size() == stats::max_handlers) {
    why = "more than " + std::to_string(stats::max_handlers) + " active-message handlers";
    return nullptr;
  }
  const std::string& owned = r.names.emplace_back(name);
  handler_entry& e = r.entries.emplace_back();
  e.id = id;
  e.name = owned;
  e.fn = fn;
  e.ctx = ctx;
  e.index = static_cast<int>(r.entries.size()) - 1;
  e.internal = runtime;
  r.slots[i].store(&e, std::memory_order_release);
  return &e;
}

namespace detail {

handler_id id_of(const handler_entry* h) { return h->id; }

const handler_entry* register_handler(std::string_view name, dispatch_fn fn, const void* ctx, handler_role role) {
  std::string why;
  const handler_entry* e = try_register_handler(name, fn, ctx, role, why);
  if (e == nullptr) fatal("%s", why.c_str());
  return e;
}

}  // namespace detail

const handler_entry* find_handler(handler_id id) {
  auto& r = reg();
  for (std::size_t i = id & (table_size - 1);; i = (i + 1) & (table_size - 1)) {
    const handler_entry* e = r.slots[i].load(std::memory_order_acquire);
    if (e == nullptr || e->id == id) return e;
  }
}

void for_each_handler(const std::function<void(int, std::string_view, bool)>& f) {
  auto& r = reg();
  std::lock_guard g(r.mutex);
  for (const auto& e : r.entries) f(e.index, e.name, e.internal);
}

}  // namespace squall::am
