// The `dpx` command line that recomputes what a view of the explorer shows, and the knobs as a
// caption: what an exported chart, CSV or JSON carries so that its numbers can be traced and
// recomputed without the GUI.
//
// Every knob is written out, not only those that differ from the defaults: a command pasted into
// a report outlives the defaults of the build that wrote it, and training commands read other
// defaults than accounting ones (batches of 64). Two exceptions change the numbers by their mere
// presence: --alpha, which fixes the Rényi order of the conversion (written only when the view
// converts at the α knob alone), and --sampling/--neighbouring/--optimizer, whose absence means
// "each analysis's own" (written only when set). Numbers go through formatNumber — its 10 digits
// when they read back as the same double, else 17 — so dpx computes with exactly the GUI's values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.h"
#include "common/params.h"
#include "training/dataset_cache.h"
#include "training/frontier.h"
#include "training/model_comparison.h"
#include "training/trainer.h"

namespace dpx::core {

// The arguments after `dpx` joined for a POSIX shell: an argument with a character outside
// [A-Za-z0-9_./:,=+@%^-] is single-quoted.
std::string shellCommandLine(const std::vector<std::string>& arguments);

// --n … --D (no --alpha), --schedule, and the named settings that are set. For accounting
// commands: n and K are flags.
std::vector<std::string> accountingKnobArguments(const Params& params);

struct AccountingView {
  Params params;
  accounting::Conversion conversion = accounting::Conversion::kImproved;
  bool fixedAlpha = false;  // the RDP accountants converted at the α knob alone
};

// The accountant table and the run's headline: `dpx epsilon --accountant <id|all> …`.
std::vector<std::string> epsilonArguments(const AccountingView& view, std::string_view accountant);
// ε against steps, log-spaced from 1 to maxSteps: `dpx curve --vary K …`.
std::vector<std::string> curveArguments(const AccountingView& view, std::string_view accountant, std::int64_t maxSteps,
                                        int points);
// Total RDP ε_α of one accountant on the default order grid: `dpx rdp …`.
std::vector<std::string> rdpArguments(const AccountingView& view, std::string_view accountant);
// The step-size bounds at a target ε: `dpx stepsize …`.
std::vector<std::string> stepsizeArguments(const AccountingView& view, double targetEpsilon);

// The knob flags of a training command: no --n and --K (the data and --epochs decide them).
std::vector<std::string> trainingKnobArguments(const Params& params);
// --data and what the loader reads beyond the defaults (features, scaling, label column, test
// fraction); the split seed is the run's --seed.
std::vector<std::string> dataArguments(const training::DatasetKey& data);
// `dpx train` of one mechanism as the trainer runs it (threads are left out: results do not
// depend on them).
std::vector<std::string> trainArguments(const training::TrainerConfig& config, const training::DatasetKey& data);
// `dpx audit` of the model `config` trains.
std::vector<std::string> auditArguments(const training::TrainerConfig& config, const training::DatasetKey& data,
                                        int shadowModels, std::int64_t canaries);
// `dpx frontier` of a request (targets or epochs as given, seeds, mechanisms).
// `dpx audit --scores FILE` with the claim of `params` as knob flags.
std::vector<std::string> scoreAuditArguments(const std::string& path, const Params& params);
std::vector<std::string> frontierArguments(const training::FrontierRequest& request, const training::DatasetKey& data);
// `dpx frontier --vary models` of a comparison: each recipe sets its own model, features and
// settings, so only the data, the recipes, the targets, δ, seeds and the accountant are written.
std::vector<std::string> comparisonArguments(const training::ModelComparisonRequest& request);

// "n = 60000 · m = 256 · σ = 1.1 · η = 0.5 · K = 3516 (15 epochs) · δ = 1e-05 · …" on the first
// line; the constants of the convex analyses and the named settings on the second.
std::string knobCaption(const Params& params, std::optional<accounting::Conversion> conversion = std::nullopt);

}  // namespace dpx::core
