// The configuration checker: the mismatches between how a run is really done and what the ε it
// reports assumes, each of which makes that ε not a bound for the run.
//  * the sampler against the reported accountants' assumed sampler (Assumptions::sampling and
//    alsoValidFor): e.g. shuffled batches reported with a Poisson ε, which Chua, Ghazi, Kamath,
//    Kumar, Manurangsi, Sinha & Zhang 2024 ("How Private are DP-SGD Implementations?", ICML 2024)
//    show can be far from a bound;
//  * replace-one neighbours analysed as add/remove (the clipped sum's sensitivity is then 2L);
//  * averaging over the realised batch size under Poisson sampling (the analyses assume σL noise
//    on the sum divided by the fixed expected m, as Opacus' expected_batch_size does);
//  * δ ≥ 1/n (publishing one random record in the clear is (0, 1/n)-DP);
//  * a named reporting accountant that is a lower bound (error) or an estimate (warning);
//  * an ε outside [0.01, 50] (of the reported accountants at the knobs, or the target).
// Cheap: only analytic accountants are evaluated, never the exact PLD.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"
#include "common/status.h"

namespace dpx::core::accounting {

enum class Severity { kError, kWarning };
std::string_view severityName(Severity severity);  // "error" | "warning"

// How the noisy gradient sum is turned into an average.
enum class BatchAverage {
  kExpected,  // divided by the fixed m (the expected batch size under Poisson sampling)
  kRealised,  // divided by the realised |B| of each step
};
std::string_view batchAverageName(BatchAverage average);  // "expected" | "realised"
std::optional<BatchAverage> parseBatchAverage(std::string_view text);

// ε values outside this range get a warning: below, the noise usually leaves little to learn;
// above, the guarantee rules out almost nothing (e^50 ≈ 5·10²¹).
inline constexpr double kPlausibleEpsilonMin = 0.01;
inline constexpr double kPlausibleEpsilonMax = 50.0;

struct Finding {
  Severity severity = Severity::kError;
  // The setting at fault, as its CLI flag without "--": "sampling", "neighbouring",
  // "batch-average", "delta", "accountant", "epsilon" (the reported ε at the knobs),
  // "target-epsilon".
  std::string knob;
  std::string message;  // in words, with the offending values
  bool operator==(const Finding&) const = default;
};

// What Params does not say about the run.
struct CheckOptions {
  // Whose ε the run reports: an accountant id ("rdp"), or a training mechanism id ("dp-sgd",
  // reported by its accountants; when Params::sampling is unset the run uses the mechanism's own
  // sampler). Empty: rdp and pld, the Poisson DP-SGD accountants that DP-SGD libraries report.
  std::string reported;
  BatchAverage batchAverage = BatchAverage::kExpected;
  std::optional<double> targetEpsilon;
  // The run's noise is calibrated to targetEpsilon, so the ε at the knobs' σ is not what it
  // spends: only the target is checked (the GUI's trainer calibrates).
  bool calibrated = false;
  // How the ε at the knobs is computed (conversion and orders of the RDP accountants); the
  // exact settings are never used: `pld` is not run.
  EpsilonOptions epsilon;
};

struct ConfigurationCheck {
  std::vector<std::string> accountants;  // the reported accountants the run was checked against
  std::optional<Sampling> runSampling;   // unset: each accountant's own scheme
  std::vector<Finding> findings;         // errors first, in the order of the checks above
  bool hasError() const;
};

// Invalid params, an unknown `reported` id or a mechanism that is not private: invalidArgument.
Result<ConfigurationCheck> checkConfiguration(const Params& params, const CheckOptions& options = {});

}  // namespace dpx::core::accounting
