// SPDX-License-Identifier: BSD-3-Clause
// Damaged bytes read back (a migrating element, a message, a checkpoint's record): a length
// larger than the bytes left is a clear usage_error, before anything is allocated for it. The
// program's operator new records the largest allocation and the bytes allocated in all, so
// the tests can say none was large, and that no work was done in proportion to the length
// (allocating and filling it a piece at a time).
#include <gtest/gtest.h>

#include <squall/arrays.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <vector>

namespace {
std::size_t largest_allocation = 0;
std::size_t bytes_allocated = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (n > largest_allocation) largest_allocation = n;
  bytes_allocated += n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace arrays = squall::arrays;
namespace detail = squall::arrays::detail;

namespace {

struct Cell : arrays::element<arrays::index1d> {
  std::vector<double> state;
  std::string name;
  template <class A>
  void serialize(A& ar) {
    ar(state, name);
  }
};

// A packed Cell whose vector says it holds `claimed` doubles, followed by `tail`.
std::string cell_claiming(std::uint64_t claimed, std::size_t tail = 48) {
  std::string b(sizeof claimed, '\0');
  std::memcpy(b.data(), &claimed, sizeof claimed);
  return b + std::string(tail, '\x01');
}

// What unpacking `bytes` as a Cell throws (empty if nothing).
std::string unpack_error(const std::string& bytes) {
  Cell c;
  largest_allocation = 0;
  bytes_allocated = 0;
  std::string what;
  try {
    detail::ops_of<Cell>::unpack(c, bytes);
  } catch (const squall::usage_error& e) {
    what = e.what();
  }
  return what;
}

TEST(BoundedArchive, AGoodElementUnpacks) {
  Cell a;
  a.state = {1.5, 2.5, 3.5};
  a.name = "cell-1";
  std::string bytes;
  detail::ops_of<Cell>::pack(a, bytes);
  Cell b;
  detail::ops_of<Cell>::unpack(b, bytes);
  EXPECT_EQ(b.state, a.state);
  EXPECT_EQ(b.name, a.name);
}

TEST(BoundedArchive, AVectorLengthOf2To64Minus1IsAnErrorNotALengthError) {
  const std::string what = unpack_error(cell_claiming(~std::uint64_t{0}));
  EXPECT_NE(what.find("56 bytes are not a packed element"), std::string::npos) << what;
  EXPECT_NE(what.find("the length at byte 0 says 18446744073709551615 items of 8 bytes, more than the 48 bytes after it"),
            std::string::npos)
      << what;
  EXPECT_LT(largest_allocation, std::size_t{4096});
}

// Refused as the length is read: nothing after it read (the 48 bytes are all left), nothing
// allocated for it, whole or a piece at a time.
TEST(BoundedArchive, AVectorLengthOf2To27AllocatesNothingLarge) {
  const std::string what = unpack_error(cell_claiming(std::uint64_t{1} << 27));
  EXPECT_NE(what.find("the length at byte 0 says 134217728 items of 8 bytes, more than the 48 bytes after it"),
            std::string::npos)
      << what;
  EXPECT_LT(largest_allocation, std::size_t{4096});  // not 1 GiB
  EXPECT_LT(bytes_allocated, std::size_t{64} << 10) << "bytes allocated in all";
}

TEST(BoundedArchive, AStringLengthPastTheEndIsAnError) {
  // A good vector of 2 doubles, then a name claiming 2^40 characters.
  std::string bytes = cell_claiming(2, 16);
  const std::uint64_t claimed = std::uint64_t{1} << 40;
  bytes.append(reinterpret_cast<const char*>(&claimed), sizeof claimed);
  bytes += "cell";
  const std::string what = unpack_error(bytes);
  EXPECT_NE(what.find("the length at byte 24 says 1099511627776, more than the 4 bytes after it"), std::string::npos) << what;
  EXPECT_LT(largest_allocation, std::size_t{4096});
}

TEST(BoundedArchive, BytesEndingInsideAValueAreAnError) {
  const std::string what = unpack_error(std::string(4, '\0'));  // half a vector's length
  EXPECT_NE(what.find("8 bytes were to be read from byte 0, but the bytes end at byte 4"), std::string::npos) << what;
}

// Messages are read with the same archive: a map's length is checked too.
TEST(BoundedArchive, AMessagesMapLengthPastTheEndIsAnError) {
  std::string bytes = detail::encode(std::map<int, std::string>{{1, "a"}, {2, "b"}});
  const std::uint64_t claimed = std::uint64_t{1} << 50;
  std::memcpy(bytes.data(), &claimed, sizeof claimed);
  largest_allocation = 0;
  try {
    detail::decode<std::map<int, std::string>>(bytes, "a test message");
    FAIL() << "decoded";
  } catch (const squall::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("says 1125899906842624, more than the"), std::string::npos) << e.what();
  }
  EXPECT_LT(largest_allocation, std::size_t{4096});
}

}  // namespace
