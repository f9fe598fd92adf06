// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint files, format 3 (README.md, libarrays' "Checkpoints", says the same for users):
// - `array-<a>.node-<n>.<tag>` per array and writing node, the tag (16 hex digits) new for
//   each checkpoint: a header of the element count and the FNV-1a hash of the records (8 bytes
//   each), then the records: key length (4 bytes), key, packed length (8 bytes), packed element;
// - `manifest` (node 0, written last): the format line, the node count, each array's element
//   and index types, each node file's name, size, element count and hash, and a last line with
//   the hash of every line before it.
// Format 2 was the same without the tag; it is still read.
// A checkpoint never writes over the files of the one its directory holds: its own files have
// a new tag, and its manifest is written beside the old one, synced, then renamed over it. A
// crash or a full disk at any point leaves the directory's manifest naming whole files (the
// old checkpoint's until the rename, the new one's after it); once the new manifest is in
// place, the old checkpoint's files are removed (remove_older_files), and a failed checkpoint
// removes its own. Every node makes the directory and writes its files there: where hosts do
// not share the file system, each host's directory holds its nodes' files (and node 0's the
// manifest, which node 0 reads for every node on restart).
// A restart on m nodes has node k read the files of writing nodes k, k+m, k+2m, ... Every node
// checks its files against the manifest and their headers before any element is sent, and
// the nodes agree on the first problem found, so a damaged checkpoint fails on every node,
// naming the file, and restores nothing.
#include <squall/arrays/checkpoint.hpp>
#include <squall/collectives.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <span>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "runtime.hpp"

namespace squall::arrays::detail {
namespace {

constexpr const char* format_word = "squall-arrays-checkpoint";
constexpr int format_version = 3;         // what checkpoint() writes
constexpr int oldest_format_version = 2;  // the oldest restart() reads (format 2: no tags)
constexpr std::size_t header_bytes = 16;  // element count, hash of the records

// What the manifest says of one node file (and its header of itself, but the size).
struct file_facts {
  std::uint64_t size = 0, count = 0, hash = 0;
};

std::string file_name(std::size_t array, int node, const std::string& tag) {
  return "array-" + std::to_string(array) + ".node-" + std::to_string(node) + (tag.empty() ? "" : "." + tag);
}

std::string hex(std::uint64_t x) {
  char s[17];
  std::snprintf(s, sizeof s, "%016" PRIx64, x);
  return s;
}

[[noreturn]] void io_error(const std::string& what, const std::string& path) {
  throw squall::usage_error("libarrays: " + what + " " + path + ": " + std::strerror(errno));
}
[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throw squall::usage_error("libarrays: " + path + ": " + why);
}
// A usage_error's text without usage_error's own "squall: ", to be thrown again.
std::string reason(const squall::usage_error& e) {
  const std::string_view what = e.what(), prefix = "squall: ";
  return std::string(what.starts_with(prefix) ? what.substr(prefix.size()) : what);
}

// Written whole and on disk, or a usage_error with the first failure's reason (a full disk
// may show only at fsync or close).
void write_file(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_error("cannot write", path);
  int error = 0;
  for (std::size_t done = 0; done < bytes.size() && error == 0;) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      error = n == 0 ? ENOSPC : errno;  // no byte written: no room
    }
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    errno = error;
    io_error("cannot write", path);
  }
}

// The directory's entries (the names of files written or renamed in it) on disk.
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_error("cannot open the checkpoint directory", dir);
  const int error = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (error != 0 && error != EINVAL) {  // EINVAL: a file system that cannot sync a directory
    errno = error;
    io_error("cannot sync the checkpoint directory", dir);
  }
}

// A tag no earlier checkpoint's files are likely to have.
std::uint64_t new_tag() {
  std::random_device random;
  return (std::uint64_t{random()} << 32) ^ random() ^
         static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) io_error("cannot read", path);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

std::uint64_t word_at(std::string_view bytes, std::size_t at) {
  std::uint64_t w = 0;
  std::memcpy(&w, bytes.data() + at, sizeof w);
  return w;
}

