// SPDX-License-Identifier: BSD-3-Clause
/* C API of the Squall substrate. Functions returning int give 0 on success and -1 on
 * misuse; squall_last_error() then names the cause: the calling thread's last error, a
 * string valid until that thread's next failing call. */
#ifndef SQUALL_H
#define SQUALL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int squall_init(int* argc, char*** argv);
int squall_finalize(void);
int squall_node(void);
int squall_nodes(void);
const char* squall_last_error(void);

/* A C active-message handler: args and payload are valid only during the call. */
typedef void (*squall_am_handler)(int source, const void* args, size_t args_len,
                                  const void* payload, size_t payload_len);

/* Registers a handler under a name (every node registers the same names, before or after
 * init); returns its id, the same on every node, or 0 (squall_last_error() says why) for a
 * name starting with "squall." (reserved for the runtime's own handlers), a name registered
 * already with another function, or one whose id another name has. */
uint32_t squall_am_register(const char* name, squall_am_handler fn);
int squall_am_send(int dest, uint32_t handler, const void* args, size_t args_len,
                   const void* payload, size_t payload_len);
int squall_am_flush(void);
int squall_am_poll(void);
/* Polls until pred(ctx) returns non-zero: pred runs with the node's handlers excluded, so it
 * may read what handlers write; once it returned non-zero it is not called again. */
int squall_am_wait_until(int (*pred)(void* ctx), void* ctx);
int squall_am_set_aggregation(unsigned messages_per_packet);
/* The largest payload squall_am_send takes, in bytes; 0 outside init..finalize. */
size_t squall_am_max_payload(void);

int squall_barrier(void);
int squall_fence(void);
int squall_broadcast(void* data, size_t bytes, int root);

typedef enum { SQUALL_SUM, SQUALL_MIN, SQUALL_MAX } squall_op;
int squall_allreduce_double(const double* in, double* out, size_t count, squall_op op);
int squall_allreduce_int64(const int64_t* in, int64_t* out, size_t count, squall_op op);

/* A named counter's value on this node (0 if never counted, or if name is NULL), e.g. "am.packets_sent". */
uint64_t squall_stat(const char* name);

#ifdef __cplusplus
}
#endif
#endif
