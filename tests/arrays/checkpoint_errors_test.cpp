// SPDX-License-Identifier: BSD-3-Clause
// A damaged checkpoint, on every node of the job (squallrun -n 1..8): each test writes a good
// checkpoint and empties the array (as a new job finds it), node 0 damages the checkpoint as a
// crash, a full disk or an editor would, and restart() must throw squall::usage_error on every
// node, naming the file and what is wrong, without a hang or a large allocation, and (when
// the damage shows before any element is sent) insert nothing. Restarting a good checkpoint on another node count is
// arrays_checkpoint_test's. A checkpoint() that fails (a directory it cannot make, a node's
// file it cannot write) must fail on every node, and leave the checkpoint the directory held
// whole, or no manifest when it held none.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <squall/arrays.hpp>
#include <squall/collectives.hpp>
#include <squall/runtime.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hang.hpp"
#include "state_hash.hpp"

namespace arrays = squall::arrays;
namespace fs = std::filesystem;

namespace {

constexpr int per_node = 4;       // elements each node holds
constexpr std::size_t values = 4;  // doubles in each element's vector

// When set while checkpointing, elements pack a vector length of 2^27 (1 GiB of doubles) and
// no doubles: records whose bytes hash right but do not unpack, as when a program's
// serialize() changed between the job that wrote a checkpoint and the one reading it.
bool lie = false;
constexpr std::uint64_t lie_length = std::uint64_t{1} << 27;

// When set, an element's serialize() throws while it packs (on the node that sets it).
bool refuse_to_pack = false;

std::uint64_t sum_seen = 0;
void got(const std::uint64_t& s) { sum_seen = s; }
int count_seen = 0;
void counted(const int& n) { count_seen = n; }

struct Blob : arrays::element<arrays::index1d> {
  std::vector<double> state;
  std::string name;
  void start() {
    const int i = this_index()[0];
    state.assign(values, 0.25 + i);
    name = "blob-" + std::to_string(1000 + i);  // every record the same size
  }
  void sum() {
    contribute(arrays_test::state_hash(name, state), arrays::sum<std::uint64_t>(), arrays::on_every_node<&got>());
  }
  void count() { contribute(1, arrays::sum<int>(), arrays::on_every_node<&counted>()); }
  void bump() { state[0] += 1; }
  void move_on() { migrate_me((squall::node() + 1) % squall::nodes()); }
  template <class A>
  void serialize(A& ar) {
    if constexpr (A::is_saving::value) {
      if (refuse_to_pack) throw std::runtime_error("no packing today");
      if (lie) {
        ar(lie_length, name);
        return;
      }
    }
    ar(state, name);
  }
};

int elements() { return per_node * squall::nodes(); }

// Element i's home is node i % nodes: each node holds per_node elements, after a restart too.
arrays::array<Blob>& blobs() {
  static arrays::array<Blob> a = arrays::array<Blob>::create(
      arrays::user_home([](const arrays::key& k, int nodes) { return arrays::index_of<arrays::index1d>(k)[0] % nodes; }));
  return a;
}

// Makes every element, once per job.
void fill() {
  (void)blobs();  // created on every node
  if (squall::node() == 0) {
    for (int i = 0; i < elements(); ++i) blobs()[i].insert();
  }
  arrays::quiesce();
  if (squall::node() == 0) blobs().broadcast<&Blob::start>();
  arrays::quiesce();
}

std::uint64_t array_sum() {
  sum_seen = 0;
  if (squall::node() == 0) blobs().broadcast<&Blob::sum>();
  arrays::quiesce();
  return sum_seen;
}

int array_count() {
  count_seen = 0;
  if (squall::node() == 0) blobs().broadcast<&Blob::count>();
  arrays::quiesce();
  return count_seen;
}

// Deletes every element: the array as a new job that restarts sees it.
void empty_array() {
  if (squall::node() == 0) {
    for (int i = 0; i < elements(); ++i) blobs()[i].destroy();
  }
  arrays::quiesce();
}

// One directory per job, named by node 0's pid, under the system's temporary directory.
std::string job_dir() {
  int pid = squall::node() == 0 ? static_cast<int>(getpid()) : 0;
  squall::broadcast(pid);
  return (fs::temp_directory_path() / ("squall-checkpoint-errors-" + std::to_string(pid))).string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}
void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A record's size: key length, key, packed length, packed element.
std::size_t record_bytes() {
  Blob b;
  b.state.assign(values, 0.0);
  b.name = "blob-1000";
  std::string packed;
  arrays::detail::ops_of<Blob>::pack(b, packed);
  return 4 + arrays::key_of(arrays::index1d{0}).bytes().size() + 8 + packed.size();
}

std::uint64_t peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss);
}

