// SPDX-License-Identifier: BSD-3-Clause
/* Transparent shared memory from C (see squall/tsm.hpp for the model). Start the runtime
 * with squall_init first. Calls return 0 (or a pointer) on success and -1 (or NULL) on
 * error, with the reason in tsm_last_error(); a call before squall_init or after
 * squall_finalize says so, naming itself ("tsm_barrier called before squall::init"). */
#ifndef SQUALL_TSM_H
#define SQUALL_TSM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

int tsm_init(void);                    /* collective: makes the shared heap */
void* tsm_malloc(size_t bytes);        /* any node, any time after tsm_init */
int tsm_free(void* p);                 /* memory tsm_malloc returned; NULL: nothing, returns 0 */

typedef struct tsm_locks tsm_locks;
tsm_locks* tsm_locks_create(size_t count);  /* collective; lock i lives at node i % nodes */
int tsm_locks_destroy(tsm_locks* locks);    /* collective; after squall_finalize frees this node's part, returns 0 */
int tsm_lock_acquire(tsm_locks* locks, size_t i);
int tsm_lock_release(tsm_locks* locks, size_t i);

int tsm_barrier(void);  /* collective */

/* Fetching ahead (tsm::fetch): asks at once for a read copy of every block of
 * [address, address + bytes) that this node cannot read, and returns when all have arrived.
 * A hint: the reads that follow are ordinary ones. -1 for a range outside TSM memory. */
int tsm_fetch(const void* address, size_t bytes);

/* Collective: every node's value combined, the same result everywhere (ordered like
 * tsm_barrier). Returns 0, or -1 for an unknown op. */
enum { TSM_SUM, TSM_MIN, TSM_MAX };
int tsm_allreduce_double(double* value, int op);
int tsm_allreduce_long(long* value, int op);
int tsm_node(void);     /* this node's id, or -1 before squall_init */
int tsm_nodes(void);    /* the number of nodes, or -1 before squall_init */

const char* tsm_last_error(void);  /* why the last failing call of this thread failed */

#ifdef __cplusplus
}
#endif

#endif
