// SPDX-License-Identifier: BSD-3-Clause
// Starting under a cluster's launcher (Open MPI's mpirun, or any PMIx launcher such as
// Slurm's srun --mpi=pmix) with no squallrun: the launcher's PMIx server tells each node its
// id, the node count and which nodes share its host; the nodes on one host share a job area
// in a named shared-memory file that the host's first node creates; and the nodes exchange
// what TCP needs (the job's secret, made by node 0, and every node's endpoint) through the
// launcher's key-value store.
#pragma once
#include <string>
#include <vector>

#include "transport/shm/job_area.hpp"
#include "transport/tcp/secret.hpp"
#include "transport/tcp/socket_io.hpp"

namespace squall::boot {

// Whether this process was started by a PMIx launcher (PMIX_RANK and PMIX_NAMESPACE set).
bool under_pmix();

class pmix_job {
 public:
  explicit pmix_job(std::size_t ring_bytes);  // PMIx_Init and the shared job area; fatal on failure
  ~pmix_job() { finalize(); }
  // Tells the launcher this node ended properly (at squall::finalize; else it reports an
  // abnormal termination).
  void finalize();
  pmix_job(const pmix_job&) = delete;
  pmix_job& operator=(const pmix_job&) = delete;

  int me() const { return me_; }
  int nodes() const { return n_; }
  const std::vector<bool>& on_this_host() const { return local_; }
  shm::job_area take_job_area() { return std::move(job_); }

  // Collective over the job: node 0's secret, handed to everyone by the launcher.
  tcp::job_secret agree_on_secret();
  // Collective: publishes this node's endpoint and returns every node's.
  std::vector<tcp::endpoint> exchange_endpoints(const tcp::endpoint& mine);

 private:
  void fence();  // every node, with the data put before it collected
  std::string get_string(int node, const char* key);

  bool finalized_ = false;
  int me_ = 0, n_ = 1;
  std::string nspace_;
  std::vector<bool> local_;
  shm::job_area job_;
  std::string area_name_;  // the job area's name in /dev/shm while this node must remove it
};

}  // namespace squall::boot
