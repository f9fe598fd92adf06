// SPDX-License-Identifier: BSD-3-Clause
// How entry-method arguments, return values and reduction values travel: one byte string per
// message. Arguments that are all trivially copyable are their bytes, one after another (the
// common case: a short message costs a memcpy); any other argument list is one cereal binary
// archive of the whole list, so a user type only needs its `serialize(Archive&)` member.
// Both sides derive the layout from the entry method's parameter types, so nothing about the
// form travels with the bytes.
#pragma once
#include <cstring>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>
#include <squall/arrays/bounded_archive.hpp>
#include <squall/error.hpp>

namespace squall::arrays::detail {

template <class... A>
inline constexpr bool all_raw = (std::is_trivially_copyable_v<std::decay_t<A>> && ...);

// Appends to a std::string (cereal writes to an ostream).
struct string_sink : std::streambuf {
  std::streamsize xsputn(const char* p, std::streamsize n) override {
    out->append(p, static_cast<std::size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) out->push_back(static_cast<char>(c));
    return c;
  }
  std::string* out = nullptr;
};

// One stream per thread, pointed at each message in turn: building a std::ostream (its
// ios_base and locale) per message cost more than the message's encoding. An archive is made
// per message; it holds no state between them. (Reading needs no stream:
// bounded_input_archive reads the bytes in place.)
struct output_stream {
  string_sink sink;
  std::ostream os{&sink};
};
inline std::ostream& output_to(std::string& out) {
  thread_local output_stream s;
  s.sink.out = &out;
  s.os.clear();
  return s.os;
}

// `size` bytes are not `what`; `why` (when known) says where reading them went wrong.
[[noreturn]] void throw_bad_bytes(const char* what, std::size_t size, const char* why = nullptr);

// Appends the values to `out`.
template <class... A>
void encode_into(std::string& out, const A&... a) {
  if constexpr (sizeof...(A) == 0) {
    return;
  } else if constexpr (all_raw<A...>) {
    const std::size_t at = out.size();
    out.resize(at + (sizeof(A) + ...));
    char* p = out.data() + at;
    ((std::memcpy(p, &a, sizeof(A)), p += sizeof(A)), ...);
  } else {
    cereal::BinaryOutputArchive ar(output_to(out));
    ar(a...);
  }
}

template <class... A>
std::string encode(const A&... a) {
  std::string out;
  encode_into(out, a...);
  return out;
}

// Decodes the whole of `in` as the values A...; a size that does not match is an error (a
// message for another method or array type), reported with `what`.
template <class... A>
std::tuple<std::decay_t<A>...> decode(std::string_view in, const char* what) {
  std::tuple<std::decay_t<A>...> values;
  if constexpr (sizeof...(A) == 0) {
    if (!in.empty()) throw_bad_bytes(what, in.size());
  } else if constexpr (all_raw<A...>) {
    if (in.size() != (sizeof(std::decay_t<A>) + ...)) throw_bad_bytes(what, in.size());
    const char* p = in.data();
    std::apply([&](auto&... v) { ((std::memcpy(&v, p, sizeof v), p += sizeof v), ...); }, values);
  } else {
    bounded_input_archive ar(in);
    try {
      std::apply(ar, values);
    } catch (const cereal::Exception& e) {
      throw_bad_bytes(what, in.size(), e.what());
    }
    if (ar.left() != 0) throw_bad_bytes(what, in.size(), "bytes are left over");
  }
  return values;
}

}  // namespace squall::arrays::detail