// This node's file of one array: the header, then the records.
std::string node_file(array_state& a) {
  std::string file(header_bytes, '\0');
  const std::uint64_t count = a.pack_locals(file);
  const std::uint64_t hash = fnv1a(std::string_view(file).substr(header_bytes));
  std::memcpy(file.data(), &count, sizeof count);
  std::memcpy(file.data() + 8, &hash, sizeof hash);
  return file;
}

// The lines that must be the same in the writer's manifest and the reader's program's.
std::string array_lines(const runtime& r) {
  const std::vector<array_state*>& arrays = r.live;
  std::string m = "arrays " + std::to_string(arrays.size()) + "\n";
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    const element_ops& ops = arrays[a]->ops();
    m += std::to_string(a) + " " + std::string(ops.element_name) + " | " + std::string(ops.index_name) + "\n";
  }
  return m;
}

// files[a * writers + n] is node n's file of array a.
std::string manifest(const runtime& r, const std::vector<file_facts>& files, const std::string& tag) {
  std::string m = std::string(format_word) + " " + std::to_string(format_version) + "\nnodes " +
                  std::to_string(r.nodes) + "\n" + array_lines(r);
  const std::size_t live = r.live.size();
  for (std::size_t a = 0; a < live; ++a) {
    for (int n = 0; n < r.nodes; ++n) {
      const file_facts& f = files[a * static_cast<std::size_t>(r.nodes) + static_cast<std::size_t>(n)];
      m += file_name(a, n, tag) + " " + std::to_string(f.size) + " " + std::to_string(f.count) + " " + hex(f.hash) + "\n";
    }
  }
  return m + "hash " + hex(fnv1a(m)) + "\n";
}

// The manifest's format version, from its first line.
int check_version(const std::string& text, const std::string& path) {
  const std::string first = text.substr(0, text.find('\n'));
  int version = 0;
  char rest = 0;
  const std::string pattern = std::string(format_word) + " %d%c";
  if (std::sscanf(first.c_str(), pattern.c_str(), &version, &rest) != 1) {
    damaged(path, "not a checkpoint manifest (its first line is not \"" + std::string(format_word) + " <format>\")");
  }
  const std::string reads =
      "; this version reads formats " + std::to_string(oldest_format_version) + " to " + std::to_string(format_version) + ")";
  if (version < oldest_format_version) {
    damaged(path, "written by an older version of libarrays (checkpoint format " + std::to_string(version) + reads);
  }
  if (version > format_version) {
    damaged(path, "written by a newer version of libarrays (checkpoint format " + std::to_string(version) + reads);
  }
  return version;
}

// The node count of the checkpoint, what its manifest says of each file and the files' tag,
// once the manifest is known to be whole and to describe this program's arrays.
int read_manifest(const std::string& dir, const runtime& r, std::vector<file_facts>& files, std::string& tag) {
  const std::string path = dir + "/manifest";
  // Node 0 reads it for every node: the nodes parse the same text, so they agree on what it
  // says or on what is wrong with it, even where they see the directory differently (a file
  // system not shared, a manifest replaced while they read).
  std::string text, problem;
  if (r.me == 0) {
    try {
      text = read_file(path);
    } catch (const squall::usage_error& e) {
      problem = reason(e);
    }
  }
  agree_on_problem(r, problem);
  std::uint64_t size = text.size();
  squall::broadcast(size, 0);
  text.resize(size);
  squall::broadcast(std::span<char>(text.data(), text.size()), 0);
  const int version = check_version(text, path);
  // Its last line is the hash of the lines before it: any edit shows.
  const std::size_t last = text.rfind("hash ");
  if (last == std::string::npos || text.substr(last) != "hash " + hex(fnv1a(std::string_view(text).substr(0, last))) + "\n") {
    damaged(path, "checksum mismatch (the manifest was edited or damaged)");
  }
  std::istringstream in(text.substr(0, last));
  std::string line, word;
  std::getline(in, line);
  int nodes = 0;
  if (!(in >> word >> nodes) || word != "nodes" || nodes < 1) damaged(path, "no node count");
  in.ignore(1);
  std::string arrays;
  const std::size_t live = r.live.size();
  for (std::size_t a = 0; a <= live && std::getline(in, line); ++a) arrays += line + "\n";
  if (arrays != array_lines(r)) {
    throw squall::usage_error("libarrays: the checkpoint in " + dir +
                              " is of other arrays (their number, or element or index types, differ from this program's)");
  }
  files.assign(live * static_cast<std::size_t>(nodes), {});
  tag.clear();
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string name, hash;
    in >> name >> files[i].size >> files[i].count >> hash;
    const std::size_t array = i / static_cast<std::size_t>(nodes);
    const int node = static_cast<int>(i % static_cast<std::size_t>(nodes));
    // Format 3's names end in the tag, the same for every file: the first line's gives it.
    const std::string untagged = file_name(array, node, "");
    if (version >= 3 && i == 0 && name.starts_with(untagged + ".")) tag = name.substr(untagged.size() + 1);
    if (version >= 3 && tag.empty()) damaged(path, "no line for " + untagged + ".<tag>");
    const std::string expected = file_name(array, node, tag);
    if (!in || name != expected) damaged(path, "no line for " + expected);
    files[i].hash = std::strtoull(hash.c_str(), nullptr, 16);
  }
  if (in >> word) damaged(path, "more files than " + std::to_string(nodes) + " nodes wrote");
  return nodes;
}

