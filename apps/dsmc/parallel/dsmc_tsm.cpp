// SPDX-License-Identifier: BSD-3-Clause
// dsmc_tsm: DSMC with the cells block-partitioned along x and the moving particles passed
// through receive buffers in TSM memory (stache), as the paper's TSM version. Every node has,
// homed at it, one buffer for each of its four sides and one far buffer; the leaving
// particles are first stacked locally by side. Then, in four phases separated by barriers,
// each node writes its stack for side d into the buffer of its neighbour across d; a particle
// for any other node is appended to that node's far buffer under its lock. After the last
// barrier every node reads its own buffers, fetching their blocks ahead, and a fifth barrier
// keeps the writers serving until it is done. The buffers alternate between two sets by step
// parity, so a fast node's next writes never meet a slow node's reading.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <squall/runtime.hpp>
#include <squall/tsm.hpp>

#include "squall/apps/dsmc/parallel/receive_capacity.hpp"
#include "squall/apps/dsmc/parallel/squall_driver.hpp"

namespace {

using namespace squall::apps::dsmc;

// A receive buffer in TSM memory: a count, then the particles.
struct BufferHeader {
  std::uint64_t count;
  std::uint64_t padding[7];  // particles start on their own cache line
};
constexpr int kBuffersPerSet = kDirections + 1;  // the four sides, then the far buffer
constexpr int kFar = kDirections;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

class TsmExchange final : public ParticleExchange {
 public:
  TsmExchange(const BlockPartition& partition, std::size_t block_size)
      : partition_(partition),
        node_(squall::node()),
        capacity_{neighbour_capacity(partition), far_capacity(partition)},
        buffer_bytes_{round_up(sizeof(BufferHeader) + capacity_[0] * sizeof(Particle), block_size),
                      round_up(sizeof(BufferHeader) + capacity_[1] * sizeof(Particle), block_size)},
        node_bytes_(2 * (kDirections * buffer_bytes_[0] + buffer_bytes_[1])),
        far_locks_(static_cast<std::size_t>(partition.nodes())) {
    squall::tsm::options opt;
    opt.block_size = block_size;
    const std::size_t blocks_per_node = node_bytes_ / block_size;
    opt.homes = squall::memory::home_policy::function(
        [blocks_per_node](squall::memory::block_index b) { return static_cast<int>(b / blocks_per_node); });
    base_ = squall::tsm::alloc<std::byte>(node_bytes_ * static_cast<std::size_t>(partition.nodes()), opt);
  }
  ~TsmExchange() override { squall::tsm::free(base_); }

  std::vector<Particle> exchange(const Leaving& leaving) override {
    const int parity = step_++ % 2;
    for (auto& stack : stacks_) stack.clear();
    far_.clear();
    for (std::size_t i = 0; i < leaving.particles.size(); ++i) {
      const int d = partition_.direction_to(node_, leaving.dest[i]);
      if (d >= 0) {
        stacks_[d].push_back(leaving.particles[i]);
      } else {
        far_.emplace_back(leaving.dest[i], leaving.particles[i]);
      }
    }
    for (const auto& [dest, p] : far_) append_far(dest, parity, p);
    for (int d = 0; d < kDirections; ++d) {
      const int to = partition_.neighbour(node_, d);
      if (to >= 0) write(to, parity, opposite(d), stacks_[d]);
      squall::tsm::barrier();
    }
    fetch_own_buffers(parity);
    std::vector<Particle> arrived;
    for (int b = 0; b < kBuffersPerSet; ++b) {
      if (!in_use(b)) continue;
      auto* header = buffer(node_, parity, b);
      const auto* items = reinterpret_cast<const Particle*>(header + 1);
      arrived.insert(arrived.end(), items, items + header->count);
      if (b == kFar && header->count != 0) header->count = 0;  // written again two steps on
    }
    squall::tsm::barrier();  // the writers wait, and so serve, while their blocks come back
    return arrived;
  }

  std::vector<std::pair<std::string, double>> figures() const override {
    return {{"particles_moved_neighbour", neighbour_moves_}, {"particles_moved_far", far_moves_}};
  }

