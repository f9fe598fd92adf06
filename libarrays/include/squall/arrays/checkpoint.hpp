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
// missing; node 0 writes a manifest of the arrays and the node count). Throws
// squall::usage_error when a file cannot be written.
void checkpoint(const std::string& dir);

// Collective, once the program has created the same arrays, in the same order, as the job
// that wrote `dir`: reads every element and inserts it at its home in this job, then
// quiesces. Throws squall::usage_error when `dir` holds no checkpoint, or one of other arrays
// (another element or index type).
void restart(const std::string& dir);

}  // namespace squall::arrays
