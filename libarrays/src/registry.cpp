// SPDX-License-Identifier: BSD-3-Clause
// The tables of entry methods, reducers and callback functions (registry.hpp). Filled while
// static objects are constructed, before main; read afterwards only.
#include <squall/arrays/codec.hpp>
#include <squall/arrays/registry.hpp>

#include <squall/error.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace squall::arrays::detail {
namespace {

struct reducer_rec {
  std::string_view name;
  combine_fn f;
  std::uint64_t value_type;
};
struct function_rec {
  std::string_view name;
  function_fn f;
};

// Function-local: registration runs during other objects' static construction.
std::unordered_map<std::uint64_t, entry_info>& entries() {
  static std::unordered_map<std::uint64_t, entry_info> t;
  return t;
}
std::unordered_map<std::uint64_t, reducer_rec>& reducers() {
  static std::unordered_map<std::uint64_t, reducer_rec> t;
  return t;
}
std::unordered_map<std::uint64_t, function_rec>& functions() {
  static std::unordered_map<std::uint64_t, function_rec> t;
  return t;
}

std::string hex(std::uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace

std::uint64_t add_entry(const entry_info& e) {
  auto [it, added] = entries().emplace(e.id, e);
  if (!added && it->second.name != e.name) {
    std::fprintf(stderr, "squall: libarrays: entry methods %.*s and %.*s have the same number; rename one\n",
                 static_cast<int>(e.name.size()), e.name.data(), static_cast<int>(it->second.name.size()),
                 it->second.name.data());
  }
  return e.id;
}

const entry_info& entry(std::uint64_t id) {
  // Looked up for every message: a small direct-mapped cache before the table (whose entries
  // never move once made).
  static std::array<std::atomic<const entry_info*>, 64> recent{};
  std::atomic<const entry_info*>& slot = recent[id & 63];
  if (const entry_info* e = slot.load(std::memory_order_relaxed); e != nullptr && e->id == id) return *e;
  auto it = entries().find(id);
  if (it == entries().end()) {
    throw squall::usage_error("libarrays: a message names entry method " + hex(id) +
                              ", which this program does not have (all nodes must run one binary)");
  }
  slot.store(&it->second, std::memory_order_relaxed);
  return it->second;
}

std::uint64_t add_reducer(std::uint64_t id, std::string_view name, combine_fn f, std::uint64_t value_type) {
  reducers().emplace(id, reducer_rec{name, f, value_type});
  return id;
}

combine_fn reducer(std::uint64_t id, std::uint64_t value_type) {
  auto it = reducers().find(id);
  if (it == reducers().end()) throw squall::usage_error("libarrays: unknown reducer " + hex(id));
  if (it->second.value_type != value_type) {
    throw squall::usage_error("libarrays: a contribution's value type is not what reducer " +
                              std::string(it->second.name) + " combines");
  }
  return it->second.f;
}

std::string_view reducer_name(std::uint64_t id) {
  auto it = reducers().find(id);
  return it == reducers().end() ? std::string_view("(unknown)") : it->second.name;
}

std::uint64_t add_function(std::uint64_t id, std::string_view name, function_fn f) {
  functions().emplace(id, function_rec{name, f});
  return id;
}

function_fn function(std::uint64_t id) {
  auto it = functions().find(id);
  if (it == functions().end()) throw squall::usage_error("libarrays: unknown callback function " + hex(id));
  return it->second.f;
}

void throw_bad_bytes(const char* what, std::size_t size, const char* why) {
  throw squall::usage_error("libarrays: " + std::to_string(size) + " bytes are not " + what +
                            (why != nullptr ? std::string(": ") + why : std::string()) +
                            " (a type mismatch between sender and receiver?)");
}

}  // namespace squall::arrays::detail
