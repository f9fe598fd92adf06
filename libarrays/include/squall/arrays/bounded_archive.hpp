// SPDX-License-Identifier: BSD-3-Clause
// The archive every message body, index and packed element is read with: cereal's binary
// format, read from a byte range that it never goes past. A length read from the bytes (a
// vector's, a string's, a map's) larger than the bytes left is an error before anything is
// allocated for it, so damaged bytes (a corrupt checkpoint, or a serialize() that differs
// between writer and reader) cannot make a node allocate more than they hold: a container
// of n items asks for at most n * sizeof(item) bytes, n at most the bytes left (exactly the
// bytes left for vectors of numbers and strings). Each read and each length costs one
// comparison.
//
// A container whose items pack no bytes at all (a vector of empty structs) cannot be read
// with more items than there are bytes after its length.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>

namespace squall::arrays::detail {

class bounded_input_archive : public cereal::InputArchive<bounded_input_archive, cereal::AllowEmptyClassElision> {
 public:
  explicit bounded_input_archive(std::string_view in)
      : InputArchive(this), begin_(in.data()), at_(in.data()), end_(in.data() + in.size()) {}

  void loadBinary(void* data, std::size_t size) {
    if (size > left()) short_of(size);
    if (size == 0) return;  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(data, at_, size);
    at_ += size;
  }
  // A length just read: `count` items of at least `item_bytes` each must fit in what is left.
  void check_length(std::uint64_t count, std::size_t item_bytes) const {
    if (count > left() / item_bytes) too_long(count, item_bytes);
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - at_); }
  std::size_t offset() const { return static_cast<std::size_t>(at_ - begin_); }

 private:
  // cereal::Exception, as cereal's own archives throw, with what went wrong and where.
  [[noreturn]] void short_of(std::size_t size) const {
    throw cereal::Exception(std::to_string(size) + " bytes were to be read from byte " + std::to_string(offset()) +
                            ", but the bytes end at byte " + std::to_string(offset() + left()));
  }
  [[noreturn]] void too_long(std::uint64_t count, std::size_t item_bytes) const {
    const std::size_t at = offset() - sizeof(cereal::size_type);
    throw cereal::Exception("the length at byte " + std::to_string(at) + " says " + std::to_string(count) +
                            (item_bytes == 1 ? "" : " items of " + std::to_string(item_bytes) + " bytes") +
                            ", more than the " + std::to_string(left()) + " bytes after it");
  }

  const char* begin_;
  const char* at_;
  const char* end_;
};

// What cereal's binary input archive does, for this one (cereal/archives/binary.hpp).
template <class T>
  requires std::is_arithmetic_v<T>
void CEREAL_LOAD_FUNCTION_NAME(bounded_input_archive& ar, T& t) {
  ar.loadBinary(std::addressof(t), sizeof t);
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(bounded_input_archive& ar, cereal::NameValuePair<T>& t) {
  ar(t.value);
}
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(bounded_input_archive& ar, cereal::BinaryData<T>& bd) {
  ar.loadBinary(bd.data, static_cast<std::size_t>(bd.size));
}
// A container's length: every item packs at least one byte.
template <class T>
void CEREAL_LOAD_FUNCTION_NAME(bounded_input_archive& ar, cereal::SizeTag<T>& t) {
  ar(t.size);
  ar.check_length(t.size, 1);
}
// A vector of numbers is allocated in one go: its length is checked against its bytes.
template <class T, class A>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
void CEREAL_LOAD_FUNCTION_NAME(bounded_input_archive& ar, std::vector<T, A>& v) {
  cereal::size_type n = 0;
  ar(n);
  ar.check_length(n, sizeof(T));
  v.resize(static_cast<std::size_t>(n));
  ar.loadBinary(v.data(), static_cast<std::size_t>(n) * sizeof(T));
}

}  // namespace squall::arrays::detail

// As cereal registers its own archives: polymorphic types and load_minimal work with it too.
CEREAL_REGISTER_ARCHIVE(squall::arrays::detail::bounded_input_archive)
namespace cereal::traits::detail {
template <>
struct get_output_from_input<squall::arrays::detail::bounded_input_archive> {
  using type = cereal::BinaryOutputArchive;
};
}  // namespace cereal::traits::detail
