// A privacy statement: one run of the explorer's knobs, every accountant's verdict on it and the
// checks behind each verdict, as a versioned JSON document that can be re-checked.
//
// For each accountant of the registry (in display order): its id, name, citation and bound kind;
// whether it applies (check() found no violated assumption) and, if not, the violations; for an
// applicable one its ε at the run's δ — with the optimal Rényi order and the conversion for RDP
// analyses, the ε bracket for the exact one — or the message of the Status it returned instead;
// and its native parameters. Then the assumptions checked: each accountant's assumed sampling,
// neighbouring relation and release against the run's, its conditions, and its assumptions in
// words. Last, the run as configuration for Opacus and JAX-Privacy (handoff_snippets.h).
//
// Numbers are written as the shortest decimal that reads back to the same double, so `dpx verify`
// can rebuild the run from the document, recompute it and compare every field: exactly on the
// machine that wrote it, and on another within the relative tolerance each accountant's entry
// records (its numbers, and the hand-off's ε taken from it), since vector math, FFT plans and
// fused multiply-adds move the last bits from one CPU to another. Nothing else in the document
// depends on the time or the machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::core::accounting {

inline constexpr std::string_view kStatementFormat = "dpexplorer-privacy-statement";
inline constexpr int kStatementFormatVersion = 1;
// What the run's "sampling" and "neighbouring" say when the run leaves them unset.
inline constexpr std::string_view kEachAccountantsOwn = "each accountant's own";

// DP Explorer's version, as the build system sets it ("0.2.3").
std::string_view dpxVersion();

struct AccountantVerdict {
  const Accountant* accountant = nullptr;
  std::vector<Violation> violations;  // check(params): empty when the analysis applies
  // ε at the run's δ, computed only for an applicable analysis: the value or why there is none.
  std::optional<Result<EpsilonResult>> epsilon;
  // native(params), then the values specific to the ε computation (pld's Δ, bracket), which win.
  Result<std::vector<NativeValue>> native = Status::notApplicable("not computed");

  bool applicable() const { return violations.empty(); }
};

// The tightest upper bound the statement gives for the run read as DP-SGD (Poisson sampling,
// every iterate released, noise set by σ): what the hand-off snippets quote as the budget.
struct DpSgdBound {
  double epsilon = 0.0;
  std::string accountant;  // id of the accountant that gave it
};

struct PrivacyStatement {
  std::string version;  // DP Explorer's version that computed it
  Params params;
  // Conversion, orders, fixed α and the exact accountant's controls; progress and cancellation
  // are not part of the statement.
  EpsilonOptions options;
  std::vector<AccountantVerdict> verdicts;  // one per registry accountant, display order
  std::optional<DpSgdBound> dpSgdBound;
};

// Every accountant of the registry on `params`. Fails only for invalid params or options (the
// message names the value and its range) or when options.exact.cancel fires; an accountant that
// cannot answer is recorded in its verdict. The exact accountant honours options.exact's
// progress and cancellation. options.variant must be empty: a statement reports headlines.
Result<PrivacyStatement> makePrivacyStatement(const Params& params, const EpsilonOptions& options = {});

// The statement as one compact JSON document (format kStatementFormat, version
// kStatementFormatVersion); numbers round-trip exactly.
std::string privacyStatementJson(const PrivacyStatement& statement);

// The checks of check(), each with whether it held: the violations of one tag are the outcome of
// that check ("sampling", "neighbouring relation", "parameters"; any other tag is a condition of
// the analysis itself).
struct CheckOutcome {
  std::string check;  // "parameters" | "sampling" | "neighbouring relation" | "conditions of the analysis"
  bool holds = true;
  std::string detail;  // what was compared, or the reasons it failed
};
std::vector<CheckOutcome> checkOutcomes(const Params& params, const AccountantVerdict& verdict);

}  // namespace dpx::core::accounting
