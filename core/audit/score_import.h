// Membership scores computed elsewhere (an attack run on a model trained with Opacus, JAX, …), read
// for an audit against a claimed guarantee (score_audit.h): one score per record, higher = more
// likely a member, and whether the record was a member of the training run.
//
// CSV: a header line naming the columns, then one record per line, comma-separated (fields may be
// double-quoted; blank lines are skipped). Required columns `score` (a finite number) and
// `member` (0 or 1; true/false in any case as pandas writes booleans); an optional `canary` column
// (0 or 1); the columns may come in any order and every other column is ignored.
//
// JSON: either an object {"scores": [RECORD, …]} (other keys ignored) or a plain array
// [RECORD, …], each RECORD an object {"score": number, "member": 0|1|true|false} with an optional
// "canary": 0|1|true|false (other keys ignored).
//
// Canaries (the one-run game of Steinke, Nasr & Jagielski 2023): when any record has canary = 1,
// only those records are audited — they are the crafted examples each included with probability
// 1/2 by a fair coin, `member` saying whether it came up heads — and the others are counted but
// not used. Without canaries every record is audited, as runAudit audits the whole pool.
//
// Refusals name where and what: CSV "line 7: member must be 0 or 1, got '2'"; JSON
// "scores[3].member must be 0 or 1, got 2" (the path of the field; malformed JSON gives the byte,
// line and column from json_reader.h). Non-finite scores are refused; at least one audited member
// and one audited non-member are required.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace dpx::core::audit {

// Files above this size are refused before they are read (10⁷ records of a few fields fit).
inline constexpr std::int64_t kMaxScoreFileBytes = 512LL * 1024 * 1024;

struct ImportedScores {
  std::vector<double> scores;         // of the audited records, in file order
  std::vector<std::uint8_t> members;  // 1 = member, same length as scores
  std::int64_t records = 0;           // records in the file
  std::int64_t canaries = 0;          // records marked canary = 1 (0: every record is audited)
  std::string format;                 // "csv" | "json"

  std::int64_t audited() const { return static_cast<std::int64_t>(scores.size()); }
  std::int64_t auditedMembers() const;
};

Result<ImportedScores> parseScoresCsv(std::string_view text);
Result<ImportedScores> parseScoresJson(std::string_view text);
// JSON when the first character after white space (and a byte order mark) is '{' or '[', else CSV.
Result<ImportedScores> parseScores(std::string_view text);
// The file at `path` (at most kMaxScoreFileBytes), parsed by parseScores; messages start with the path.
Result<ImportedScores> readScoresFile(const std::string& path);

}  // namespace dpx::core::audit
