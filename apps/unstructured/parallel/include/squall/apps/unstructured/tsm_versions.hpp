// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The TSM versions of unstructured (paper section 5.1, Table 2): the same computation on stache
// shared arrays, each step one optimisation more. One executable per step (unstructured_tsm_<step>).
namespace squall::apps::unstructured {

enum class TsmStep {
  initial,     // block parts of the scrambled names, edges and faces in blocks, locks on external nodes
  partition1,  // RCB parts, edges and faces by the paper's rule, locks on external nodes
  partition2,  // as partition1, each part ordered by a second RCB into block-sized runs
  padding,     // as partition2, each part's names grouped by the parts that update them, each
               // group and each part on blocks of its own
  reduction,   // as partition2 (compact): private contributions, pipelined global reduction, no locks
};

// main() of unstructured_tsm_<step>: starts the runtime, runs, reports (node 0).
int tsm_main(int argc, char** argv, TsmStep step);

}  // namespace squall::apps::unstructured
