// SPDX-License-Identifier: BSD-3-Clause
// Protocol makers by name (squall/tsm/protocol.hpp), and the one-time load of libsquall-xsm
// for a name nobody registered: libtsm may not depend on libxsm, yet a program that names
// "multiple-writer" (a PARMACS program under SQUALL_TSM_PROTOCOL, linked to libtsm only)
// must find it.
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "registry.hpp"

#include <squall/error.hpp>

namespace squall::tsm {
namespace {

struct registry {
  std::mutex lock;
  std::map<std::string, protocol_maker, std::less<>> makers;
  bool library_tried = false;
  std::string library_error;  // why libsquall-xsm did not load, if it did not
};
// Made on first use: libxsm's static initialisers may run before or after libtsm's.
registry& the_registry() {
  static registry r;
  return r;
}

// libsquall-xsm beside this library: the build tree's lib/ or the installed libdir.
std::string xsm_library_path() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&xsm_library_path), &self) == 0 || self.dli_fname == nullptr) {
    return SQUALL_XSM_SONAME;
  }
  std::string path = self.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? SQUALL_XSM_SONAME : path.substr(0, slash + 1) + SQUALL_XSM_SONAME;
}

// Loads libsquall-xsm once; its initialisers register makers, taking the registry's lock,
// so it is called without the lock held.
void load_xsm_library() {
  std::string error;
  void* handle = dlopen(xsm_library_path().c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) handle = dlopen(SQUALL_XSM_SONAME, RTLD_NOW | RTLD_GLOBAL);  // the loader's search
  if (handle == nullptr) {
    const char* why = dlerror();
    error = why != nullptr ? why : "dlopen failed";
  }
  registry& r = the_registry();
  const std::lock_guard hold(r.lock);
  r.library_tried = true;
  r.library_error = error;
  // Never closed: the protocols it made may run until the process ends.
}

std::string known_names() {
  std::string out;
  for (const std::string& name : protocol_names()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

void register_protocol_maker(std::string_view name, protocol_maker make) {
  if (name.empty() || name == "stache" || make == nullptr) {
    throw usage_error("tsm::register_protocol_maker: '" + std::string(name) +
                      "' is not a name a maker can take (empty, \"stache\", or no maker)");
  }
  registry& r = the_registry();
  const std::lock_guard hold(r.lock);
  if (!r.makers.emplace(std::string(name), make).second) {
    throw usage_error("tsm::register_protocol_maker: a maker for '" + std::string(name) + "' is registered already");
  }
}

std::unique_ptr<protocol> make_protocol(std::string_view name) { return detail::make_named(name, "tsm::make_protocol"); }

std::unique_ptr<protocol> detail::make_named(std::string_view name, const char* api) {
  registry& r = the_registry();
  bool try_library = false;
  {
    const std::lock_guard hold(r.lock);
    if (const auto it = r.makers.find(name); it != r.makers.end()) return it->second();
    try_library = !r.library_tried && name != "stache";
  }
  if (try_library) {
    load_xsm_library();
    const std::lock_guard hold(r.lock);
    if (const auto it = r.makers.find(name); it != r.makers.end()) return it->second();
  }
  std::string why = std::string(api) + ": no protocol is named '" + std::string(name) + "'; known: " + known_names();
  if (name == "stache") why = std::string(api) + ": stache is libtsm's own protocol, made for each segment, not by name";
  const std::lock_guard hold(r.lock);
  if (!r.library_error.empty()) why += " (" SQUALL_XSM_SONAME " did not load: " + r.library_error + ")";
  throw usage_error(why);
}

std::vector<std::string> protocol_names() {
  registry& r = the_registry();
  const std::lock_guard hold(r.lock);
  std::vector<std::string> names{"stache"};
  for (const auto& [name, maker] : r.makers) names.push_back(name);
  return names;
}

}  // namespace squall::tsm
