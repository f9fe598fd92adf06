// SPDX-License-Identifier: BSD-3-Clause
// unstructured_xsm_direct_reduction: unstructured's residuals reduced under libxsm's direct-reduction,
// its node values shared under TSM's stache (readers miss on the blocks they read).
#include <squall/squall.hpp>

#include "squall/apps/unstructured/xsm_flow.hpp"

namespace {

constexpr const char* kUsage =
    "usage: squallrun -n N unstructured_xsm_direct_reduction [--nodes N] [--iterations I] [--seed S] [--parts P]\n"
    "           [--block-size B] [--json]\n"
    "  the options of unstructured_seq (--parts: the blocks of the block_cut_pct it reports) and\n"
    "  the shared arrays' block size (a power of two, at least 4096; default 4096)\n";

int run(squall::apps::Options& options) {
  return squall::apps::unstructured::run_xsm_version(options, "xsm_direct_reduction",
                                                     squall::apps::unstructured::ValueSharing::stache);
}

}  // namespace

int main(int argc, char** argv) {
  squall::runtime runtime(&argc, &argv);
  return squall::apps::run_program(argc, argv, "unstructured_xsm_direct_reduction", kUsage, run);
}