// One record of a file read back.
struct record {
  key k;
  std::string_view packed;
  std::uint64_t offset = 0;
};

// The records of the node file `bytes`, once it matches what the manifest says of it (`facts`)
// and its own header.
std::vector<record> check_file(const std::string& path, std::string_view bytes, const file_facts& facts) {
  if (bytes.size() != facts.size) {
    damaged(path, std::to_string(bytes.size()) + " bytes, the manifest says " + std::to_string(facts.size));
  }
  if (bytes.size() < header_bytes) damaged(path, std::to_string(bytes.size()) + " bytes, too short for its header");
  const std::uint64_t count = word_at(bytes, 0), hash = word_at(bytes, 8);
  const std::uint64_t actual = fnv1a(bytes.substr(header_bytes));
  if (actual != hash) damaged(path, "checksum mismatch (its records hash to " + hex(actual) + ", its header says " + hex(hash) + ")");
  if (count != facts.count || hash != facts.hash) {
    damaged(path, "its header says " + std::to_string(count) + " elements hashing to " + hex(hash) + ", the manifest says " +
                      std::to_string(facts.count) + " hashing to " + hex(facts.hash));
  }
  std::vector<record> records;
  std::size_t at = header_bytes;
  // A record's length field, checked against the bytes after it before anything is read.
  const auto length = [&](std::size_t field_bytes, const char* what) {
    if (bytes.size() - at < field_bytes) {
      damaged(path, "it ends inside the " + std::string(what) + " length at byte " + std::to_string(at));
    }
    std::uint64_t n = 0;
    std::memcpy(&n, bytes.data() + at, field_bytes);
    at += field_bytes;
    if (n > bytes.size() - at) {
      damaged(path, "the " + std::string(what) + " length at byte " + std::to_string(at - field_bytes) + " says " +
                        std::to_string(n) + ", more than the " + std::to_string(bytes.size() - at) + " bytes after it");
    }
    return static_cast<std::size_t>(n);
  };
  while (at < bytes.size()) {
    record rec;
    rec.offset = at;
    const std::size_t key_size = length(4, "key");
    rec.k = key(std::string(bytes.substr(at, key_size)));
    at += key_size;
    const std::size_t packed_size = length(8, "element");
    rec.packed = bytes.substr(at, packed_size);
    at += packed_size;
    records.push_back(std::move(rec));
  }
  if (records.size() != count) {
    damaged(path, "holds " + std::to_string(records.size()) + " elements, its header says " + std::to_string(count));
  }
  return records;
}

// Once checkpoint `tag` is in place: the node files of older checkpoints (and of a failed
// one whose node was killed first). Node 0 removes every node's, each other node its own
// (where hosts do not share the directory, those are only on its host). Never another
// node's at another node: node 0 starts the next checkpoint, so only its removal is surely
// over before any node writes that checkpoint's files.
void remove_older_files(const runtime& r, const std::string& dir, const std::string& tag) {
  std::set<std::string> current;
  const std::size_t live = r.live.size();
  for (std::size_t a = 0; a < live; ++a) {
    for (int n = 0; n < r.nodes; ++n) current.insert(file_name(a, n, tag));
  }
  const std::string own = ".node-" + std::to_string(r.me);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t at = name.find(".node-");
    if (!name.starts_with("array-") || at == std::string::npos || current.contains(name)) continue;
    const bool owned = name.compare(at, own.size(), own) == 0 &&
                       (name.size() == at + own.size() || name[at + own.size()] == '.');
    if (r.me == 0 || owned) std::filesystem::remove(entry.path(), ec);
  }
}

}  // namespace

