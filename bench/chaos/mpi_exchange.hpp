// SPDX-License-Identifier: BSD-3-Clause
// The message-passing reference: the edge loop's exchange written directly with MPI, as a
// hand-parallelised code would. The lists are computed once (a hand-written inspector with
// the whole owner map at hand); gather and scatter-add then run either as one MPI_Alltoallv
// or as MPI_Irecv/MPI_Isend to the neighbours only.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "exchange_input.hpp"

namespace squall::bench::chaos_exchange {

class mpi_exchange {
 public:
  // Collective over comm. `owner` gives every mesh node's rank; each of `ends` holds global
  // node names the loop reads, and is rewritten to local offsets: an owned node by its offset
  // (owned() order, ascending names), any other by its ghost slot (>= local_size()). Ghost
  // slots are grouped by owner rank, so each peer's values arrive into one contiguous run.
  mpi_exchange(MPI_Comm comm, std::span<const std::int32_t> owner,
               std::initializer_list<std::span<std::int64_t>> ends);
  mpi_exchange(const mpi_exchange&) = delete;
  mpi_exchange& operator=(const mpi_exchange&) = delete;
  ~mpi_exchange();

  std::span<const std::int64_t> owned() const { return owned_; }
  std::int64_t local_size() const { return static_cast<std::int64_t>(owned_.size()); }
  std::int64_t ghost_end() const { return local_size() + ghosts_; }
  std::int64_t ghosts() const { return ghosts_; }
  int peers_sent_to() const { return static_cast<int>(peers_to_.size()); }

  // `data` holds ghost_end() elements: owned, then ghosts.
  void gather_alltoallv(node_values* data);
  void gather_neighbours(node_values* data);
  // Ghosts are added into their owners, peers in rank order (as chaos::scatter_op does).
  void scatter_add_alltoallv(node_values* data);
  void scatter_add_neighbours(node_values* data);

 private:
  void pack(const node_values* data, int peer);
  void add_received(node_values* data);

  MPI_Comm comm_;
  MPI_Datatype element_;  // one node_values
  std::vector<std::int64_t> owned_;
  std::int64_t ghosts_ = 0;
  // Per rank, in elements: what it reads of ours (offsets into send_list_) and what we read of
  // its (offsets from our first ghost slot).
  std::vector<int> send_count_, send_displ_, recv_count_, recv_displ_;
  std::vector<std::int64_t> send_list_;  // local offsets of the owned elements each peer reads
  std::vector<int> peers_to_, peers_from_;
  std::vector<node_values> buffer_;  // packed outgoing values (gather) or incoming ones (scatter)
  std::vector<MPI_Request> requests_;
};

}  // namespace squall::bench::chaos_exchange
