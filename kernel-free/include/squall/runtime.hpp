// SPDX-License-Identifier: BSD-3-Clause
// Runtime start-up and node identity.
//
// Every node (process) of a job runs the same program (SPMD). Under `squallrun -n N`
// the nodes are numbered 0..N-1; a program started without the launcher is one node.
#pragma once

namespace squall {

// Starts the runtime on this node. Collective: every node of the job calls it.
// argc/argv may be null; they are accepted for symmetry with MPI_Init.
void init(int* argc = nullptr, char*** argv = nullptr);

// Waits for every node to reach finalize (a barrier), prints the statistics report
// when SQUALL_STATS=1, and stops the runtime. Collective. Standard output is flushed
// first: if it cannot be written, the node says why and exits with status 1.
void finalize();

bool initialized();  // true between init and finalize
int node();          // this node's id, 0..nodes()-1
int nodes();         // number of nodes in the job
// Processors this node may use: its share of the ones the job may use on its host (those it
// is bound to, when bound), at least 1. With more nodes on the host than processors, 1.
int processors();
// Seconds a wait on another node's program lasts before it says what it waits for
// (SQUALL_WAIT_NOTICE_S, read once at init; 0: never): for a layer's own waits to say so alike.
int wait_notice_seconds();

namespace detail {
// usage_error "<api> called before squall::init" (or "after squall::finalize") unless the
// runtime runs: the layers above check once at their own entry points, so that the message
// names the call the program made, not the runtime call it reached first.
void require_running(const char* api);
}  // namespace detail

// RAII form: init in the constructor, finalize in the destructor.
class runtime {
 public:
  runtime(int* argc = nullptr, char*** argv = nullptr) { init(argc, argv); }
  ~runtime() { finalize(); }
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

}  // namespace squall