std::string checkpoint_file(const std::string& dir, std::size_t array, int node, const std::string& tag) {
  return dir + "/" + file_name(array, node, tag);
}

void note_restore_problem(std::uint32_t array, const message& m, const squall::usage_error& e) {
  runtime& r = rt();
  if (!r.restore_problem.empty()) return;
  const std::vector<array_state*>& arrays = r.live;
  const auto place = static_cast<std::size_t>(
      std::find_if(arrays.begin(), arrays.end(), [array](const array_state* a) { return a->id() == array; }) - arrays.begin());
  r.restore_problem = "libarrays: " + checkpoint_file(r.restore_dir, place, static_cast<int>(m.h.b), r.restore_tag) + ": the element at byte " +
                      std::to_string(m.h.a) + " does not unpack: " + reason(e);
}

std::uint64_t array_state::pack_locals(std::string& out) {
  std::uint64_t count = 0;
  std::string packed;
  table_.for_each([&](entry_rec& e) {
    if (!e.elem) return;
    packed.clear();
    try {
      ops_.pack(*e.elem, packed);
    } catch (const std::exception& x) {
      // As a usage_error, checkpoint() reports it on every node and removes its files: thrown
      // as it was, it left this node's checkpoint alone, and the others in a collective it
      // never reached ("collective mismatch", the job ended).
      throw squall::usage_error("libarrays: checkpoint: element " + index_text(e.k) + " of array " + std::to_string(id_) +
                                " does not pack on node " + std::to_string(rt().me) + " (its serialize() threw: " +
                                x.what() + ")");
    }
    const auto key_size = static_cast<std::uint32_t>(e.k.bytes().size());
    const auto packed_size = static_cast<std::uint64_t>(packed.size());
    out.append(reinterpret_cast<const char*>(&key_size), sizeof key_size);
    out.append(e.k.bytes());
    out.append(reinterpret_cast<const char*>(&packed_size), sizeof packed_size);
    out.append(packed);
    ++count;
  });
  return count;
}

}  // namespace squall::arrays::detail

namespace squall::arrays {

// A failure on any node (the directory, a node's file, the manifest) is thrown on every node
// and removes this checkpoint's files: the directory keeps the checkpoint it held, if any,
// whole and restartable (and otherwise holds no manifest).
void checkpoint(const std::string& dir) {
  detail::check_scheduler("checkpoint");
  quiesce();
  detail::runtime& r = detail::rt();
  const std::vector<detail::array_state*>& arrays = r.live;  // a file's array: its place here
  if (dir.empty()) throw squall::usage_error("libarrays: checkpoint(\"\"): the checkpoint directory's path is empty");
  std::string problem;
  {  // by every node: hosts without a shared file system each hold their own nodes' files
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) problem = "libarrays: cannot make the checkpoint directory " + dir + ": " + ec.message();
  }
  detail::agree_on_problem(r, problem);
  std::uint64_t tag_bits = r.me == 0 ? detail::new_tag() : 0;
  squall::broadcast(tag_bits, 0);
  const std::string tag = detail::hex(tag_bits);
  // This node's files of this checkpoint, removed again when it fails on any node.
  std::vector<std::string> written;
  const auto agree_or_undo = [&](const std::string& mine) {
    try {
      detail::agree_on_problem(r, mine);
    } catch (const squall::usage_error&) {
      for (const std::string& path : written) ::unlink(path.c_str());
      throw;
    }
  };
  // Every node's facts of its files, summed into every slot of the table (each has one writer).
  std::vector<std::uint64_t> table(arrays.size() * static_cast<std::size_t>(r.nodes) * 3, 0);
  try {
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      const std::string file = detail::node_file(*arrays[a]);
      written.push_back(detail::checkpoint_file(dir, a, r.me, tag));
      detail::write_file(written.back(), file);
      std::uint64_t* facts = &table[(a * static_cast<std::size_t>(r.nodes) + static_cast<std::size_t>(r.me)) * 3];
      facts[0] = file.size();
      facts[1] = detail::word_at(file, 0);
      facts[2] = detail::word_at(file, 8);
    }
    detail::sync_directory(dir);  // the new files' names, before a manifest names them
  } catch (const squall::usage_error& e) {
    problem = detail::reason(e);
  }
  agree_or_undo(problem);  // every file is complete, and on disk
  squall::allreduce(std::span<const std::uint64_t>(table), std::span<std::uint64_t>(table));
  bool renamed = false;  // node 0's manifest now names this checkpoint
  if (r.me == 0) {
    std::vector<detail::file_facts> files(table.size() / 3);
    for (std::size_t i = 0; i < files.size(); ++i) files[i] = {table[3 * i], table[3 * i + 1], table[3 * i + 2]};
    const std::string manifest = dir + "/manifest", next = dir + "/manifest.new";
    try {
      detail::write_file(next, detail::manifest(r, files, tag));
      // Once renamed, the manifest names this checkpoint's files: a failure after it (the
      // directory's sync) is reported, but must not remove them.
      if (::rename(next.c_str(), manifest.c_str()) != 0) detail::io_error("cannot rename " + next + " to", manifest);
      renamed = true;
      detail::sync_directory(dir);
    } catch (const squall::usage_error& e) {
      problem = detail::reason(e);
      ::unlink(next.c_str());
    }
  }
  const auto renamed_at_node0 = static_cast<std::uint64_t>(renamed);
  if (squall::allreduce(renamed_at_node0, squall::op::max{}) != 0) {
    detail::agree_on_problem(r, problem);
  } else {
    agree_or_undo(problem);
  }
  detail::remove_older_files(r, dir, tag);
}

