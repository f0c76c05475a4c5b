#include "accounting/deterministic_accountant.h"

#include <cmath>

#include "accounting/batch_passes.h"
#include "accounting/gdp_accountant.h"
#include "accounting/tradeoff.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// μ = √E/σ: E releases of a sensitivity-1 query under N(0, σ²) noise.
Result<double> passesMu(const Params& params) {
  DPX_RETURN_IF_ERROR(params.validate());
  const double participations = static_cast<double>(batchPasses(params).participations());
  const double mu = std::sqrt(participations) / params.sigma;
  if (isReportable(mu)) return mu;  // the message is only formatted when needed: curves ask per point
  return finiteOrStatus(mu, "μ = √E/σ at σ = " + formatNumber(params.sigma) + ", E = " + formatNumber(participations));
}

}  // namespace

DeterministicAccountant::DeterministicAccountant()
    : GaussianDpAccountant({
          .id = "deterministic",
          .name = "Fixed-order batches (Gaussian mechanism over passes)",
          .citation =
              "Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang 2024, How Private are DP-SGD "
              "Implementations?, deterministic batches (E-fold Gaussian mechanism); Dong, Roth & Su 2022, Cor. 2.13",
          .bound = BoundKind::kUpper,
          .assumptions =
              {
                  .sampling = Sampling::kCyclic,
                  .neighbouring = Neighbouring::kAddRemove,
                  .release = Release::kAllIterates,
                  .statements = {"T = ⌈n/m⌉ batches per pass partition the records: each record is in one batch "
                                 "per pass",
                                 "zero-out neighbours (a record's clipped gradient replaced by 0): sensitivity L",
                                 "exact: E passes are the E-fold Gaussian mechanism, μ = √E/σ",
                                 "also an upper bound for shuffled and balls-in-bins batches (no amplification "
                                 "counted)"},
                  .alsoValidFor = {Sampling::kShuffle, Sampling::kBallsInBins},
              },
          .nativeKeys = {std::string(kGdpMuKey), "steps_per_epoch", "epochs", "sigma_eff"},
          .color = 0xbcbd22,
          .reportsGdpMu = true,
      }) {}

Result<std::vector<NativeValue>> DeterministicAccountant::native(const Params& params) const {
  DPX_ASSIGN_OR_RETURN(const double mu, passesMu(params));
  const BatchPasses passes = batchPasses(params);
  const double participations = static_cast<double>(passes.participations());
  return std::vector<NativeValue>{
      {std::string(kGdpMuKey), "μ = √E/σ", mu},
      {"steps_per_epoch", "batches per pass T = ⌈n/m⌉", static_cast<double>(passes.stepsPerEpoch)},
      {"epochs", "passes E a record takes part in", participations},
      {"sigma_eff", "σ/√E: the one Gaussian release E passes equal", params.sigma / std::sqrt(participations)},
  };
}

Result<double> DeterministicAccountant::mu(const Params& params) const { return passesMu(params); }

}  // namespace dpx::core::accounting
