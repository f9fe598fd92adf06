// SPDX-License-Identifier: BSD-3-Clause
#include "stats/job_counters.hpp"

#include <cstring>

#include "common/log.hpp"

namespace squall::stats {
namespace {

class writer {
 public:
  void number(std::uint64_t v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void text(const std::string& s) {
    number(s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class reader {
 public:
  reader(std::span<const std::byte> in, int node) : in_(in), node_(node) {}
  std::uint64_t number() {
    need(sizeof(std::uint64_t));
    std::uint64_t v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text() {
    const std::uint64_t size = number();
    need(size);
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), size);
    at_ += size;
    return s;
  }
  void expect_end() const {
    if (at_ != in_.size()) malformed();
  }

 private:
  void need(std::uint64_t bytes) const {
    if (bytes > in_.size() - at_) malformed();
  }
  [[noreturn]] void malformed() const { fatal("statistics: the counters of node %d came malformed", node_); }

  std::span<const std::byte> in_;
  std::size_t at_ = 0;
  int node_;
};

per_node& values_of(std::map<std::string, per_node, std::less<>>& m, const std::string& name, int nodes) {
  auto it = m.find(name);
  if (it == m.end()) it = m.emplace(name, per_node(static_cast<std::size_t>(nodes), 0)).first;
  return it->second;
}

}  // namespace

std::vector<std::byte> encode(const snapshot& s, const node_facts& facts) {
  writer w;
  w.text(facts.host);
  w.text(facts.network);
  w.number(s.counters.size());
  for (const auto& [name, value] : s.counters) {
    w.text(name);
    w.number(value);
  }
  w.number(s.handlers.size());
  for (const auto& h : s.handlers) {
    w.text(h.name);
    w.number(h.internal ? 1 : 0);
    w.number(h.sent);
    w.number(h.sent_bytes);
    w.number(h.received);
    w.number(h.received_bytes);
  }
  return w.take();
}

job_counters decode(std::span<const std::vector<std::byte>> per_node_bytes) {
  job_counters job;
  job.nodes = static_cast<int>(per_node_bytes.size());
  const auto n = per_node_bytes.size();
  std::map<std::string, job_handler, std::less<>> handlers;
  for (std::size_t node = 0; node < n; ++node) {
    reader r(per_node_bytes[node], static_cast<int>(node));
    job.hosts.push_back(r.text());
    job.networks.push_back(r.text());
    for (std::uint64_t i = 0, count = r.number(); i < count; ++i) {
      const std::string name = r.text();
      values_of(job.counters, name, job.nodes)[node] = r.number();
    }
    for (std::uint64_t i = 0, count = r.number(); i < count; ++i) {
      const std::string name = r.text();
      auto it = handlers.find(name);
      if (it == handlers.end()) {
        job_handler h{name, false, per_node(n, 0), per_node(n, 0), per_node(n, 0), per_node(n, 0)};
        it = handlers.emplace(name, std::move(h)).first;
      }
      auto& h = it->second;
      const bool internal = r.number() != 0;  // read whatever the earlier nodes said
      h.internal = h.internal || internal;
      h.sent[node] = r.number();
      h.sent_bytes[node] = r.number();
      h.received[node] = r.number();
      h.received_bytes[node] = r.number();
    }
    r.expect_end();
  }
  for (auto& [name, h] : handlers) job.handlers.push_back(std::move(h));
  return job;
}

std::uint64_t total(const per_node& values) {
  std::uint64_t sum = 0;
  for (auto v : values) sum += v;
  return sum;
}

}  // namespace squall::stats
