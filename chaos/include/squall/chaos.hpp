// SPDX-License-Identifier: BSD-3-Clause
// CHAOS: the inspector/executor library for irregular message-passing codes (the message-
// passing side of the comparison with TSM and XSM). Everything here runs on the active
// messages and bulk transfer of the substrate; nothing uses shared segments, and the arrays
// given to the executor must not lie in one (it packs them into outgoing packets directly,
// with the message layer's lock held, where a fault cannot be served).
//
// The model. A distributed array of `global_size` elements is spread over the nodes: each
// node owns some global indices, stored in its local array in the order it lists them,
// followed by a ghost area that holds copies of elements owned elsewhere. A translation
// table maps a global index to its owner and local offset. The inspector reads a loop's
// indirection arrays (global indices), and builds a schedule: which elements each pair of
// nodes exchanges. It rewrites the indirection arrays to local offsets (owned elements
// first, then ghosts). The executor then moves data with one message per communicating
// pair: gather fills ghosts from owners, scatter / scatter_op write or combine ghosts back.
//
// Every call marked "collective" must be made by every node, in the same order.
//
// Errors. The collective set-up calls (tables, the inspector, merge, remap plans,
// owned_after, rcb, rib, graph_partition, cut_edges, scatter_append) agree on their input:
// bad input on any node is a usage_error on every node, and the nodes stay in step. The
// executor (gather, scatter, scatter_op, remap_plan::apply) checks its input on the calling
// node only, to keep a collective off every execution: a usage_error there leaves the other
// nodes waiting in the call, and the job ends as out of step (README.md, CHAOS).
#pragma once
#include <squall/chaos/exchange.hpp>
#include <squall/chaos/partition.hpp>
#include <squall/chaos/remap.hpp>
#include <squall/chaos/schedule.hpp>
#include <squall/chaos/translation_table.hpp>
#include <squall/chaos/types.hpp>
