// SPDX-License-Identifier: BSD-3-Clause
// The C API: thin wrappers that turn usage errors into -1 and a message.
#include <squall/squall.h>

#include <cstring>
#include <string>

#include <squall/squall.hpp>

#include "am/registry.hpp"

namespace {

thread_local std::string last_error;

template <class F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
}

// Dispatches a message to a C handler (the registry passes the function as ctx).
void dispatch_c(squall::am::token& t, const void* ctx, const std::byte* args, std::size_t args_len,
                squall::am::payload data, std::uint32_t) {
  auto fn = reinterpret_cast<squall_am_handler>(const_cast<void*>(ctx));
  fn(t.source(), args, args_len, data.data(), data.size());
}

// A pointer that must not be null when `bytes` of it are to be used.
void require_pointer(const void* p, std::size_t bytes, const char* api, const char* what) {
  if (p == nullptr && bytes != 0) throw squall::usage_error(std::string(api) + ": " + what + " is null");
}

template <class T>
int allreduce_c(const T* in, T* out, size_t count, squall_op op) {
  return guarded([&] {
    require_pointer(in, count, "squall_allreduce", "in");
    require_pointer(out, count, "squall_allreduce", "out");
    std::span<const T> i(in, count);
    std::span<T> o(out, count);
    switch (op) {
      case SQUALL_SUM: squall::allreduce(i, o, squall::op::sum{}); break;
      case SQUALL_MIN: squall::allreduce(i, o, squall::op::min{}); break;
      case SQUALL_MAX: squall::allreduce(i, o, squall::op::max{}); break;
      default: throw squall::usage_error("squall_allreduce: unknown operator");
    }
  });
}

}  // namespace

extern "C" {

int squall_init(int* argc, char*** argv) { return guarded([&] { squall::init(argc, argv); }); }
int squall_finalize(void) { return guarded([] { squall::finalize(); }); }
const char* squall_last_error(void) { return last_error.c_str(); }

int squall_node(void) {
  int n = -1;
  return guarded([&] { n = squall::node(); }) == 0 ? n : -1;
}

int squall_nodes(void) {
  int n = -1;
  return guarded([&] { n = squall::nodes(); }) == 0 ? n : -1;
}

uint32_t squall_am_register(const char* name, squall_am_handler fn) {
  if (name == nullptr || fn == nullptr) {
    last_error = "squall: squall_am_register: name and function must not be null";
    return 0;
  }
  std::string why;
  const squall::am::handler_entry* h = squall::am::try_register_handler(
      name, &dispatch_c, reinterpret_cast<const void*>(fn), squall::am::detail::handler_role::message, why);
  if (h == nullptr) {
    last_error = "squall: squall_am_register: " + why;
    return 0;
  }
  return h->id;
}

int squall_am_send(int dest, uint32_t handler, const void* args, size_t args_len,
                   const void* payload, size_t payload_len) {
  return guarded([&] {
    require_pointer(args, args_len, "squall_am_send", "args");
    require_pointer(payload, payload_len, "squall_am_send", "payload");
    const squall::am::handler_entry* h = squall::am::find_handler(handler);
    if (h == nullptr) {
      throw squall::usage_error("squall_am_send: handler id " + std::to_string(handler) +
                                " is not registered (squall_am_register)");
    }
    if (args_len > squall::am::detail::max_args_bytes) {
      throw squall::usage_error("squall_am_send: arguments exceed 1 KiB; send them as a payload");
    }
    if (const std::size_t most = squall::am::max_payload(); payload_len > most) {  // in C words
      throw squall::usage_error("squall_am_send: a payload of " + std::to_string(payload_len) +
                                " bytes exceeds squall_am_max_payload() (" + std::to_string(most) +
                                " bytes); send it in parts");
    }
    alignas(8) unsigned char padded[squall::am::detail::max_args_bytes + 8] = {};
    if (args_len != 0) std::memcpy(padded, args, args_len);
    squall::am::detail::send_raw(dest, h, padded, args_len,
                                 squall::am::payload(static_cast<const std::byte*>(payload), payload_len), 0);
  });
}

int squall_am_flush(void) { return guarded([] { squall::am::flush(); }); }
int squall_am_poll(void) { return guarded([] { squall::am::poll(); }); }
int squall_am_wait_until(int (*pred)(void*), void* ctx) {
  return guarded([&] {
    require_pointer(reinterpret_cast<const void*>(pred), 1, "squall_am_wait_until", "the predicate");
    squall::am::wait_until([&] { return pred(ctx) != 0; });
  });
}
int squall_am_set_aggregation(unsigned k) { return guarded([&] { squall::am::set_aggregation(k); }); }

size_t squall_am_max_payload(void) {
  size_t n = 0;
  guarded([&] { n = squall::am::max_payload(); });
  return n;
}

int squall_barrier(void) { return guarded([] { squall::barrier(); }); }
int squall_fence(void) { return guarded([] { squall::fence(); }); }
int squall_broadcast(void* data, size_t bytes, int root) {
  return guarded([&] {
    require_pointer(data, bytes, "squall_broadcast", "data");
    squall::detail::broadcast_bytes(data, bytes, root);
  });
}
int squall_allreduce_double(const double* in, double* out, size_t count, squall_op op) {
  return allreduce_c(in, out, count, op);
}
int squall_allreduce_int64(const int64_t* in, int64_t* out, size_t count, squall_op op) {
  return allreduce_c(in, out, count, op);
}

uint64_t squall_stat(const char* name) {
  if (name == nullptr) {
    last_error = "squall: squall_stat: name is null";
    return 0;
  }
  return squall::stats::take().get(name);
}

}  // extern "C"
