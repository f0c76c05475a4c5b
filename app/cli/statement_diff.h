// The field-by-field comparison of dpx verify: a statement as read against the one this build
// recomputes, numbers exactly or within the relative tolerance each accountant records. Apart from
// the commands: what counts as a match, and the wording of a difference (scripts may read it),
// are their own concern.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/json_reader.h"

namespace dpx::cli {

struct Comparison {
  int matches = 0;
  std::vector<std::string> differences;
  // Numbers that differ in their last bits, within their accountant's recorded tolerance.
  std::vector<std::string> withinTolerance;
  // Each accountant's relative tolerance, as this build records it (accountant.h says why).
  std::map<std::string, double> toleranceOf;
};

// Every field of `recomputed` and of `stated`, objects by member name and arrays by element name
// (accountants[rdp]); which build wrote the statement is a note for the caller, not a difference.
Comparison compareStatements(const core::JsonValue& stated, const core::JsonValue& recomputed);

}  // namespace dpx::cli
