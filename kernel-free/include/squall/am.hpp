// SPDX-License-Identifier: BSD-3-Clause
// Active messages.
//
// A handler is an ordinary function whose first parameter is `am::token&`, followed by
// small trivially copyable arguments and, optionally, a trailing `am::payload`:
//
//   void on_add(squall::am::token& t, int key, double value);
//   void on_block(squall::am::token& t, std::uint64_t offset, squall::am::payload bytes);
//   double on_get(squall::am::token& t, int key);            // used with am::call
//
//   squall::am::send<on_add>(dest, 7, 1.5);
//   squall::am::send<on_block>(dest, off, squall::am::payload{buf, n});
//   double v = squall::am::call<on_get>(dest, 7);
//
// Handlers need no registration call: naming one in send/call/reply/bulk_send registers
// it, in every node, before main runs. Its id is a hash of its qualified name, so it is
// the same on every node of one binary. Any name will do: the runtime's own handlers are
// registered under names of their own ("squall.<what>", a form C++ names never take).
//
// Semantics: messages from one node to another are handled in the order sent; handlers
// of one node run one at a time (never concurrently, never nested); a handler must not
// wait (call, wait_until, collectives) - it may send and reply. Small sends to one
// destination are packed into one packet (the aggregation factor, SQUALL_AGGREGATION);
// a packet leaves when it holds that many messages, on flush(), when this node waits for
// anything, and at the latest about a millisecond later (the progress thread).
#pragma once
#include <squall/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace squall::am {

using payload = std::span<const std::byte>;
using handler_id = std::uint32_t;

template <class T>
payload as_payload(const T* data, std::size_t count) {
  return payload(reinterpret_cast<const std::byte*>(data), count * sizeof(T));
}

class token;
struct handler_entry;  // a registered handler (opaque outside the library)

namespace detail {

// ctx is the pointer given at registration (the C API's handler function).
using dispatch_fn = void (*)(token&, const void* ctx, const std::byte* args, std::size_t args_len,
                             payload, std::uint32_t reply_slot);

// What fence() does with a handler's messages: it waits for every message of a program's
// or a library's handlers (libtsm's protocol messages included); the runtime's own plumbing
// (the collectives fence itself runs on, bulk fragments, am::call replies) is not counted.
enum class handler_role : std::uint8_t { message, runtime };

// Names starting with "squall." are reserved for handlers of the runtime role.
const handler_entry* register_handler(std::string_view name, dispatch_fn fn, const void* ctx = nullptr,
                                      handler_role role = handler_role::message);
handler_id id_of(const handler_entry* h);
// `args` must be readable up to padded_args(args_len) bytes.
void send_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len, payload data,
              std::uint32_t reply_slot);
std::uint32_t open_reply_slot(void* result, std::size_t size);
void wait_reply(std::uint32_t slot);
void send_reply(int dest, std::uint32_t slot, const void* result, std::size_t size);
void wait_until(bool (*pred)(void*), void* ctx);
void wait_until_noticed(bool (*pred)(void*), void* ctx, std::string (*describe)(void*), void* describe_ctx);
// A callable's address as the void* context of the calls above, const or not; the caller's
// trampoline casts it back to the callable's own type.
template <class T>
void* context_of(T& callable) {
  return const_cast<void*>(static_cast<const void*>(std::addressof(callable)));
}

// The qualified name of the function F, taken from the compiler's signature string.
template <auto F>
constexpr std::string_view handler_name() {
  std::string_view s = __PRETTY_FUNCTION__;
  const auto start = s.find("F = ") + 4;
  const auto end = s.find_first_of(";]", start);
  s = s.substr(start, end - start);
  if (!s.empty() && s.front() == '&') s.remove_prefix(1);
  return s;
}

template <class... T>
struct type_list {};

// Splits a handler's parameter list into its message arguments and whether a payload follows.
template <class F>
struct handler_traits;