class CheckpointErrors : public testing::Test {
 protected:
  static void SetUpTestSuite() { fill(); }
  static void TearDownTestSuite() {
    const std::string dir = job_dir();
    squall::barrier();
    if (squall::node() == 0) fs::remove_all(dir);
  }
  // A checkpoint in dir_, a copy of it in dir_.good, and the array emptied.
  void SetUp() override {
    dir_ = job_dir() + "/" + testing::UnitTest::GetInstance()->current_test_info()->name();
    before_ = array_sum();
    arrays::checkpoint(dir_);
    if (squall::node() == 0) fs::copy(dir_, dir_ + ".good", fs::copy_options::recursive);
    empty_array();
  }
  // The array as it was, from the good copy, for the next test.
  void TearDown() override {
    if (array_count() != 0) empty_array();
    arrays::restart(dir_ + ".good");
    EXPECT_EQ(array_sum(), before_);
    squall::barrier();
    if (squall::node() == 0) {
      fs::remove_all(dir_);
      fs::remove_all(dir_ + ".good");
    }
  }
  // The last node's file of the array: the one a restart on fewer nodes reads with another.
  std::string last_file() const { return node_file(dir_, squall::nodes() - 1); }
  // Node `n`'s file of the array in `dir` (its name ends in the checkpoint's tag).
  static std::string node_file(const std::string& dir, int n) {
    const std::string prefix = "array-0.node-" + std::to_string(n) + ".";
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().starts_with(prefix)) return entry.path().string();
    }
    ADD_FAILURE() << "no " << prefix << "<tag> in " << dir;
    return dir + "/" + prefix;
  }
  // The names in `dir`, sorted.
  static std::vector<std::string> names_in(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // Checkpoints to `dir` with the last node's files limited to `limit` bytes (RLIMIT_FSIZE:
  // its write fails with EFBIG, as on a full disk, part of the file written); returns what
  // checkpoint() threw on this node.
  static std::string checkpoint_with_last_node_limited(const std::string& dir, rlim_t limit) {
    const bool last = squall::node() == squall::nodes() - 1;
    rlimit was{};
    getrlimit(RLIMIT_FSIZE, &was);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    if (last) {
      rlimit small = was;
      small.rlim_cur = limit;
      setrlimit(RLIMIT_FSIZE, &small);
    }
    std::string what;
    try {
      arrays::checkpoint(dir);
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    if (last) setrlimit(RLIMIT_FSIZE, &was);
    std::signal(SIGXFSZ, old_handler);
    return what;
  }
  // Node 0 changes the checkpoint with `damage` (once every node has looked at it); every
  // node then restarts from it and must get a usage_error (returned) that names `named`, with
  // no large allocation. A node that waits instead (for others in a collective, as when only
  // the node that reads the damage throws) is ended by the watchdog, saying so.
  template <class F>
  std::string restart_error(const std::string& named, F&& damage) {
    squall::barrier();
    if (squall::node() == 0) damage();
    squall::barrier();
    const std::uint64_t rss = peak_rss_kib();
    std::string what;
    {
      const squall::test::hang_watchdog watch("restart from a damaged checkpoint");
      try {
        arrays::restart(dir_);
        ADD_FAILURE() << "restart from a damaged checkpoint returned";
      } catch (const squall::usage_error& e) {
        what = e.what();
      }
    }
    EXPECT_LT(peak_rss_kib() - rss, std::uint64_t{64} << 10) << "KiB more at the peak";
    EXPECT_NE(what.find(named), std::string::npos) << what;
    return what;
  }
  // Nothing was restored: the array is still empty.
  void expect_nothing_restored() { EXPECT_EQ(array_count(), 0); }

  // Every node checkpoints the whole array to `dir` and must catch a usage_error containing
  // `expected`, and no manifest may be written. Before, only the failing node threw and the
  // others stopped at a mismatched collective.
  void expect_checkpoint_error(const std::string& dir, const std::string& expected) {
    arrays::restart(dir_ + ".good");
    int caught = 0;
    try {
      arrays::checkpoint(dir);
      ADD_FAILURE() << "checkpoint to " << dir << " returned";
    } catch (const squall::usage_error& e) {
      caught = 1;
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_EQ(squall::allreduce(caught, squall::op::sum{}), squall::nodes());
    squall::barrier();
    EXPECT_FALSE(fs::exists(dir + "/manifest"));
    empty_array();
  }
  // The same, with `name` in a new checkpoint directory /dev/full: its write fails, as on a
  // full disk.
  void expect_full_disk_at(const std::string& name) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    const std::string dir = dir_ + ".full";
    if (squall::node() == 0) {
      fs::create_directories(dir);
      fs::create_symlink("/dev/full", dir + "/" + name);
    }
    squall::barrier();
    expect_checkpoint_error(dir, "libarrays: cannot write " + dir + "/" + name + ": " + std::strerror(ENOSPC));
    squall::barrier();
    if (squall::node() == 0) fs::remove_all(dir);
  }

  std::string dir_;
  std::uint64_t before_ = 0;
};

// The control: the checkpoint the other tests damage restores whole when it is not damaged.
TEST_F(CheckpointErrors, AGoodCheckpointRestoresEveryElement) {
  EXPECT_EQ(array_count(), 0);
  arrays::restart(dir_);
  EXPECT_EQ(array_count(), elements());
  EXPECT_EQ(array_sum(), before_);
}

TEST_F(CheckpointErrors, AFileTruncatedAtARecordBoundaryIsRefused) {
  const std::string file = last_file();
  const std::size_t size = fs::file_size(file);
  const std::string what = restart_error(file, [&] { fs::resize_file(file, size - record_bytes()); });
  EXPECT_NE(what.find(file + ": " + std::to_string(size - record_bytes()) + " bytes, the manifest says " + std::to_string(size)),
            std::string::npos)
      << what;
  expect_nothing_restored();
}

TEST_F(CheckpointErrors, AnEmptyFileIsRefused) {
  const std::string file = last_file();
  const std::size_t size = fs::file_size(file);
  const std::string what = restart_error(file, [&] { fs::resize_file(file, 0); });
  EXPECT_NE(what.find(file + ": 0 bytes, the manifest says " + std::to_string(size)), std::string::npos) << what;
  expect_nothing_restored();
}

TEST_F(CheckpointErrors, AManifestEditedToAnotherNodeCountIsRefused) {
  const std::string manifest = dir_ + "/manifest";
  const std::string what = restart_error(manifest, [&] {
    std::string text = read_all(manifest);
    const std::string was = "\nnodes " + std::to_string(squall::nodes()) + "\n";
    const std::string now = "\nnodes " + std::to_string(squall::nodes() > 1 ? squall::nodes() - 1 : 2) + "\n";
    text.replace(text.find(was), was.size(), now);
    write_all(manifest, text);
  });
  EXPECT_NE(what.find(manifest + ": checksum mismatch"), std::string::npos) << what;
  expect_nothing_restored();
}

TEST_F(CheckpointErrors, AFlippedByteInARecordIsRefused) {
  const std::string file = last_file();
  const std::string what = restart_error(file, [&] {
    std::string bytes = read_all(file);
    bytes[bytes.size() - record_bytes() / 2] ^= 0x10;  // inside the last record's doubles
    write_all(file, bytes);
  });
  EXPECT_NE(what.find(file + ": checksum mismatch"), std::string::npos) << what;
  expect_nothing_restored();
}

// The probe's: a record claiming 2^27 doubles made a node allocate 1 GiB before failing.
TEST_F(CheckpointErrors, AHugeVectorLengthIsRefusedWithoutAllocatingIt) {
  const std::string file = last_file();
  const std::string what = restart_error(file, [&] {
    std::string bytes = read_all(file);
    const std::size_t length_at = bytes.size() - record_bytes() + 4 + 4 + 8;  // the last record's vector's
    std::memcpy(bytes.data() + length_at, &lie_length, sizeof lie_length);
    write_all(file, bytes);
  });
  EXPECT_NE(what.find(file + ": checksum mismatch"), std::string::npos) << what;
  expect_nothing_restored();
}

TEST_F(CheckpointErrors, AnOlderFormatsManifestIsRefused) {
  const std::string manifest = dir_ + "/manifest";
  const std::string what = restart_error(manifest, [&] {
    // Format 1's manifest: the format line, the node count and the arrays' types, no more.
    std::istringstream in(read_all(manifest));
    std::string line, old = "squall-arrays-checkpoint 1\n";
    std::getline(in, line);
    for (int i = 0; i < 3 && std::getline(in, line); ++i) old += line + "\n";
    write_all(manifest, old);
  });
  EXPECT_NE(what.find(manifest + ": written by an older version of libarrays (checkpoint format 1"), std::string::npos) << what;
  expect_nothing_restored();
}

TEST_F(CheckpointErrors, AGarbageManifestIsRefused) {
  const std::string manifest = dir_ + "/manifest";
  const std::string what = restart_error(manifest, [&] { write_all(manifest, std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10)); });
  EXPECT_NE(what.find(manifest + ": not a checkpoint manifest"), std::string::npos) << what;
  expect_nothing_restored();
}

