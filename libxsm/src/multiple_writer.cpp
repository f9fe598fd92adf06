// SPDX-License-Identifier: BSD-3-Clause
#include <squall/xsm/multiple_writer.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <squall/error.hpp>
#include <squall/runtime.hpp>

namespace squall::xsm {
namespace {

// By name for tsm::options::protocol: tsm::init's heap, SQUALL_TSM_PROTOCOL's PARMACS
// segments. libtsm loads this library when the name is asked for and not registered yet.
[[maybe_unused]] const bool registered = [] {
  tsm::register_protocol_maker("multiple-writer",
                               []() -> std::unique_ptr<tsm::protocol> { return std::make_unique<multiple_writer>(); });
  return true;
}();

}  // namespace

// A diff message is a run of records: a header, then `length` bytes to write at `offset` of
// block `first + block` (the receiving object's range, the same on every node).
struct diff_record {
  std::uint32_t block = 0;
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
};

struct multiple_writer::outbox {
  std::vector<std::byte> bytes;  // am::max_payload() bytes, reserved in attach
  std::size_t used = 0;
  block_index routed_by = 0;  // the block the message is sent for (its first record's)
};

multiple_writer::multiple_writer() = default;
multiple_writer::~multiple_writer() = default;

void multiple_writer::attach(block_index first, block_index end, std::size_t block_size) {
  if (twins_ != nullptr) {  // made here, dropped by detach
    throw usage_error("multiple-writer: this protocol object runs a range already; make one object per data structure");
  }
  first_ = first;
  end_ = end;
  block_size_ = block_size;
  me_ = squall::node();
  seg_ = segment();
  // Not zeroed: the kernel commits a twin's pages when a write fault first copies into them.
  twins_.reset(new std::byte[(end - first) * block_size]);
  dirty_.clear();
  dirty_.reserve(end - first);
  cached_.clear();
  cached_.reserve(end - first);
  outboxes_.assign(static_cast<std::size_t>(squall::nodes()), outbox{});
  for (outbox& o : outboxes_) o.bytes.resize(am::max_payload());
  diff_messages_out_ = diff_messages_applied_ = 0;
}

void multiple_writer::started(segment s) { seg_ = s; }

void multiple_writer::detach() {
  seg_ = segment();
  twins_.reset();
  outboxes_.clear();
}

// --- faults, on the program's side ---

void multiple_writer::read_fault(segment s, block_index b) {
  if (is_home(b)) {
    s.set_tag(b, tag::read_write);  // the master copy: the home reads and writes it in place
    return;
  }
  fetch(s, b, false);
}

void multiple_writer::write_fault(segment s, block_index b) {
  if (is_home(b)) {
    s.set_tag(b, tag::read_write);
    return;
  }
  if (s.tag_of(b) == tag::invalid) {
    fetch(s, b, true);  // the twin is made as the copy arrives, and the copy is writable
  } else {
    std::memcpy(twin_of(b), s.protocol_view(b).data(), block_size_);
    s.set_tag(b, tag::read_write);
  }
  dirty_.push_back(b);
  twins.add();
}

// The home's copy is the one to read: every release's diffs reached it before that release
// ended, and the home writes it in place. On this host the home's memory is mapped here, so
// the copy takes neither a message nor the home's processor (segment::copy_from_home).
void multiple_writer::fetch(segment s, block_index b, bool write) {
  fetches.add();
  if (s.copy_from_home(b)) {
    fetches_direct.add();
    copied(s, b, write);
  } else {
    copy_arrived_ = false;
    send<&multiple_writer::on_fetch>(s.home(b), s, b, write);
    am::wait_until([this] { return copy_arrived_; });
  }
  cached_.push_back(b);
}

void multiple_writer::on_fetch(segment s, block_index b, int from, bool write) {
  fetches_served.add();
  send_block<&multiple_writer::on_copy>(from, s, b, true, write);
}

void multiple_writer::on_copy(segment s, block_index b, int, block_part bytes, bool write) {
  if (write) {
    bytes.store(s, b);
    copied(s, b, true);
  } else {
    bytes.install(s, b, tag::read_only);  // the bytes and the tag in one step
  }
  copy_arrived_ = true;
}

// The home's bytes are in this node's protocol view: the block becomes readable, or writable
// with its twin taken first (no store reaches the copy before its twin is taken).
void multiple_writer::copied(segment s, block_index b, bool write) {
  if (write) std::memcpy(twin_of(b), s.protocol_view(b).data(), block_size_);
  s.set_tag(b, write ? tag::read_write : tag::read_only);
}

// --- release: diffs go home ---

void multiple_writer::flush() {
  // Under the node lock: another worker of this node may take a write fault meanwhile, whose
  // handler adds to dirty_ (ThreadSanitizer, PARMACS on one node of two workers).
  bool any = false;
  am::run_locked([&] {
    any = !dirty_.empty();
    if (!any) return;
    diff_messages_out_ = 0;
    diff_messages_applied_ = 0;
    for (const block_index b : dirty_) {
      seg_.set_tag(b, tag::read_only);  // first: the program stores nothing more into it now
      add_diff(b);
    }
    dirty_.clear();
  });
  if (!any) return;
  for (std::size_t home = 0; home < outboxes_.size(); ++home) {
    if (outboxes_[home].used != 0) send_outbox(outboxes_[home], static_cast<int>(home));
  }
  am::wait_until([this] { return diff_messages_applied_ == diff_messages_out_; });
}

void multiple_writer::add_diff(block_index b) {
  outbox& o = outboxes_[static_cast<std::size_t>(seg_.home(b))];
  const std::byte* now = seg_.protocol_view(b).data();
  const std::byte* was = twin_of(b);
  diffs_sent.add();
  std::size_t i = 0;
  while (i < block_size_) {
    // Whole unchanged words are skipped eight bytes at a time; a run is exact to the byte.
    while (i + 8 <= block_size_ && std::memcmp(now + i, was + i, 8) == 0) i += 8;
    while (i < block_size_ && now[i] == was[i]) ++i;
    if (i == block_size_) break;
    std::size_t j = i + 1;
    while (j < block_size_ && now[j] != was[j]) ++j;
    put(o, b, i, now + i, j - i);
    diff_bytes.add(j - i);
    i = j;
  }
}

void multiple_writer::put(outbox& o, block_index b, std::size_t offset, const std::byte* bytes, std::size_t length) {
  const int home = seg_.home(b);
  while (length > 0) {
    if (o.bytes.size() - o.used <= sizeof(diff_record)) send_outbox(o, home);  // full: the rest goes next
    if (o.used == 0) o.routed_by = b;
    const std::size_t part = std::min(length, o.bytes.size() - o.used - sizeof(diff_record));
    const diff_record r{static_cast<std::uint32_t>(b - first_), static_cast<std::uint32_t>(offset),
                        static_cast<std::uint32_t>(part)};
    std::memcpy(o.bytes.data() + o.used, &r, sizeof r);
    std::memcpy(o.bytes.data() + o.used + sizeof r, bytes, part);
    o.used += sizeof r + part;
    offset += part;
    bytes += part;
    length -= part;
  }
}

void multiple_writer::send_outbox(outbox& o, int home) {
  diff_messages.add();
  ++diff_messages_out_;
  xsm::send<&multiple_writer::on_diffs>(home, seg_, o.routed_by, am::payload(o.bytes.data(), o.used));
  o.used = 0;
}

void multiple_writer::on_diffs(segment s, block_index, int from, am::payload records) {
  std::size_t at = 0;
  block_index last = end_;
  while (at < records.size()) {
    diff_record r;
    std::memcpy(&r, records.data() + at, sizeof r);
    const block_index b = first_ + r.block;
    std::memcpy(s.protocol_view(b).data() + r.offset, records.data() + at + sizeof r, r.length);
    if (b != last) diffs_applied.add();  // a block's records come together
    last = b;
    at += sizeof r + r.length;
  }
  send<&multiple_writer::on_diffs_applied>(from, s, first_);
}

void multiple_writer::on_diffs_applied(segment, block_index, int) { ++diff_messages_applied_; }

// --- acquire: stale copies go ---

void multiple_writer::written_while_synchronising(block_index b) const {
  std::fprintf(stderr,
               "squall xsm: multiple-writer: node %d: block %zu (at %p) was written by a thread of this node while "
               "another thread of it was at a barrier or a lock's acquire or release; the protocol keeps one set of "
               "copies per node, so no thread of a node may touch the memory while another synchronises (PARMACS "
               "runs one worker per node under it)\n",
               squall::node(), b, static_cast<void*>(seg_.address_of(b)));
  std::abort();
}

void multiple_writer::after_acquire() {
  flush();  // this node's own writes must not go with the copies holding them
  drop_copies();
}

void multiple_writer::drop_copies() {
  // Under the node lock, as flush's walk of dirty_: a fault handler may be adding to cached_.
  am::run_locked([&] {
    // The release just before left nothing dirty: a block dirty now was written by another
    // thread of this node meanwhile. Dropping it would lose those writes, and the next release
    // would raise its Invalid tag to ReadOnly over stale bytes, which this node would then read
    // until the end (another node's writes never seen): say so instead.
    if (!dirty_.empty()) written_while_synchronising(dirty_.front());
    for (const block_index b : cached_) seg_.set_tag(b, tag::invalid);
    invalidations.add(cached_.size());
    cached_.clear();
  });
}

}  // namespace squall::xsm