template <class R, class... A>
struct handler_traits<R (*)(token&, A...)> {
  using result = R;
  static constexpr bool has_payload = [] {
    if constexpr (sizeof...(A) == 0) {
      return false;
    } else {
      return std::is_same_v<std::decay_t<decltype(std::get<sizeof...(A) - 1>(
                                std::declval<std::tuple<A...>>()))>,
                            payload>;
    }
  }();
  static constexpr std::size_t arg_count = sizeof...(A) - (has_payload ? 1 : 0);
  template <std::size_t... I>
  static auto args_tuple(std::index_sequence<I...>)
      -> std::tuple<std::decay_t<std::tuple_element_t<I, std::tuple<A...>>>...>;
  using args = decltype(args_tuple(std::make_index_sequence<arg_count>{}));
};

template <class Tuple>
constexpr std::size_t packed_size() {
  return std::apply([](auto... x) { return (std::size_t{0} + ... + sizeof(x)); }, Tuple{});
}

template <class Tuple, class... A>
void pack(std::byte* out, A&&... a) {
  static_assert(std::tuple_size_v<Tuple> == sizeof...(A),
                "squall::am: wrong number of arguments for this handler");
  Tuple t{std::forward<A>(a)...};
  std::apply([&](const auto&... x) { ((std::memcpy(out, &x, sizeof(x)), out += sizeof(x)), ...); },
             t);
}

template <class Tuple>
Tuple unpack(const std::byte* in) {
  Tuple t;
  std::apply([&](auto&... x) { ((std::memcpy(&x, in, sizeof(x)), in += sizeof(x)), ...); }, t);
  return t;
}

template <class Tuple>
constexpr bool all_trivially_copyable() {
  return std::apply([](auto... x) { return (true && ... && std::is_trivially_copyable_v<decltype(x)>); },
                    Tuple{});
}

constexpr std::size_t max_args_bytes = 1024;
// Argument buffers handed to send_raw are readable up to the next multiple of 8 bytes.
constexpr std::size_t padded_args(std::size_t n) { return n == 0 ? 8 : (n + 7) / 8 * 8; }

template <auto F>
void dispatch(token& t, const void* ctx, const std::byte* args, std::size_t args_len, payload data,
              std::uint32_t reply_slot);

// The name a handler is registered under: its own, unless the sender names it otherwise
// (send_named).
template <auto F>
struct named_after {
  static constexpr std::string_view name() { return handler_name<F>(); }
};

template <auto F, class Name = named_after<F>>
struct registration {
  static inline const handler_entry* const entry = register_handler(Name::name(), &dispatch<F>);
};
template <auto F>
struct checked_handler {
  using traits = handler_traits<decltype(F)>;
  using args = typename traits::args;
  static_assert(all_trivially_copyable<args>(),
                "squall::am: handler arguments must be trivially copyable (send data as a payload)");
  static_assert(packed_size<args>() <= max_args_bytes,
                "squall::am: handler arguments exceed 1 KiB; send them as a payload");
  static_assert(std::is_void_v<typename traits::result> ||
                    std::is_trivially_copyable_v<typename traits::result>,
                "squall::am: a handler's result must be trivially copyable");
};

template <auto F, class Name = named_after<F>, class... A>
void send_with_slot(int dest, std::uint32_t slot, A&&... a) {
  using H = checked_handler<F>;
  constexpr std::size_t n = packed_size<typename H::args>();
  alignas(8) std::byte buf[padded_args(n)]{};
  if constexpr (H::traits::has_payload) {
    // The last argument is the payload.
    auto all = std::forward_as_tuple(std::forward<A>(a)...);
    constexpr std::size_t k = sizeof...(A) - 1;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      pack<typename H::args>(buf, std::get<I>(all)...);
    }(std::make_index_sequence<k>{});
    send_raw(dest, registration<F, Name>::entry, buf, n, payload(std::get<k>(all)), slot);
  } else {
    pack<typename H::args>(buf, std::forward<A>(a)...);
    send_raw(dest, registration<F, Name>::entry, buf, n, payload{}, slot);
  }
}

