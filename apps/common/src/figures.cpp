// SPDX-License-Identifier: BSD-3-Clause
#include "squall/apps/figures.hpp"

#include <cstdio>
#include <iomanip>

namespace squall::apps {
namespace {

std::string format_value(const Figures::Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return std::to_string(*integer);
  if (const auto* real = std::get_if<double>(&value)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", *real);
    return text;
  }
  return std::get<std::string>(value);
}

std::string json_string(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace

void Figures::print_lines(std::ostream& out) const {
  for (const auto& [key, value] : entries_) {
    out << "  " << std::left << std::setw(28) << key << format_value(value) << '\n';
  }
}

void Figures::print_json(std::ostream& out) const {
  out << '{';
  const char* separator = "";
  for (const auto& [key, value] : entries_) {
    out << separator << json_string(key) << ':';
    out << (std::holds_alternative<std::string>(value) ? json_string(std::get<std::string>(value))
                                                       : format_value(value));
    separator = ",";
  }
  out << "}\n";
}

}  // namespace squall::apps