// Node 0 cannot make the directory: a path under a regular file (ENOTDIR, even for root).
TEST_F(CheckpointErrors, ADirectoryThatCannotBeMadeFailsOnEveryNode) {
  const std::string dir = dir_ + "/manifest/ck";
  expect_checkpoint_error(dir, "libarrays: cannot make the checkpoint directory " + dir + ": Not a directory");
}

// An empty path is named as such (std::filesystem said only "Invalid argument").
TEST_F(CheckpointErrors, AnEmptyPathIsRefused) {
  expect_checkpoint_error("", "libarrays: checkpoint(\"\"): the checkpoint directory's path is empty");
}

// The last node's file fails after node 0's is written: every node says so, no manifest is
// written, and no node's file of the failed checkpoint is left.
TEST_F(CheckpointErrors, ANodeFileThatCannotBeWrittenFailsOnEveryNode) {
  arrays::restart(dir_ + ".good");
  const std::string dir = dir_ + ".limited";
  const std::string what = checkpoint_with_last_node_limited(dir, 20);
  const std::string expected = "libarrays: cannot write " + dir + "/array-0.node-" + std::to_string(squall::nodes() - 1) + ".";
  EXPECT_NE(what.find(expected), std::string::npos) << what;
  EXPECT_NE(what.find(std::strerror(EFBIG)), std::string::npos) << what;
  squall::barrier();
  EXPECT_EQ(names_in(dir), std::vector<std::string>{});
  squall::barrier();
  if (squall::node() == 0) fs::remove_all(dir);
  empty_array();
}

