// SPDX-License-Identifier: BSD-3-Clause
// What SQUALL_STATS asks for at finalize: a comma-separated list of forms.
//   1 (or table, yes, on, true)  one table across nodes, printed by node 0
//   nodes                        every counter of every node, one column per node
//   json:FILE                    every node's every counter, written by node 0 to FILE
//                                (last in the list: FILE may itself hold commas)
//   0 (or empty, no, off, false) nothing
#pragma once
#include <string>

namespace squall::stats {

struct forms {
  bool table = false;
  bool nodes = false;
  std::string json_path;  // empty: no JSON

  bool any() const { return table || nodes || !json_path.empty(); }
};

// Parses the value of SQUALL_STATS; on anything else returns false and says why in `error`.
bool parse_forms(const char* text, forms& out, std::string& error);
// The same, ending the process with the error (which names the variable).
forms parse_forms(const char* text);

}  // namespace squall::stats
