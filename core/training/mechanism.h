// The training mechanisms DP Explorer compares and what each one is, as data: how it samples
// its batches (exactly as its accountant assumes, samplers.h), whether clipping to the user's L
// is the mechanism or L comes from the data's gradient bound, whether it walks the data in whole
// passes, and which accountants prove its privacy. Adding a mechanism is one row of this table
// plus its update rule in the trainer.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/params.h"
#include "common/status.h"

namespace dpx::core::training {

enum class Mechanism {
  kDpSgld,         // Ryffel, Bach & Pointcheval 2022, Alg. 1 — accountant sgld
  kDpSgd,          // Abadi et al. 2016 / Bu et al. 2020 NoisySGD — rdp (gdp, pld)
  kCyclic,         // Kong & Ribero 2024: fixed-order batches, last iterate — cyclic
  kOutpert,        // Chen, Lee & Kifer 2019: noiseless permutation SGD + output noise — outpert
  kSgldPosterior,  // Li, Chen, Liu & Carin 2019, Alg. 1: SGLD posterior sampling — sgmcmc
  kSgd,            // non-private baseline
};

struct MechanismInfo {
  Mechanism mechanism;
  std::string_view id;    // "dp-sgld", "dp-sgd", …
  std::string_view name;  // "DP-SGLD (Langevin, last iterate)"
  Sampling sampling;      // how its batches are drawn
  // Clipping to the user's L is the mechanism (DP-SGD); otherwise the convex analyses need L to
  // be the data's own gradient bound, so clipping never activates.
  bool clipsWithUserNorm;
  // Walks the data in whole passes of ⌈n/m⌉ batches (so a run is a whole number of epochs).
  bool passesOverData;
  // Accountants that may prove its privacy; the first is the default. Empty: not private.
  std::span<const std::string_view> accountants;
  // The optimiser it trains with unless the run sets one. Momentum for non-private SGD (it reaches
  // the optimum in the default epochs); plain steps for the private mechanisms — where the analysis
  // follows the iterates it must, and for DP-SGD, where momentum would only post-process, it
  // amplifies the injected noise 1/(1 − μ)-fold at the default η: at m = 64, η = 0.5, 30 epochs,
  // ε = 1, DP-SGD reaches 87.2 % on digits and 81.6 % on Fashion-MNIST with plain steps, 73.5 % and
  // 78.1 % with momentum 0.9. Large-batch recipes (Tramèr & Boneh's 8192) set momentum themselves.
  Optimizer optimizer;
  std::string_view citation;  // where the algorithm comes from
};

std::span<const MechanismInfo> mechanismInfos();
const MechanismInfo& mechanismInfo(Mechanism m);
std::span<const Mechanism> allMechanisms();
std::string_view mechanismId(Mechanism m);
std::string_view mechanismName(Mechanism m);
std::optional<Mechanism> parseMechanism(std::string_view id);
// "dp-sgld, dp-sgd, cyclic, …" in display order, for messages; `privateOnly` leaves out sgd.
std::string mechanismIdList(bool privateOnly = false);
std::span<const std::string_view> accountantsFor(Mechanism m);
// The accountant a run of the mechanism reports: `requested` if it analyses the mechanism (only
// dp-sgd has a choice); when empty, the first whose assumed sampling is the run's `sampling` if
// that is not the mechanism's own (dp-sgd on balls-in-bins batches: random allocation), else the
// first; "" for sgd; an error naming the allowed ones.
Result<std::string> resolveAccountant(Mechanism mechanism, const std::string& requested,
                                      std::optional<Sampling> sampling = std::nullopt);
bool clipsWithUserNorm(Mechanism m);
Optimizer defaultOptimizer(Mechanism m);
bool isPrivate(Mechanism m);

}  // namespace dpx::core::training