void restart(const std::string& dir) {
  detail::check_scheduler("restart");
  quiesce();
  detail::runtime& r = detail::rt();
  const std::vector<detail::array_state*>& arrays = r.live;  // a file's array: its place here
  // Into arrays that hold elements, an element restored at its home beside one that moved
  // away from it would be a second element at one index.
  std::vector<std::uint64_t> held(arrays.size(), 0);
  for (std::size_t a = 0; a < held.size(); ++a) held[a] = arrays[a]->local_count();
  squall::allreduce(std::span<const std::uint64_t>(held), std::span<std::uint64_t>(held));
  for (std::size_t a = 0; a < held.size(); ++a) {
    if (held[a] != 0) {
      throw squall::usage_error("libarrays: restart(\"" + dir + "\") into array " + std::to_string(arrays[a]->id()) + ", which holds " +
                                std::to_string(held[a]) +
                                " elements: restart fills arrays as a new job creates them, empty (destroy their elements first)");
    }
  }
  std::vector<detail::file_facts> files;
  std::string tag;
  const int writers = detail::read_manifest(dir, r, files, tag);  // the same on every node
  // This node's files, each checked whole before any element is sent anywhere.
  struct file {
    std::size_t array;
    int writer;
    std::string bytes;
    std::vector<detail::record> records;
  };
  std::vector<file> mine;
  std::string problem;
  try {
    for (std::size_t a = 0; a < arrays.size(); ++a) {
      for (int w = r.me; w < writers; w += r.nodes) {
        const std::string path = detail::checkpoint_file(dir, a, w, tag);
        file& f = mine.emplace_back(file{a, w, detail::read_file(path), {}});
        f.records = detail::check_file(path, f.bytes, files[a * static_cast<std::size_t>(writers) + static_cast<std::size_t>(w)]);
      }
    }
  } catch (const squall::usage_error& e) {
    problem = detail::reason(e);
  }
  detail::agree_on_problem(r, problem);
  r.restore_dir = dir;
  r.restore_tag = tag;
  r.restore_problem.clear();
  for (const file& f : mine) {
    for (const detail::record& rec : f.records) arrays[f.array]->restore(rec.k, rec.packed, f.writer, rec.offset);
  }
  quiesce();
  // An element that did not unpack at its home (a record whose bytes hash right, but that
  // this program's serialize() reads otherwise).
  problem = std::exchange(r.restore_problem, {});
  detail::agree_on_problem(r, problem);
}

}  // namespace squall::arrays
