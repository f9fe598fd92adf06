// SPDX-License-Identifier: BSD-3-Clause
#include "stats/forms.hpp"

#include <strings.h>

#include <string_view>

#include "common/log.hpp"

namespace squall::stats {
namespace {

bool one_of(std::string_view word, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (word.size() == std::char_traits<char>::length(name) && strncasecmp(word.data(), name, word.size()) == 0) {
      return true;
    }
  }
  return false;
}

std::string bad(const char* text, const std::string& why) {
  return format("SQUALL_STATS must be 0, 1 (the table across nodes), nodes (a column per node), json:FILE, "
                "or a comma-separated list of these (got '%s': %s)",
                text, why.c_str());
}

bool is_form(std::string_view word) {
  return word.starts_with("json:") || one_of(word, {"1", "yes", "on", "true", "table", "nodes", "0", "no", "off", "false"});
}

// A json: FILE may hold commas, so json: is the last form; a form after it would be taken
// into the file's name ("json:s.json,1" a file "s.json,1" and no table), so a FILE with an
// item that reads as a form after a comma is refused.
std::string_view form_after_json(std::string_view path) {
  for (auto comma = path.find(','); comma != std::string_view::npos; comma = path.find(',', comma + 1)) {
    const auto next = path.find(',', comma + 1);
    const std::string_view item = path.substr(comma + 1, next == std::string_view::npos ? next : next - comma - 1);
    if (is_form(item)) return item;
  }
  return {};
}

}  // namespace

bool parse_forms(const char* text, forms& out, std::string& error) {
  forms f;
  std::string_view rest(text == nullptr ? "" : text);
  bool off = false;
  while (!rest.empty()) {
    if (rest.starts_with("json:")) {
      f.json_path = std::string(rest.substr(5));
      if (f.json_path.empty()) {
        error = bad(text, "json: needs a file name");
        return false;
      }
      if (const auto form = form_after_json(f.json_path); !form.empty()) {
        error = bad(text, format("json:FILE must be the last form, but '%.*s' follows it", static_cast<int>(form.size()),
                                 form.data()));
        return false;
      }
      break;
    }
    const auto comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (one_of(word, {"1", "yes", "on", "true", "table"})) {
      f.table = true;
    } else if (one_of(word, {"nodes"})) {
      f.nodes = true;
    } else if (one_of(word, {"0", "no", "off", "false"})) {
      off = true;
    } else {
      error = bad(text, word.empty() ? std::string("an empty item")
                                     : format("'%.*s' is not a form", static_cast<int>(word.size()), word.data()));
      return false;
    }
  }
  if (off && f.any()) {
    error = bad(text, "0 cannot be combined with a form");
    return false;
  }
  out = f;
  return true;
}

forms parse_forms(const char* text) {
  forms f;
  std::string error;
  if (!parse_forms(text, f, error)) fatal("%s", error.c_str());
  return f;
}

}  // namespace squall::stats