struct bulk_state;

}  // namespace detail

// What a handler knows about the message it runs for.
class token {
 public:
  explicit token(int source) : source_(source) {}
  int source() const { return source_; }

  // Sends a message back to the node this one came from.
  template <auto F, class... A>
  void reply(A&&... a) {
    detail::send_with_slot<F>(source_, 0, std::forward<A>(a)...);
  }

 private:
  int source_;
};

// Sends an active message to `dest` (may be this node). Arguments are copied; a payload's
// bytes are copied before send returns. A payload in a shared segment (squall/memory.hpp)
// must lie within one segment: its blocks are made readable through the segment's protocol
// first, as a program read would, and the bytes are then copied from the protocol view.
// Throws usage_error for a bad node or a payload larger than max_payload().
template <auto F, class... A>
void send(int dest, A&&... args) {
  detail::send_with_slot<F>(dest, 0, std::forward<A>(args)...);
}

// Like send(), with F registered under Name::name() (a static constexpr function returning
// a string_view) instead of F's own name: for a library whose handlers are generated
// wrappers (libtsm's protocol messages), named in statistics after the function they wrap.
template <auto F, class Name, class... A>
void send_named(int dest, A&&... args) {
  detail::send_with_slot<F, Name>(dest, 0, std::forward<A>(args)...);
}

namespace detail {
void send_written_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len,
                      std::size_t size, void (*write)(void* ctx, std::byte* out), void* ctx);
}

// Like send(), for a payload that would otherwise be packed into a buffer first: its `size`
// bytes are written by write(std::byte* out) straight into the outgoing packet or, for a
// large payload, the transport's buffer, saving a copy. F's last parameter must be
// am::payload; `args` are the others. `write` runs once, before send_written returns, with
// the node lock held: like a handler it must not send or wait, and it must read only private
// memory (not an application view of a shared segment).
template <auto F, class Write, class... A>
void send_written(int dest, std::size_t size, Write&& write, A&&... args) {
  using H = detail::checked_handler<F>;
  static_assert(H::traits::has_payload, "squall::am::send_written: the handler takes no payload");
  constexpr std::size_t n = detail::packed_size<typename H::args>();
  alignas(8) std::byte buf[detail::padded_args(n)]{};
  detail::pack<typename H::args>(buf, std::forward<A>(args)...);
  using W = std::remove_reference_t<Write>;
  detail::send_written_raw(
      dest, detail::registration<F>::entry, buf, n, size,
      [](void* w, std::byte* out) { (*static_cast<W*>(w))(out); },
      const_cast<void*>(static_cast<const void*>(std::addressof(write))));
}

// Runs F on `dest` and returns its result (ARMI's sync_rmi). Polls while waiting.
template <auto F, class... A>
auto call(int dest, A&&... args) {
  using R = typename detail::handler_traits<decltype(F)>::result;
  if constexpr (std::is_void_v<R>) {
    const auto slot = detail::open_reply_slot(nullptr, 0);
    detail::send_with_slot<F>(dest, slot, std::forward<A>(args)...);
    detail::wait_reply(slot);
  } else {
    R result{};
    const auto slot = detail::open_reply_slot(&result, sizeof(R));
    detail::send_with_slot<F>(dest, slot, std::forward<A>(args)...);
    detail::wait_reply(slot);
    return result;
  }
}

// Completion of a bulk transfer. Local completion: the source buffer may be reused.
// Remote completion: the destination's handler has run. Destroying a handle waits for
// local completion, so the source buffer is never read after it may have been freed.
class bulk_handle {
 public:
  bulk_handle() = default;
  explicit bulk_handle(std::shared_ptr<detail::bulk_state> s) : state_(std::move(s)) {}
  bulk_handle(bulk_handle&&) noexcept = default;
  bulk_handle& operator=(bulk_handle&& o) noexcept {
    if (this != &o) {
      if (state_) wait_local();
      state_ = std::move(o.state_);
    }
    return *this;
  }
  ~bulk_handle() {
    if (state_) wait_local();
  }
  bool local_done() const;
  bool remote_done() const;
  void wait_local();
  void wait_remote();

