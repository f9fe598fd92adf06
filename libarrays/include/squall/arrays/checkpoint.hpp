// SPDX-License-Identifier: BSD-3-Clause
// Checkpoint and restart: every array's elements written to disk at a quiescent point, and
// read back by a job of any number of nodes, each element inserted at its home there. An
// element's state is what its serialize() packs, so it comes back bit for bit.
//
//   arrays::checkpoint("ckpt");   // collective
//   ... a new job, perhaps on another number of nodes, creates the same arrays in the same
//   order, then:
//   arrays::restart("ckpt");      // collective
#pragma once
#include <string>

namespace squall::arrays {

// Collective: quiesces, then each node writes its elements of every array to `dir` (made if
// missing; node 0 writes a manifest of the arrays, the node count and each file's name, size,
// element count and checksum). The files are new ones, and the manifest replaces the one
// `dir` held by a rename once they are all on disk, so a crash or a full disk at any point
// leaves `dir`'s earlier checkpoint whole; once it is replaced, its files are removed. Throws
// squall::usage_error, on every node and naming the path and the system's reason, when the
// directory cannot be made or any node's file or the manifest cannot be written whole, or
// naming the element when its serialize() throws; the failed checkpoint's files are then
// removed and `dir` holds what it held before.
void checkpoint(const std::string& dir);

// Collective, once the program has created the same arrays, in the same order, as the job
// that wrote `dir`: reads every element and inserts it at its home in this job, then
// quiesces. The arrays must be empty (as a new job creates them): restart into an array that
// holds elements throws squall::usage_error on every node, naming the array, and restores
// nothing. Throws squall::usage_error, on every node and naming the file, when `dir` holds
// no checkpoint, one of other arrays (another element or index type), one written by another
// version of libarrays, or a damaged one (a file of another size or checksum than the
// manifest says, a length past the end of its file, an edited manifest); such a checkpoint is
// found out before any element is inserted. An element whose bytes are whole but do not
// unpack (its type's serialize() changed since the checkpoint) is reported the same way, with
// its file and offset, once the other elements are in.
void restart(const std::string& dir);

}  // namespace squall::arrays
