// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The XSM versions of unstructured (section 5.1.3): node values and residuals in shared
// memory, renamed so that each node's RCB part is whole blocks homed on it (BlockRenaming).
// The residuals (and, once, the node weights) are reduced under libxsm's direct-reduction;
// the node values reach the nodes that read them under `sharing`.
#include "squall/apps/options.hpp"

namespace squall::apps::unstructured {

enum class ValueSharing {
  stache,        // TSM's protocol: readers miss on the blocks of values they read
  block_update,  // xsm::block_update: readers recorded in the first iteration, blocks pushed
  node_update,   // xsm::node_update: the values each node reads, declared once, pushed
};

// The whole program: options, run, check and report. Returns the exit status.
int run_xsm_version(Options& command_line, const char* version, ValueSharing sharing);

}  // namespace squall::apps::unstructured
