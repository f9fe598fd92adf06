// SPDX-License-Identifier: BSD-3-Clause
// What messages name by number: entry methods, reducers and callback functions. A number is
// a hash of the C++ name of the member function or function (as active-message handlers are
// named in kernel-free), so it is the same on every node of one binary with no registration
// call; each one is entered in this node's table before main runs, the first time a template
// below is instantiated. A number that is not in the table (another binary, a corrupt
// message) is a clear error, not a jump into nothing.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace squall::arrays {

class element_base;

namespace detail {

// What follows `marker` in a compiler's signature string, up to the next ';' or ']'.
constexpr std::string_view signature_part(std::string_view signature, std::string_view marker) {
  const auto start = signature.find(marker) + marker.size();
  return signature.substr(start, signature.find_first_of(";]", start) - start);
}

// The qualified name of F (a member function or function pointer given as a template
// argument).
template <auto F>
constexpr std::string_view name_of() {
  return signature_part(__PRETTY_FUNCTION__, "F = ");
}

constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// Runs an entry method on `e`: decodes `args`, calls, and writes the encoded result (if the
// method returns one) to `*result` when `result` is not null.
using invoke_fn = void (*)(element_base& e, std::string_view args, std::string* result);
// Combines the encoded values `in` (one type, at least one) into one, encoded in `out`:
// each decoded once and the result encoded once, so a node combining n contributions (a
// concatenation's included) does work in proportion to their total size.
using combine_fn = void (*)(std::string& out, std::span<const std::string> in);
// Runs a callback function with an encoded value.
using function_fn = void (*)(std::string_view value);

struct entry_info {
  std::uint64_t id = 0;
  std::string_view name;
  invoke_fn invoke = nullptr;
  std::uint64_t element_type = 0;  // of the class the method belongs to (type_id below)
  bool creates = false;            // may create its element on demand (creates_on_demand)
  bool expedited = false;          // may run in the substrate's handler (expedited)
};

std::uint64_t add_entry(const entry_info& e);
const entry_info& entry(std::uint64_t id);  // throws usage_error when unknown

std::uint64_t add_reducer(std::uint64_t id, std::string_view name, combine_fn f, std::uint64_t value_type);
combine_fn reducer(std::uint64_t id, std::uint64_t value_type);  // throws on unknown or mismatch
std::string_view reducer_name(std::uint64_t id);

std::uint64_t add_function(std::uint64_t id, std::string_view name, function_fn f);
function_fn function(std::uint64_t id);

// A number per type, the same on every node: the hash of its name in a signature string.
template <class T>
constexpr std::string_view type_name() {
  return signature_part(__PRETTY_FUNCTION__, "T = ");
}
template <class T>
constexpr std::uint64_t type_id() {
  return fnv1a(type_name<T>());
}

}  // namespace detail
}  // namespace squall::arrays