// Every node's file is written, node 0's manifest is not.
TEST_F(CheckpointErrors, AManifestThatCannotBeWrittenFailsOnEveryNode) { expect_full_disk_at("manifest.new"); }

// The probe's: a second checkpoint to the same directory wrote over the first one's files
// before its manifest, so a second checkpoint that failed (a full disk, a node killed) left
// neither: the first one's manifest over a truncated file. It must leave the first whole.
TEST_F(CheckpointErrors, AFailedCheckpointKeepsTheOneItsDirectoryHeld) {
  arrays::restart(dir_ + ".good");
  if (squall::node() == 0) blobs().broadcast<&Blob::bump>();  // another state than dir_'s
  arrays::quiesce();
  const std::uint64_t bumped = array_sum();
  EXPECT_NE(bumped, before_);
  const std::vector<std::string> held = names_in(dir_);
  const std::string what = checkpoint_with_last_node_limited(dir_, 20);
  EXPECT_NE(what.find(std::strerror(EFBIG)), std::string::npos) << what;
  squall::barrier();
  EXPECT_EQ(names_in(dir_), held);  // the failed checkpoint's files are gone
  empty_array();
  arrays::restart(dir_);
  EXPECT_EQ(array_count(), elements());
  EXPECT_EQ(array_sum(), before_);
  // A checkpoint that succeeds then replaces it, and leaves only its own files.
  if (squall::node() == 0) blobs().broadcast<&Blob::bump>();
  arrays::quiesce();
  arrays::checkpoint(dir_);
  squall::barrier();
  const std::vector<std::string> now = names_in(dir_);
  EXPECT_EQ(now.size(), held.size());
  for (const std::string& name : now) EXPECT_EQ(std::count(held.begin(), held.end(), name), name == "manifest" ? 1 : 0) << name;
  empty_array();
  arrays::restart(dir_);
  EXPECT_EQ(array_sum(), bumped);
  empty_array();
}

