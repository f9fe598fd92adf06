// SPDX-License-Identifier: BSD-3-Clause
// libarrays' message format (libarrays/src/wire.hpp): a header whose fields from `a` on hold
// their defaults goes short, any other in full; both read back to the same header, key and
// body; a truncated message of either form is refused with a clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "wire.hpp"

namespace {

using namespace squall::arrays::detail;

// The bytes scheduler.cpp's send() puts on the wire for h, key and body.
std::string encode(const header& h, const std::string& key, const std::string& body) {
  std::string out(wire_header_bytes(h) + key.size() + body.size(), '\0');
  write_message(out.data(), h, key, body);
  return out;
}

void expect_same(const header& a, const header& b) {
  EXPECT_EQ(a.what, b.what);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.hops, b.hops);
  EXPECT_EQ(a.array, b.array);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.a, b.a);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.b, b.b);
  EXPECT_EQ(a.c, b.c);
}

TEST(Wire, AOneWayInvokeGoesShortAndReadsBackWhole) {
  header h;
  h.what = kind::invoke;
  h.flags = forwarded_flag;
  h.hops = 2;
  h.array = 3;
  h.source = 1;
  h.id = 0x1234'5678'9abc'def0ULL;
  const std::string bytes = encode(h, "KEY!", "argument");
  EXPECT_EQ(bytes.size(), short_header_bytes + 4 + 8);
  const message m = read_message(bytes);
  expect_same(m.h, h);  // short_flag is the wire's, not the reader's
  EXPECT_EQ(m.h.key_bytes, 4u);
  EXPECT_EQ(m.key, "KEY!");
  EXPECT_EQ(m.body, "argument");
}

TEST(Wire, AnyFieldPastTheShortFormSendsTheWholeHeader) {
  for (int field = 0; field < 5; ++field) {
    header h;
    h.what = kind::migrate;
    h.source = 0;
    if (field == 0) h.a = 7;
    if (field == 1) h.node = 0;
    if (field == 2) h.epoch = 9;
    if (field == 3) h.b = 11;
    if (field == 4) h.c = -1;
    const std::string bytes = encode(h, "k", "body");
    EXPECT_EQ(bytes.size(), sizeof(header) + 1 + 4) << "field " << field;
    const message m = read_message(bytes);
    expect_same(m.h, h);
    EXPECT_EQ(m.key, "k");
    EXPECT_EQ(m.body, "body");
  }
}

TEST(Wire, TheInvokedEntryIsReadWithoutTheRestOfTheHeader) {
  header h;
  h.what = kind::invoke;
  h.id = 77;
  EXPECT_EQ(invoked_entry(encode(h, "k", "args")), 77u);  // short form
  h.a = 5;
  EXPECT_EQ(invoked_entry(encode(h, "k", "args")), 77u);  // full form
  h.what = kind::bcast;
  EXPECT_EQ(invoked_entry(encode(h, "k", "args")), 0u);
  h.what = kind::invoke;
  EXPECT_EQ(invoked_entry(encode(h, "k", "args").substr(0, short_header_bytes - 1)), 0u);
}

TEST(Wire, TruncatedMessagesAreRefused) {
  header h;
  const std::string short_form = encode(h, "key", "");
  h.a = 1;
  const std::string long_form = encode(h, "key", "");
  EXPECT_THROW(read_message(short_form.substr(0, short_header_bytes - 1)), squall::usage_error);
  EXPECT_THROW(read_message(short_form.substr(0, short_header_bytes + 2)), squall::usage_error);
  EXPECT_THROW(read_message(long_form.substr(0, sizeof(header) - 1)), squall::usage_error);
  EXPECT_THROW(read_message(long_form.substr(0, sizeof(header) + 2)), squall::usage_error);
  EXPECT_NO_THROW(read_message(short_form));
  EXPECT_NO_THROW(read_message(long_form));
}

}  // namespace
