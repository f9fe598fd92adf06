// SPDX-License-Identifier: BSD-3-Clause
#include "memory/home_views.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <squall/collectives.hpp>

#include "common/config.hpp"
#include "common/descriptor_failure.hpp"
#include "common/log.hpp"
#include "memory/address_space.hpp"
#include "memory/counters.hpp"
#include "runtime/node.hpp"
#include "transport/network_transport.hpp"

namespace squall::memory::detail {

void open_remote_reads(segment_state& s, rt::node_runtime& nd);

namespace {

// Another node's memfd, by its number in that process, opened here; -1 (counted) if refused.
int open_peer_fd(pid_t pid, std::uint64_t number, int flags) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%llu", static_cast<int>(pid), static_cast<unsigned long long>(number));
  const int fd = pid > 0 ? ::open(path, flags | O_CLOEXEC) : -1;
  if (fd < 0) count(home_views_refused);
  return fd;
}

void* map_peer(pid_t pid, std::uint64_t number, std::size_t bytes, bool writable) {
  const int fd = open_peer_fd(pid, number, writable ? O_RDWR : O_RDONLY);
  if (fd < 0) return nullptr;
  void* view = ::mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (view != MAP_FAILED) return view;
  count(home_views_refused);
  return nullptr;
}

std::size_t words_bytes(const segment_state& s) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (s.blocks * sizeof(std::uint64_t) + page - 1) / page * page;
}

// This node's home words: a memfd of one zero word per block, mapped here.
void make_own_words(segment_state& s, int me) {
  s.words_memfd = ::memfd_create("squall-home-words", MFD_CLOEXEC);
  if (s.words_memfd < 0) fatal("cannot make a segment's home words: %s", descriptor_failure(errno).c_str());
  if (::ftruncate(s.words_memfd, static_cast<off_t>(words_bytes(s))) != 0) {
    fatal("cannot size a segment's home words to %zu bytes: %s", words_bytes(s), std::strerror(errno));
  }
  void* words = ::mmap(nullptr, words_bytes(s), PROT_READ | PROT_WRITE, MAP_SHARED, s.words_memfd, 0);
  if (words == MAP_FAILED) fatal("cannot map a segment's home words: %s", mapping_failure(errno).c_str());
  s.home_words[static_cast<std::size_t>(me)] = static_cast<std::atomic<std::uint64_t>*>(words);
}

}  // namespace

void open_home_views(segment_state& s, bool home_words) {
  rt::node_runtime* nd = rt::current();
  const auto n = static_cast<std::size_t>(nd != nullptr ? nd->n : 1);
  s.home_views.assign(n, nullptr);
  s.home_words.assign(n, nullptr);
  if (n == 1) return;
  static const bool wanted = env_bool("SQUALL_HOME_VIEWS", true);
  const bool words = wanted && home_words;
  if (words) make_own_words(s, nd->me);
  // Every node's memfd numbers (+1; 0: not offered), its segment's and its home words', in
  // one allreduce: each fills its own slots.
  std::vector<std::uint64_t> fds(2 * n, 0);
  if (wanted) fds[2 * static_cast<std::size_t>(nd->me)] = static_cast<std::uint64_t>(s.memfd) + 1;
  if (words) fds[2 * static_cast<std::size_t>(nd->me) + 1] = static_cast<std::uint64_t>(s.words_memfd) + 1;
  allreduce(std::span<const std::uint64_t>(fds), std::span<std::uint64_t>(fds), op::max{});
  for (std::size_t i = 0; wanted && i < n; ++i) {
    if (static_cast<int>(i) == nd->me || fds[2 * i] == 0 || !nd->on_this_host[i]) continue;
    const pid_t pid = nd->job.control(static_cast<int>(i)).pid.load(std::memory_order_relaxed);
    s.home_views[i] = static_cast<const std::byte*>(map_peer(pid, fds[2 * i] - 1, s.bytes, false));
    // A node's words are mapped only where its memory is: a protocol that registered as a
    // reader then copies the block (segment::home_word's promise).
    if (s.home_views[i] == nullptr || fds[2 * i + 1] == 0) continue;
    s.home_words[i] = static_cast<std::atomic<std::uint64_t>*>(map_peer(pid, fds[2 * i + 1] - 1, words_bytes(s), true));
  }
  // Every node has a network transport or none (a job spans hosts, or SQUALL_TRANSPORT names
  // one), so the exchange is collective.
  if (nd->net) open_remote_reads(s, *nd);
}

// Over a network transport that offers one-sided reads (UCX), the homes this node has no view
// of: every node registers its protocol view and the nodes trade keys and addresses, one
// allreduce for the largest key and one for the keys, each node filling its own slot.
void open_remote_reads(segment_state& s, rt::node_runtime& nd) {
  network_transport& net = *nd.net;
  const auto n = static_cast<std::size_t>(nd.n);
  network_transport::registration mine;
  if (net.offers_remote_reads()) mine = net.register_for_reads(s.proto, s.bytes);
  s.read_registration = mine.handle;
  const std::uint64_t my_words = (mine.key.size() + 7) / 8;
  const std::uint64_t words = allreduce(my_words, op::max{});
  s.read_keys.assign(n, 0);
  s.read_bases.assign(n, 0);
  if (words == 0) return;
  const std::size_t slot = 2 + words;  // the protocol view's address, the key's bytes, the key
  std::vector<std::uint64_t> all(n * slot, 0);
  if (mine.handle != 0) {
    std::uint64_t* at = all.data() + static_cast<std::size_t>(nd.me) * slot;
    at[0] = reinterpret_cast<std::uintptr_t>(s.proto);
    at[1] = mine.key.size();
    std::memcpy(at + 2, mine.key.data(), mine.key.size());
  }
  allreduce(std::span<const std::uint64_t>(all), std::span<std::uint64_t>(all), op::max{});
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* at = all.data() + i * slot;
    if (static_cast<int>(i) == nd.me || s.home_views[i] != nullptr || at[1] == 0) continue;
    s.read_keys[i] = net.unpack_key(static_cast<int>(i), {reinterpret_cast<const std::byte*>(at + 2), at[1]});
    if (s.read_keys[i] != 0) s.read_bases[i] = at[0];
  }
}

void home_views_opened(segment_state& s) {
  if (s.words_memfd >= 0) ::close(s.words_memfd);
  s.words_memfd = -1;
}

void close_home_views(segment_state& s) {
  for (const std::byte*& view : s.home_views) {
    if (view != nullptr) ::munmap(const_cast<std::byte*>(view), s.bytes);
    view = nullptr;
  }
  for (std::atomic<std::uint64_t>*& words : s.home_words) {
    if (words != nullptr) ::munmap(words, words_bytes(s));
    words = nullptr;
  }
  if (s.words_memfd >= 0) ::close(s.words_memfd);
  s.words_memfd = -1;
  rt::node_runtime* nd = rt::current();
  if (nd == nullptr || !nd->net) return;
  for (std::uintptr_t& key : s.read_keys) {
    nd->net->release_key(key);
    key = 0;
  }
  nd->net->deregister(s.read_registration);
  s.read_registration = 0;
}

}  // namespace squall::memory::detail
