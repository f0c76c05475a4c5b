// The training mechanisms DP Explorer compares (SPEC §4) and the accountant that proves each
// one's privacy. Each samples its batches exactly as its accountant assumes (samplers.h).
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace dpx::core::training {

enum class Mechanism {
  kDpSgld,         // seed 000 Alg. 1: uniform batches, Langevin noise, projection — accountant sgld
  kDpSgd,          // Abadi et al. / seed 003 NoisySGD: Poisson batches, clipping — rdp (gdp, pld)
  kCyclic,         // seed 001: fixed-order batches, last iterate — cyclic
  kOutpert,        // seed 002: noiseless permutation SGD + output noise — outpert
  kSgldPosterior,  // seed 004 Alg. 1: SGLD posterior sampling — sgmcmc
  kSgd,            // non-private baseline
};

std::span<const Mechanism> allMechanisms();
std::string_view mechanismId(Mechanism m);    // "dp-sgld", "dp-sgd", "cyclic", "outpert", "sgld-posterior", "sgd"
std::string_view mechanismName(Mechanism m);  // "DP-SGLD (Langevin)", …
std::optional<Mechanism> parseMechanism(std::string_view id);
// Accountants that may prove the mechanism's privacy; the first is the default. Empty for sgd.
std::span<const std::string_view> accountantsFor(Mechanism m);
// Clipping is the mechanism (the user's L), as opposed to a Lipschitz bound set from the data.
bool clipsWithUserNorm(Mechanism m);

}  // namespace dpx::core::training
