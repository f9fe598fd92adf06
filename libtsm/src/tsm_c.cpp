// SPDX-License-Identifier: BSD-3-Clause
// The C API: each call catches what the C++ one throws and turns it into -1 or NULL with a
// message in tsm_last_error(). A call before squall_init or after squall_finalize names
// itself (tsm_barrier), not the C++ call it makes.
#include <squall/tsm.h>

#include <exception>
#include <span>
#include <string>

#include <squall/collectives.hpp>
#include <squall/runtime.hpp>
#include <squall/tsm.hpp>

namespace {

thread_local std::string last_error;

template <class F>
int guarded(const char* api, F&& f) {
  try {
    squall::detail::require_running(api);
    f();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return -1;
  }
}

template <class T>
int allreduce_c(T* value, int op, const char* api) {
  if (value == nullptr || (op != TSM_SUM && op != TSM_MIN && op != TSM_MAX)) {
    last_error = std::string("squall: ") + api + ": no value (NULL) or an unknown op";
    return -1;
  }
  return guarded(api, [&] {
    switch (op) {
      case TSM_SUM: *value = squall::tsm::allreduce(*value, squall::op::sum{}); break;
      case TSM_MIN: *value = squall::tsm::allreduce(*value, squall::op::min{}); break;
      case TSM_MAX: *value = squall::tsm::allreduce(*value, squall::op::max{}); break;
    }
  });
}

}  // namespace

struct tsm_locks {
  explicit tsm_locks(std::size_t count) : locks(count) {}
  squall::tsm::lock_array locks;
};

extern "C" {

int tsm_init(void) { return guarded("tsm_init", [] { squall::tsm::init(); }); }

void* tsm_malloc(size_t bytes) {
  void* p = nullptr;
  return guarded("tsm_malloc", [&] { p = squall::tsm::malloc(bytes); }) == 0 ? p : nullptr;
}

int tsm_free(void* p) {
  if (p == nullptr) return 0;  // as free(NULL), whether the runtime runs or not
  return guarded("tsm_free", [&] { squall::tsm::heap_free(p); });
}

tsm_locks* tsm_locks_create(size_t count) {
  tsm_locks* l = nullptr;
  return guarded("tsm_locks_create", [&] { l = new tsm_locks(count); }) == 0 ? l : nullptr;
}

int tsm_locks_destroy(tsm_locks* locks) {
  // After squall_finalize, as the C++ destructor: this node's part goes, nothing else is left.
  if (locks != nullptr && !squall::initialized()) {
    delete locks;
    return 0;
  }
  return guarded("tsm_locks_destroy", [&] { delete locks; });
}

int tsm_lock_acquire(tsm_locks* locks, size_t i) {
  if (locks == nullptr) {
    last_error = "squall: tsm_lock_acquire: no lock array (NULL)";
    return -1;
  }
  return guarded("tsm_lock_acquire", [&] { locks->locks.acquire(i); });
}

int tsm_lock_release(tsm_locks* locks, size_t i) {
  if (locks == nullptr) {
    last_error = "squall: tsm_lock_release: no lock array (NULL)";
    return -1;
  }
  return guarded("tsm_lock_release", [&] { locks->locks.release(i); });
}

int tsm_barrier(void) { return guarded("tsm_barrier", [] { squall::tsm::barrier(); }); }

int tsm_fetch(const void* address, size_t bytes) {
  return guarded("tsm_fetch", [&] {
    const squall::tsm::byte_range range{address, bytes};
    squall::tsm::fetch(std::span<const squall::tsm::byte_range>(&range, 1));
  });
}


int tsm_allreduce_double(double* value, int op) { return allreduce_c(value, op, "tsm_allreduce_double"); }
int tsm_allreduce_long(long* value, int op) { return allreduce_c(value, op, "tsm_allreduce_long"); }

int tsm_node(void) {
  int n = -1;
  return guarded("tsm_node", [&] { n = squall::node(); }) == 0 ? n : -1;
}

int tsm_nodes(void) {
  int n = -1;
  return guarded("tsm_nodes", [&] { n = squall::nodes(); }) == 0 ? n : -1;
}

const char* tsm_last_error(void) { return last_error.c_str(); }

}  // extern "C"
