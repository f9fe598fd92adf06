// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint files: `manifest` (node 0: a format line, the node count, and each array's
// element and index types) and `array-<a>.node-<n>` per array and writing node, a sequence
// of records: key length (4 bytes), key, packed length (8 bytes), packed element. A restart
// on m nodes has node k read the files of writing nodes k, k+m, k+2m, ... and send each
// element to its home.
#include <squall/arrays/checkpoint.hpp>
#include <squall/collectives.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime.hpp"

namespace squall::arrays {
namespace detail {
namespace {

constexpr const char* format_line = "squall-arrays-checkpoint 1";

std::string file_of(const std::string& dir, std::size_t array, int node) {
  return dir + "/array-" + std::to_string(array) + ".node-" + std::to_string(node);
}

[[noreturn]] void io_error(const std::string& what, const std::string& path) {
  throw squall::usage_error("libarrays: " + what + " " + path + ": " + std::strerror(errno));
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) io_error("cannot write", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) io_error("cannot write", path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) io_error("cannot read", path);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

std::string manifest(const runtime& r) {
  std::string m = std::string(format_line) + "\nnodes " + std::to_string(r.nodes) + "\narrays " +
                  std::to_string(r.arrays.size()) + "\n";
  for (std::size_t a = 0; a < r.arrays.size(); ++a) {
    const element_ops& ops = r.arrays[a]->ops();
    m += std::to_string(a) + " " + std::string(ops.element_name) + " | " + std::string(ops.index_name) + "\n";
  }
  return m;
}

// The node count of the job that wrote `text`, once it is known to describe this job's arrays.
int check_manifest(const std::string& text, const runtime& r, const std::string& dir) {
  std::istringstream in(text);
  std::string line, word;
  std::getline(in, line);
  if (line != format_line) throw squall::usage_error("libarrays: " + dir + " holds no checkpoint (no manifest)");
  int nodes = 0;
  std::size_t arrays = 0;
  in >> word >> nodes >> word >> arrays;
  if (nodes < 1) throw squall::usage_error("libarrays: the checkpoint manifest in " + dir + " is damaged");
  if (arrays != r.arrays.size()) {
    throw squall::usage_error("libarrays: the checkpoint in " + dir + " has " + std::to_string(arrays) +
                              " arrays; this program created " + std::to_string(r.arrays.size()));
  }
  // The rest is this program's own manifest's, line for line.
  const std::string mine = manifest(r);
  const std::string theirs_types = text.substr(text.find("\narrays"));
  const std::string mine_types = mine.substr(mine.find("\narrays"));
  if (theirs_types != mine_types) {
    throw squall::usage_error("libarrays: the checkpoint in " + dir +
                              " is of other arrays (element or index types differ from this program's)");
  }
  return nodes;
}

}  // namespace

std::string array_state::pack_locals() {
  std::string out;
  std::string packed;
  table_.for_each([&](entry_rec& e) {
    if (!e.elem) return;
    packed.clear();
    ops_.pack(*e.elem, packed);
    const auto key_size = static_cast<std::uint32_t>(e.k.bytes().size());
    const auto packed_size = static_cast<std::uint64_t>(packed.size());
    out.append(reinterpret_cast<const char*>(&key_size), sizeof key_size);
    out.append(e.k.bytes());
    out.append(reinterpret_cast<const char*>(&packed_size), sizeof packed_size);
    out.append(packed);
  });
  return out;
}

}  // namespace detail

void checkpoint(const std::string& dir) {
  quiesce();
  detail::runtime& r = detail::rt();
  if (r.me == 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw squall::usage_error("libarrays: cannot make the checkpoint directory " + dir + ": " + ec.message());
  }
  squall::barrier();
  for (std::size_t a = 0; a < r.arrays.size(); ++a) detail::write_file(detail::file_of(dir, a, r.me), r.arrays[a]->pack_locals());
  squall::barrier();  // every file is complete before the manifest says so
  if (r.me == 0) detail::write_file(dir + "/manifest", detail::manifest(r));
  squall::barrier();
}

void restart(const std::string& dir) {
  quiesce();
  detail::runtime& r = detail::rt();
  const int writers = detail::check_manifest(detail::read_file(dir + "/manifest"), r, dir);
  for (std::size_t a = 0; a < r.arrays.size(); ++a) {
    for (int w = r.me; w < writers; w += r.nodes) {
      const std::string bytes = detail::read_file(detail::file_of(dir, a, w));
      std::size_t at = 0;
      const auto damaged = [&] { throw squall::usage_error("libarrays: " + detail::file_of(dir, a, w) + " is damaged"); };
      while (at < bytes.size()) {
        std::uint32_t key_size = 0;
        std::uint64_t packed_size = 0;
        if (bytes.size() - at < sizeof key_size) damaged();
        std::memcpy(&key_size, bytes.data() + at, sizeof key_size);
        at += sizeof key_size;
        if (bytes.size() - at < key_size + sizeof packed_size) damaged();
        const key k(bytes.substr(at, key_size));
        at += key_size;
        std::memcpy(&packed_size, bytes.data() + at, sizeof packed_size);
        at += sizeof packed_size;
        if (bytes.size() - at < packed_size) damaged();
        r.arrays[a]->restore(k, std::string_view(bytes).substr(at, packed_size));
        at += packed_size;
      }
    }
  }
  quiesce();
}

}  // namespace squall::arrays
