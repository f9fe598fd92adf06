// SPDX-License-Identifier: BSD-3-Clause
// unstructured_xsm_block_update: unstructured's residuals reduced under libxsm's direct-reduction,
// its node values shared under block-update (the blocks each node read in the first iteration pushed to it).
#include <squall/squall.hpp>

#include "squall/apps/unstructured/xsm_flow.hpp"

namespace {

constexpr const char* kUsage =
    "usage: squallrun -n N unstructured_xsm_block_update [--nodes N] [--iterations I] [--seed S] [--parts P]\n"
    "           [--block-size B] [--json]\n"
    "  the options of unstructured_seq (--parts: the blocks of the block_cut_pct it reports) and\n"
    "  the shared arrays' block size (a power of two, at least 4096; default 4096)\n";

int run(squall::apps::Options& options) {
  return squall::apps::unstructured::run_xsm_version(options, "xsm_block_update",
                                                     squall::apps::unstructured::ValueSharing::block_update);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return squall::apps::run_program(argc, argv, "unstructured_xsm_block_update", kUsage, run);
}