 private:
  std::shared_ptr<detail::bulk_state> state_;
};

namespace detail {
bulk_handle bulk_send_raw(int dest, const handler_entry* h, const void* args, std::size_t args_len,
                          payload data);
}

// Sends a payload of any size to F on `dest`; F's last parameter must be am::payload.
// The payload is not copied up front: it is streamed from the caller's buffer, which must
// stay valid and unchanged until local completion. A source in a shared segment is made
// readable once, at the call, and then streamed from the segment's protocol view: keep its
// blocks' contents in place (the protocol must not install other data there) until then, or
// copy it to private memory first.
template <auto F, class... A>
bulk_handle bulk_send(int dest, A&&... a) {
  using H = detail::checked_handler<F>;
  static_assert(H::traits::has_payload, "squall::am::bulk_send: the handler takes no payload");
  constexpr std::size_t n = detail::packed_size<typename H::args>();
  alignas(8) std::byte buf[detail::padded_args(n)]{};
  auto all = std::forward_as_tuple(std::forward<A>(a)...);
  constexpr std::size_t k = sizeof...(A) - 1;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    detail::pack<typename H::args>(buf, std::get<I>(all)...);
  }(std::make_index_sequence<k>{});
  return detail::bulk_send_raw(dest, detail::registration<F>::entry, buf, n, payload(std::get<k>(all)));
}

template <auto F>
handler_id id_of() {
  return detail::id_of(detail::registration<F>::entry);
}

// Quiet sends, for one-way data its receiver will wait for (CHAOS's gathers and scatters):
// while a quiet_sends lives, the messages this thread sends wake no receiver whose program
// is away computing; they are handled at the receiver's next poll - its program's next wait,
// or its progress thread's next look, at the latest a tenth of a second on. A receiver's
// thread asleep in a wait is still woken. Waking the progress thread of a node that
// computes takes its program's core (the two share it) for a delivery that the program
// would have made itself a moment later, in its own wait. Not for a request whose sender
// waits for the reply: that reply would wait for the receiver's next wait. Scopes nest.
class quiet_sends {
 public:
  quiet_sends();
  ~quiet_sends();
  quiet_sends(const quiet_sends&) = delete;
  quiet_sends& operator=(const quiet_sends&) = delete;

 private:
  bool was_;
};

void flush();          // sends every partly filled packet now
void flush(int dest);  // ... the one for dest
void set_aggregation(unsigned messages_per_packet);  // 1 = no aggregation
unsigned aggregation();
std::size_t max_payload();  // the largest payload send() accepts; bulk_send has no limit
void poll();                // runs the handlers of arrived messages (no-op inside a handler)

// Deferred calls, for protocol code that holds something back for a moment (libtsm keeps
// a block it just granted until the faulting access has had time to run). call_at makes
// fn(ctx) run once, under the node lock like a message handler, at the first poll of this
// node at or after `deadline_ns` (clock_ns()'s clock); the progress thread wakes for it.
// run_locked runs fn(ctx) at once under the node lock. Both allocate nothing, so they are
// safe in handlers and fault handlers; up to 16 calls may be pending (more ends the process
// with a message).
std::int64_t clock_ns();  // steady clock, nanoseconds
void call_at(std::int64_t deadline_ns, void (*fn)(void*), void* ctx);
void run_locked(void (*fn)(void*), void* ctx);
// The same for any callable (which may capture by reference): f() at once, under the node lock.
template <class F>
void run_locked(F&& f) {
  run_locked([](void* p) { (*static_cast<std::remove_reference_t<F>*>(p))(); }, static_cast<void*>(&f));
}