// The probe's: what an element's serialize() threw while node K packed it left checkpoint()
// on node K alone; the other nodes went on into its next collective and the job ended with
// "collective mismatch", the failed checkpoint's files left behind. It fails on every node,
// naming the element, and the directory keeps the checkpoint it held.
TEST_F(CheckpointErrors, AnElementThatDoesNotPackFailsTheCheckpointOnEveryNode) {
  arrays::restart(dir_ + ".good");
  const std::vector<std::string> held = names_in(dir_);
  const int odd = squall::nodes() - 1;
  refuse_to_pack = squall::node() == odd;
  std::string what;
  try {
    arrays::checkpoint(dir_);
  } catch (const squall::usage_error& e) {
    what = e.what();
  }
  refuse_to_pack = false;
  EXPECT_NE(what.find("libarrays: checkpoint: element ("), std::string::npos) << what;
  EXPECT_NE(what.find("of array 0 does not pack on node " + std::to_string(odd) + " (its serialize() threw: no packing today)"),
            std::string::npos)
      << what;
  squall::barrier();
  EXPECT_EQ(names_in(dir_), held);  // the failed checkpoint's files are gone
  empty_array();
  arrays::restart(dir_);
  EXPECT_EQ(array_count(), elements());
  EXPECT_EQ(array_sum(), before_);
  empty_array();
}

// The elements are inserted before the one that does not unpack is found at its home.
TEST_F(CheckpointErrors, ARecordThatDoesNotUnpackIsRefusedWithItsFileAndOffset) {
  squall::barrier();
  arrays::restart(dir_ + ".good");
  lie = true;
  arrays::checkpoint(dir_);  // over the fixture's: every record lies, and hashes right
  lie = false;
  empty_array();
  const std::string what = restart_error(dir_ + "/array-0.node-", [] {});
  EXPECT_NE(what.find(" does not unpack: "), std::string::npos) << what;
  EXPECT_NE(what.find(": the element at byte "), std::string::npos) << what;
  EXPECT_NE(what.find("the length at byte 0 says 134217728 items of 8 bytes"), std::string::npos) << what;
}

// The probe's: restart() into an array whose elements had moved away from their homes
// restored a second element at each of their indices (twice the elements, silently); into
// one whose elements were at home, it failed in a handler with "an element already exists
// at this index on this node". It must be refused on every node before anything is restored.
TEST_F(CheckpointErrors, ARestartIntoAnArrayThatHoldsElementsIsRefused) {
  arrays::restart(dir_ + ".good");
  for (const bool moved : {false, true}) {
    if (moved && squall::nodes() > 1) {
      if (squall::node() == 0) blobs().broadcast<&Blob::move_on>();  // every element off its home
      arrays::quiesce();
    }
    std::string what;
    try {
      arrays::restart(dir_);
      ADD_FAILURE() << "restart into an array of " << elements() << " elements returned";
    } catch (const squall::usage_error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("libarrays: restart(\"" + dir_ + "\") into array 0, which holds " + std::to_string(elements()) + " elements"),
              std::string::npos)
        << what;
    EXPECT_EQ(array_count(), elements());
    EXPECT_EQ(array_sum(), before_);
  }
  empty_array();
}

// Hosts without a shared file system: one relative path names a directory of each node's
// own (each node's working directory differs here). Only node 0 used to make the directory,
// so the other nodes could not write their files, and only node 0 removed older files. Now
// every node makes it and, after a second checkpoint, holds only its files of that one (node
// 0 the manifest too); a restart reads them back.
TEST_F(CheckpointErrors, EachNodesOwnDirectoryHoldsItsLatestFiles) {
  arrays::restart(dir_ + ".good");
  const fs::path disk = fs::path(job_dir()) / ("disk-of-node-" + std::to_string(squall::node()));
  fs::create_directories(disk);
  const fs::path was = fs::current_path();
  fs::current_path(disk);
  arrays::checkpoint("local");
  if (squall::node() == 0) blobs().broadcast<&Blob::bump>();
  arrays::quiesce();
  const std::uint64_t bumped = array_sum();
  arrays::checkpoint("local");
  squall::barrier();
  std::vector<std::string> expected{"array-0.node-" + std::to_string(squall::node())};
  if (squall::node() == 0) expected.push_back("manifest");
  std::vector<std::string> held = names_in("local");
  for (std::string& name : held) {
    if (name.starts_with("array-")) name = name.substr(0, name.rfind('.'));  // the tag
  }
  EXPECT_EQ(held, expected);
  empty_array();
  arrays::restart("local");
  EXPECT_EQ(array_count(), elements());
  EXPECT_EQ(array_sum(), bumped);
  fs::current_path(was);
  empty_array();
}

}  // namespace