 private:
  BufferHeader* buffer(int owner, int parity, int which) const {
    std::size_t at = static_cast<std::size_t>(owner) * node_bytes_ +
                     static_cast<std::size_t>(parity) * (node_bytes_ / 2);
    at += static_cast<std::size_t>(std::min(which, kDirections)) * buffer_bytes_[0];
    return reinterpret_cast<BufferHeader*>(base_ + at);
  }

  bool in_use(int which) const { return which == kFar || partition_.neighbour(node_, which) >= 0; }

  // The neighbours' writes left this node's buffer blocks at the writers, and each read must
  // get its block back from one. Were the writers computing their next step by then, every
  // block would wait for a writer's CPU (about 450 us a block on two cores), so they wait in
  // a barrier until the reading is done. Fetched together (a hint: the reads that follow are
  // the ordinary ones), the headers and then the particles they count cost two round trips.
  void fetch_own_buffers(int parity) {
    std::vector<squall::tsm::byte_range> ranges;
    for (int b = 0; b < kBuffersPerSet; ++b) {
      if (in_use(b)) ranges.push_back({buffer(node_, parity, b), sizeof(BufferHeader)});
    }
    squall::tsm::fetch(ranges);
    ranges.clear();
    for (int b = 0; b < kBuffersPerSet; ++b) {
      if (!in_use(b)) continue;
      const BufferHeader* header = buffer(node_, parity, b);
      if (header->count != 0) ranges.push_back({header + 1, header->count * sizeof(Particle)});
    }
    squall::tsm::fetch(ranges);
  }

  // Found by this node alone, while the others go on into the step's barriers: an exception
  // would unwind into a collective they do not make (the segment's free), which the runtime
  // reports as a mismatch instead of this. So the node says it and ends; squallrun (or the
  // others' watchdogs) then stops the job.
  [[noreturn]] void overflow(int owner, const char* which, std::size_t capacity) const {
    std::fflush(stdout);
    std::fprintf(stderr, "dsmc_tsm: node %d's %s receive buffer (%zu particles) overflowed\n", owner, which, capacity);
    std::_Exit(1);
  }

  void write(int to, int parity, int side, const std::vector<Particle>& stack) {
    if (stack.size() > capacity_[0]) overflow(to, "side", capacity_[0]);
    BufferHeader* header = buffer(to, parity, side);
    if (!stack.empty()) std::memcpy(static_cast<void*>(header + 1), stack.data(), stack.size() * sizeof(Particle));
    header->count = stack.size();
    neighbour_moves_ += static_cast<double>(stack.size());
  }

  void append_far(int to, int parity, const Particle& p) {
    far_locks_.acquire(static_cast<std::size_t>(to));
    BufferHeader* header = buffer(to, parity, kFar);
    if (header->count >= capacity_[1]) {
      far_locks_.release(static_cast<std::size_t>(to));
      overflow(to, "far", capacity_[1]);
    }
    std::memcpy(static_cast<void*>(reinterpret_cast<Particle*>(header + 1) + header->count), &p, sizeof p);
    ++header->count;
    far_locks_.release(static_cast<std::size_t>(to));
    far_moves_ += 1;
  }

  BlockPartition partition_;
  int node_;
  std::size_t capacity_[2];      // side, far
  std::size_t buffer_bytes_[2];  // side, far
  std::size_t node_bytes_;       // a node's two sets of buffers
  squall::tsm::lock_array far_locks_;
  std::byte* base_ = nullptr;
  int step_ = 0;
  std::vector<Particle> stacks_[kDirections];
  std::vector<std::pair<int, Particle>> far_;
  double neighbour_moves_ = 0, far_moves_ = 0;
};

std::unique_ptr<ParticleExchange> make(const BlockPartition& partition, const VersionOptions& options) {
  return std::make_unique<TsmExchange>(partition, options.block_size);
}

int run(squall::apps::Options& options) { return run_squall_version(options, "tsm", true, make); }

}  // namespace

int main(int argc, char** argv) {
  squall::runtime rt(&argc, &argv);
  return squall::apps::run_program(argc, argv, "dsmc_tsm", version_usage("dsmc_tsm", true).c_str(), run);
}