// From a handler of a packet that came through the mailbox lane (copied out of it before the
// handler ran, so nothing of the substrate's refers to it), running on a program thread in a
// wait of its own with the node lock held once: runs fn(ctx) at once with the node lock let
// go, as program code rather than as a handler - it may touch what a program thread may (a
// shared segment's application view), and sends as a program does; it must not wait, throw,
// or keep views into the handler's payload (copy what it needs first). Another thread may run
// handlers meanwhile; the thread counts as having left the wait while fn runs (as a thread
// that computes: a long fn does not keep the node from being served). Returns false, with
// nothing run, anywhere else (also in the poll a wait makes as it ends). For a layer with its
// own scheduler whose program thread waits idle for work (libarrays): the work runs at once
// instead of after the wait has been left, and an answer leaves that much sooner.
bool run_unlocked_in_handler(void (*fn)(void*), void* ctx);

// For a condition that one program thread of this node changes for another without a
// message (a lock handed from thread to thread): the threads of this node asleep in
// wait_until test their conditions again, and those that now hold wake. Cheap when none
// sleeps.
void wake_waiters();

// Polls until pred() holds: spins briefly, then sleeps until a message arrives. pred runs
// with the node lock held (never concurrently with a handler) and is not called again once
// it returned true, so it may consume what it waited for. While the caller sleeps, another
// thread of the node that handles messages asks pred on its behalf: it must not depend on
// which thread runs it (no thread_local state). Like a handler, pred must not
// touch an application view of a shared segment (a fault under the node lock ends the
// process). A protocol's fault handler may wait (wait_until, call): the handlers of arriving
// messages, its own protocol's included, run while it waits. pred may be a named callable
// (const or not) or a temporary. It says nothing however long it waits (an idle worker's
// wait for work is not a fault): a wait that may hang on another node's program, or on a
// condition the program may never make true, should be wait_until_noticed.
template <class Pred>
void wait_until(Pred&& pred) {
  using P = std::remove_reference_t<Pred>;
  detail::wait_until([](void* p) { return static_cast<bool>((*static_cast<P*>(p))()); }, detail::context_of(pred));
}

// wait_until, for a wait that depends on another node's program (a lock its holder keeps, a
// part it has yet to send): still waiting after SQUALL_WAIT_NOTICE_S seconds (60; 0: never),
// it says once on standard error what it waits for - describe(), a noun phrase, called only
// then, under the node lock as pred is - and goes on waiting. Counted as wait.notices.
template <class Pred, class Describe>
void wait_until_noticed(Pred&& pred, Describe&& describe) {
  using P = std::remove_reference_t<Pred>;
  using D = std::remove_reference_t<Describe>;
  detail::wait_until_noticed([](void* p) { return static_cast<bool>((*static_cast<P*>(p))()); }, detail::context_of(pred),
                             [](void* d) { return std::string((*static_cast<D*>(d))()); }, detail::context_of(describe));
}

namespace detail {
template <auto F>
void dispatch(token& t, const void*, const std::byte* args, std::size_t args_len, payload data,
              std::uint32_t reply_slot) {
  using H = checked_handler<F>;
  using Args = typename H::args;
  using R = typename H::traits::result;
  if (args_len != packed_size<Args>()) {
    throw usage_error("active message for " + std::string(handler_name<F>()) +
                      " carries arguments of the wrong size");
  }
  Args a = unpack<Args>(args);
  auto invoke = [&] {
    if constexpr (H::traits::has_payload) {
      return std::apply([&](auto&... x) { return F(t, x..., data); }, a);
    } else {
      return std::apply([&](auto&... x) { return F(t, x...); }, a);
    }
  };
  if constexpr (std::is_void_v<R>) {
    invoke();
    if (reply_slot != 0) send_reply(t.source(), reply_slot, nullptr, 0);
  } else {
    R r = invoke();
    if (reply_slot != 0) send_reply(t.source(), reply_slot, &r, sizeof(R));
  }
}
}  // namespace detail

}  // namespace squall::am
