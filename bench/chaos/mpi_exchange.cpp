// SPDX-License-Identifier: BSD-3-Clause
#include "mpi_exchange.hpp"

#include <algorithm>
#include <stdexcept>

namespace squall::bench::chaos_exchange {
namespace {

constexpr int kGatherTag = 1, kScatterTag = 2;

int comm_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int comm_size(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displ(counts.size(), 0);
  for (std::size_t p = 1; p < counts.size(); ++p) displ[p] = displ[p - 1] + counts[p - 1];
  return displ;
}

}  // namespace

mpi_exchange::mpi_exchange(MPI_Comm comm, std::span<const std::int32_t> owner,
                           std::initializer_list<std::span<std::int64_t>> ends)
    : comm_(comm) {
  const int me = comm_rank(comm), n = comm_size(comm);
  MPI_Type_contiguous(static_cast<int>(sizeof(node_values) / sizeof(double)), MPI_DOUBLE, &element_);
  MPI_Type_commit(&element_);

  // Owned nodes in ascending name order, and where each name lives here (-1: not yet).
  std::vector<std::int64_t> slot(owner.size(), -1);
  for (std::size_t g = 0; g < owner.size(); ++g) {
    if (owner[g] == me) {
      slot[g] = static_cast<std::int64_t>(owned_.size());
      owned_.push_back(static_cast<std::int64_t>(g));
    }
  }

  // Every off-rank name read, once, grouped by owner (then by name).
  std::vector<std::int64_t> wanted;
  for (auto list : ends) {
    for (std::int64_t g : list) {
      if (g < 0 || static_cast<std::size_t>(g) >= owner.size()) throw std::out_of_range("mpi_exchange: bad node name");
      if (owner[static_cast<std::size_t>(g)] != me) wanted.push_back(g);
    }
  }
  std::sort(wanted.begin(), wanted.end(), [&](std::int64_t a, std::int64_t b) {
    const auto oa = owner[static_cast<std::size_t>(a)], ob = owner[static_cast<std::size_t>(b)];
    return oa != ob ? oa < ob : a < b;
  });
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  ghosts_ = static_cast<std::int64_t>(wanted.size());
  recv_count_.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    slot[static_cast<std::size_t>(wanted[i])] = local_size() + static_cast<std::int64_t>(i);
    ++recv_count_[static_cast<std::size_t>(owner[static_cast<std::size_t>(wanted[i])])];
  }
  recv_displ_ = displacements(recv_count_);
  for (auto list : ends) {
    for (std::int64_t& g : list) g = slot[static_cast<std::size_t>(g)];
  }

  // Tell each owner which of its nodes we read; what we are asked becomes the send lists.
  send_count_.assign(static_cast<std::size_t>(n), 0);
  MPI_Alltoall(recv_count_.data(), 1, MPI_INT, send_count_.data(), 1, MPI_INT, comm);
  send_displ_ = displacements(send_count_);
  send_list_.resize(static_cast<std::size_t>(send_displ_.back() + send_count_.back()));
  MPI_Alltoallv(wanted.data(), recv_count_.data(), recv_displ_.data(), MPI_INT64_T, send_list_.data(),
                send_count_.data(), send_displ_.data(), MPI_INT64_T, comm);
  for (std::int64_t& g : send_list_) g = slot[static_cast<std::size_t>(g)];

  for (int p = 0; p < n; ++p) {
    if (send_count_[static_cast<std::size_t>(p)] > 0) peers_to_.push_back(p);
    if (recv_count_[static_cast<std::size_t>(p)] > 0) peers_from_.push_back(p);
  }
  buffer_.resize(send_list_.size());
  requests_.resize(peers_to_.size() + peers_from_.size());
}

mpi_exchange::~mpi_exchange() { MPI_Type_free(&element_); }

void mpi_exchange::pack(const node_values* data, int peer) {
  const auto p = static_cast<std::size_t>(peer);
  const auto first = static_cast<std::size_t>(send_displ_[p]), last = first + static_cast<std::size_t>(send_count_[p]);
  for (std::size_t i = first; i < last; ++i) buffer_[i] = data[send_list_[i]];
}

void mpi_exchange::add_received(node_values* data) {
  // buffer_ holds each peer's ghosts in rank order, in the order of its send list.
  for (std::size_t i = 0; i < send_list_.size(); ++i) {
    node_values& v = data[send_list_[i]];
    v = v + buffer_[i];
  }
}

void mpi_exchange::gather_alltoallv(node_values* data) {
  for (int p : peers_to_) pack(data, p);
  MPI_Alltoallv(buffer_.data(), send_count_.data(), send_displ_.data(), element_, data + local_size(),
                recv_count_.data(), recv_displ_.data(), element_, comm_);
}

void mpi_exchange::gather_neighbours(node_values* data) {
  std::size_t r = 0;
  for (int p : peers_from_) {
    MPI_Irecv(data + local_size() + recv_displ_[static_cast<std::size_t>(p)], recv_count_[static_cast<std::size_t>(p)],
              element_, p, kGatherTag, comm_, &requests_[r++]);
  }
  for (int p : peers_to_) {
    pack(data, p);
    MPI_Isend(buffer_.data() + send_displ_[static_cast<std::size_t>(p)], send_count_[static_cast<std::size_t>(p)],
              element_, p, kGatherTag, comm_, &requests_[r++]);
  }
  MPI_Waitall(static_cast<int>(r), requests_.data(), MPI_STATUSES_IGNORE);
}

void mpi_exchange::scatter_add_alltoallv(node_values* data) {
  MPI_Alltoallv(data + local_size(), recv_count_.data(), recv_displ_.data(), element_, buffer_.data(),
                send_count_.data(), send_displ_.data(), element_, comm_);
  add_received(data);
}

void mpi_exchange::scatter_add_neighbours(node_values* data) {
  std::size_t r = 0;
  for (int p : peers_to_) {
    MPI_Irecv(buffer_.data() + send_displ_[static_cast<std::size_t>(p)], send_count_[static_cast<std::size_t>(p)],
              element_, p, kScatterTag, comm_, &requests_[r++]);
  }
  for (int p : peers_from_) {
    MPI_Isend(data + local_size() + recv_displ_[static_cast<std::size_t>(p)], recv_count_[static_cast<std::size_t>(p)],
              element_, p, kScatterTag, comm_, &requests_[r++]);
  }
  MPI_Waitall(static_cast<int>(r), requests_.data(), MPI_STATUSES_IGNORE);
  add_received(data);
}

}  // namespace squall::bench::chaos_exchange
