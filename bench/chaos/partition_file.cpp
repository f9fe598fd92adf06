// SPDX-License-Identifier: BSD-3-Clause
#include "partition_file.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace squall::bench::chaos_exchange {
namespace {

constexpr char kMagic[8] = {'S', 'Q', 'C', 'H', 'X', 'P', '0', '1'};

// Fixed-size header; the file is only ever read on the machine that wrote it.
struct header {
  char magic[8];
  std::int32_t cells[3], hole[3];
  std::int32_t parts;
  std::int32_t reserved;
  std::uint64_t seed;
  std::uint64_t nodes, edges;
};

using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error("partition file " + path + ": " + why);
}

}  // namespace

void write_partition(const std::string& path, const partition& p) {
  header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  for (int a = 0; a < 3; ++a) {
    h.cells[a] = p.shape.cells[a];
    h.hole[a] = p.shape.hole[a];
  }
  h.parts = p.parts;
  h.seed = p.seed;
  h.nodes = p.node_owner.size();
  h.edges = p.edge_owner.size();

  const std::string temporary = path + ".tmp";
  {
    file_ptr f(std::fopen(temporary.c_str(), "wb"), std::fclose);
    if (!f) fail(temporary, "cannot be created");
    const bool ok = std::fwrite(&h, sizeof h, 1, f.get()) == 1 &&
                    std::fwrite(p.node_owner.data(), sizeof(std::int32_t), h.nodes, f.get()) == h.nodes &&
                    std::fwrite(p.edge_owner.data(), sizeof(std::int32_t), h.edges, f.get()) == h.edges;
    if (!ok || std::fflush(f.get()) != 0) fail(temporary, "write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(path, "rename failed");
}

partition read_partition(const std::string& path) {
  file_ptr f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) fail(path, "cannot be opened");
  header h{};
  if (std::fread(&h, sizeof h, 1, f.get()) != 1) fail(path, "too short");
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) fail(path, "not a chaos_exchange partition");
  partition p;
  for (int a = 0; a < 3; ++a) {
    p.shape.cells[a] = h.cells[a];
    p.shape.hole[a] = h.hole[a];
  }
  p.parts = h.parts;
  p.seed = h.seed;
  p.node_owner.resize(h.nodes);
  p.edge_owner.resize(h.edges);
  if (std::fread(p.node_owner.data(), sizeof(std::int32_t), h.nodes, f.get()) != h.nodes ||
      std::fread(p.edge_owner.data(), sizeof(std::int32_t), h.edges, f.get()) != h.edges) {
    fail(path, "too short");
  }
  return p;
}

}  // namespace squall::bench::chaos_exchange
