#include "accounting/configuration_check.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "training/mechanism.h"

namespace dpx::core::accounting {
namespace {

using Accountants = std::vector<const Accountant*>;

// The accountants the run reports, and the sampler a reported mechanism uses of its own.
struct Reported {
  Accountants accountants;
  std::optional<Sampling> mechanismSampling;
};

// A mechanism's accountants are alternatives: those of the batching the run declares when the
// mechanism has an analysis of it (dp-sgd on balls-in-bins batches: random allocation), else
// those of the mechanism's own sampler (dp-sgd: rdp, gdp and pld, whatever the run's batches).
Result<Reported> resolveReported(const std::string& reported, std::optional<Sampling> runSampling) {
  if (reported.empty()) return Reported{{&accountantOf<RdpAccountant>(), &accountantOf<PldAccountant>()}, std::nullopt};
  if (const Accountant* a = findAccountant(reported)) return Reported{{a}, std::nullopt};
  const std::optional<training::Mechanism> mechanism = training::parseMechanism(reported);
  if (!mechanism) {
    return Status::invalidArgument("'" + reported + "' is neither an accountant (" + accountantIdList() +
                                   ") nor a training mechanism (" + training::mechanismIdList() + ")");
  }
  const Sampling own = training::mechanismInfo(*mechanism).sampling;
  Reported out{{}, own};
  Sampling analysed = own;
  for (std::string_view id : training::accountantsFor(*mechanism)) {
    const Accountant* a = findAccountant(id);
    if (a && runSampling && a->assumptions().sampling == *runSampling) analysed = *runSampling;
  }
  for (std::string_view id : training::accountantsFor(*mechanism)) {
    const Accountant* a = findAccountant(id);
    if (a && a->assumptions().sampling == analysed) out.accountants.push_back(a);
  }
  if (out.accountants.empty()) {
    return Status::invalidArgument("mechanism " + reported + " is not private: no accountant reports its ε");
  }
  return out;
}

// "rdp", "rdp and pld", "rdp, gdp and pld".
std::string idList(const Accountants& accountants) {
  std::string out;
  for (std::size_t i = 0; i < accountants.size(); ++i) {
    if (i > 0) out += i + 1 == accountants.size() ? " and " : ", ";
    out += accountants[i]->id();
  }
  return out;
}

// "assumes" for one accountant, "assume" for several.
std::string verb(const Accountants& accountants, const std::string& singular, const std::string& plural) {
  return accountants.size() == 1 ? singular : plural;
}

bool covers(const Accountant& a, Sampling sampling) {
  const Assumptions& s = a.assumptions();
  return s.sampling == sampling ||
         std::find(s.alsoValidFor.begin(), s.alsoValidFor.end(), sampling) != s.alsoValidFor.end();
}

std::string samplingWords(Sampling sampling, const Params& params) {
  switch (sampling) {
    case Sampling::kPoisson:
      return "Poisson sampling (each record joins each batch independently with probability q = m/n = " +
             formatNumber(params.q()) + ")";
    case Sampling::kUniform:
      return "uniform fixed-size batches (m = " + std::to_string(params.m) + " records drawn anew each step)";
    case Sampling::kCyclic:
      return "fixed-order batches (the same order every pass)";
    case Sampling::kShuffle:
      return "shuffled batches (a fresh permutation each pass, cut into batches of m = " + std::to_string(params.m) +
             ")";
    case Sampling::kBallsInBins:
      return "balls-in-bins batches (each record in k = " + std::to_string(params.allocationSelections()) +
             " of the t = " + std::to_string(params.allocationSteps()) +
             " steps of every epoch, uniformly at random; batch sizes vary)";
  }
  return std::string(samplingName(sampling)) + " sampling";
}

std::string samplingShort(Sampling sampling) {
  switch (sampling) {
    case Sampling::kPoisson:
      return "Poisson-sampled batches";
    case Sampling::kUniform:
      return "fixed-size batches";
    case Sampling::kCyclic:
      return "fixed-order batches";
    case Sampling::kShuffle:
      return "shuffled batches";
    case Sampling::kBallsInBins:
      return "balls-in-bins batches";
  }
  return std::string(samplingName(sampling)) + " batches";
}

// Registered analyses of the same noisy-gradient steps (every iterate released, noise set by σ)
// that do cover the run's sampler: what to report instead, with the kind of bound each gives.
std::string alternativesFor(Sampling run) {
  std::vector<std::string> uppers;
  std::vector<std::string> lowers;
  for (const Accountant* a : allAccountants()) {
    if (!a->noiseSetBySigma() || a->assumptions().release != Release::kAllIterates || !covers(*a, run)) continue;
    if (a->boundKind() == BoundKind::kUpper) uppers.emplace_back(a->id());
    if (a->boundKind() == BoundKind::kLower) lowers.emplace_back(a->id());
  }
  auto join = [](const std::vector<std::string>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i) out += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + ids[i];
    return out;
  };
  std::string out;
  if (!uppers.empty()) out += join(uppers) + (uppers.size() == 1 ? " gives an upper bound" : " give upper bounds");
  if (!lowers.empty()) {
    out += (out.empty() ? "" : " and ") + join(lowers) +
           (lowers.size() == 1 ? " a lower bound (what an attack reaches, not a guarantee)" : " lower bounds");
  }
  return out.empty() ? out : "For " + samplingShort(run) + ", " + out + "; or ";
}

std::string poissonMismatchMessage(const Accountants& group, Sampling run, const Params& params) {
  std::string why;
  if (run == Sampling::kBallsInBins) {
    why =
        " A Poisson-sampled ε is not a bound for balls-in-bins batches: each record is in exactly k of the t steps "
        "of an epoch, and that random allocation is not always more private than Poisson sampling at q = k/t "
        "(Feldman & Shenfeld 2025, arXiv 2502.08202).";
  } else if (run == Sampling::kUniform) {
    why =
        " A Poisson-sampled ε does not cover fixed-size batches: with m records every step, whether one record "
        "is in a batch depends on the others, which the Poisson analysis does not allow.";
  } else {
    why = " A Poisson-sampled ε is not a bound for " + samplingShort(run) +
          ": Chua et al. 2024 (\"How Private are DP-SGD Implementations?\", ICML 2024) show such batches can "
          "leak far more than the Poisson analysis says.";
  }
  std::string fix = alternativesFor(run);
  fix = fix.empty() ? " Sample batches with Poisson sampling, or report an analysis of " + samplingShort(run) + "."
                    : " " + fix + "sample batches with Poisson sampling.";
  return idList(group) + " " + verb(group, "assumes", "assume") + " " + samplingWords(Sampling::kPoisson, params) +
         "; the run uses " + samplingWords(run, params) + "." + why + fix;
}

std::string samplingMismatchMessage(const Accountants& group, Sampling assumed, Sampling run, const Params& params) {
  if (assumed == Sampling::kPoisson) return poissonMismatchMessage(group, run, params);
  return idList(group) + " " + verb(group, "assumes", "assume") + " " + samplingWords(assumed, params) +
         "; the run uses " + samplingWords(run, params) + ", so " + verb(group, "its", "their") +
         " ε is not a bound for this run. Sample batches as the analysis assumes, or report an analysis of " +
         samplingShort(run) + ".";
}

// Accountants grouped by a property, in the order they come: one finding per group.
template <typename Key, typename KeyOf>
std::vector<std::pair<Key, Accountants>> groupBy(const Accountants& accountants, KeyOf keyOf) {
  std::vector<std::pair<Key, Accountants>> groups;
  for (const Accountant* a : accountants) {
    const Key key = keyOf(*a);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {a}});
    } else {
      it->second.push_back(a);
    }
  }
  return groups;
}

void checkSampling(const Params& params, const Accountants& reported, std::optional<Sampling> run,
                   std::vector<Finding>& out) {
  if (!run) return;  // each accountant analyses its own scheme
  Accountants mismatched;
  for (const Accountant* a : reported) {
    if (!covers(*a, *run)) mismatched.push_back(a);
  }
  for (const auto& [assumed, group] :
       groupBy<Sampling>(mismatched, [](const Accountant& a) { return a.assumptions().sampling; })) {
    out.push_back({Severity::kError, "sampling", samplingMismatchMessage(group, assumed, *run, params)});
  }
}

std::string replaceOneMessage(const Accountants& group, const Params& params) {
  return "the run protects replace-one neighbours, but " + idList(group) + " " + verb(group, "analyses", "analyse") +
         " add/remove neighbours: replacing a record moves the clipped gradient sum by up to 2L = " +
         formatNumber(2.0 * params.L) +
         " (one gradient out, another in), twice the add/remove sensitivity L. Run the add/remove analysis with "
         "σ/2 = " +
         formatNumber(params.sigma / 2.0) + " in place of σ = " + formatNumber(params.sigma) +
         " (or double the noise).";
}

std::string addRemoveMessage(const Accountants& group) {
  return "the run asks for add/remove neighbours, but " + idList(group) + " " + verb(group, "analyses", "analyse") +
         " replace-one neighbours (datasets of the same size n): an add/remove guarantee implies a replace-one "
         "one (with ε at most doubled), not the reverse, so " +
         verb(group, "its", "their") +
         " ε does not bound adding or removing a record. Report an add/remove analysis, or state the guarantee for "
         "replace-one neighbours.";
}

void checkNeighbouring(const Params& params, const Accountants& reported, std::vector<Finding>& out) {
  if (!params.neighbouring) return;
  Accountants mismatched;
  for (const Accountant* a : reported) {
    if (a->assumptions().neighbouring != *params.neighbouring) mismatched.push_back(a);
  }
  if (mismatched.empty()) return;
  out.push_back({Severity::kError, "neighbouring",
                 *params.neighbouring == Neighbouring::kReplaceOne ? replaceOneMessage(mismatched, params)
                                                                   : addRemoveMessage(mismatched)});
}

// Dividing by the realised |B| is an error, not a warning: the update is then a function of the
// noisy sum and of |B|, an exact count of the sampled records that no accountant charges for (a
// batch of n + 1 records is impossible without the added one, so its ε alone is unbounded), and
// its sensitivity depends on the data. The reported ε is then not a bound for what is released,
// and the fix costs nothing: divide by the expected m, as Opacus' expected_batch_size does.
void checkBatchAverage(const Params& params, const Accountants& reported, std::optional<Sampling> run,
                       BatchAverage average, std::vector<Finding>& out) {
  if (average != BatchAverage::kRealised) return;
  Accountants poisson;
  for (const Accountant* a : reported) {
    if (a->assumptions().sampling == Sampling::kPoisson) poisson.push_back(a);
  }
  // Fixed-size batches have |B| = m: dividing by it is dividing by m.
  // Balls-in-bins batch sizes vary too (Binomial(n, k/t)): the same holds.
  if (run ? *run != Sampling::kPoisson && *run != Sampling::kBallsInBins : poisson.empty()) return;
  const std::string analyses = poisson.empty() ? "the analyses" : "the analyses (" + idList(poisson) + ")";
  const std::string m = std::to_string(params.m);
  out.push_back({Severity::kError, "batch-average",
                 "the run divides the noisy gradient sum by the realised batch size |B|, which under Poisson "
                 "sampling varies from step to step around m = " +
                     m +
                     ": the update's sensitivity then depends on the data, and |B|, an exact count of the sampled "
                     "records, is released without noise. " +
                     analyses + " assume noise σL on the sum divided by the fixed expected m; divide by m = " + m +
                     " instead (Opacus: expected_batch_size)."});
}

void checkDelta(const Params& params, std::vector<Finding>& out) {
  const double inverseN = 1.0 / static_cast<double>(params.n);
  if (params.delta < inverseN) return;
  out.push_back({Severity::kError, "delta",
                 "δ = " + formatNumber(params.delta) + " ≥ 1/n = " + formatNumber(inverseN) +
                     ": a mechanism that publishes one random record in the clear is (0, 1/n)-DP, so this δ "
                     "admits releasing records outright. Take δ well below 1/n."});
}

std::optional<std::string> implausibleEpsilon(double epsilon) {
  if (epsilon < kPlausibleEpsilonMin) {
    return " is below " + formatNumber(kPlausibleEpsilonMin) +
           ": the noise for so small a privacy loss usually leaves little to learn.";
  }
  if (epsilon > kPlausibleEpsilonMax) {
    return " is above " + formatNumber(kPlausibleEpsilonMax) + ": e^ε ≈ " + formatNumber(std::exp(epsilon), 2) +
           ", a guarantee that rules out almost no attack.";
  }
  return std::nullopt;
}

// The ε one accountant reports at the knobs, or the text of why it is skipped (nullopt). The exact
// `pld` is never run here: rdp's ε, an upper bound on it, stands in when rdp is not reported too.
std::optional<std::string> epsilonAtKnobs(const Accountant& a, const Accountants& reported, const Params& params,
                                          const EpsilonOptions& options) {
  const Accountant* evaluated = &a;
  std::string label = std::string(a.id()) + "'s ε";
  if (!a.isAnalytic()) {
    const Accountant* rdp = &accountantOf<RdpAccountant>();
    const bool rdpReported = std::find(reported.begin(), reported.end(), rdp) != reported.end();
    if (&a != &accountantOf<PldAccountant>() || rdpReported) return std::nullopt;
    evaluated = rdp;
    label =
        std::string(rdp->id()) + "'s ε (an upper bound on " + std::string(a.id()) + "'s, which is not computed here)";
  }
  const Result<EpsilonResult> e = evaluated->epsilon(params, options);
  if (!e) return std::nullopt;
  std::optional<std::string> why = implausibleEpsilon(e->epsilon);
  if (!why) return std::nullopt;
  return label + " = " + formatNumber(e->epsilon) + " at δ = " + formatNumber(params.delta) + *why +
         " Check that σ, K and n are the run's.";
}

void checkEpsilon(const Params& params, const Accountants& reported, const CheckOptions& options,
                  std::vector<Finding>& out) {
  if (!options.calibrated) {
    for (const Accountant* a : reported) {
      if (auto message = epsilonAtKnobs(*a, reported, params, options.epsilon)) {
        out.push_back({Severity::kWarning, "epsilon", *message});
      }
    }
  }
  if (options.targetEpsilon) {
    if (auto why = implausibleEpsilon(*options.targetEpsilon)) {
      out.push_back(
          {Severity::kWarning, "target-epsilon", "the target ε = " + formatNumber(*options.targetEpsilon) + *why});
    }
  }
}

// An accountant named as the run's reporter that does not bound ε from above: a lower bound says
// the run is at least this distinguishable; an estimate may fall short of the run's ε. (A
// mechanism's accountants are alternatives, some of them estimates: only a named one is checked.)
void checkReportedKind(const Accountants& reported, const std::string& named, std::vector<Finding>& out) {
  if (reported.size() != 1 || reported.front()->id() != named) return;
  const Accountant& a = *reported.front();
  if (a.boundKind() == BoundKind::kLower) {
    out.push_back({Severity::kError, "accountant",
                   named + " is a lower bound: the run's ε is at least this, so it cannot be the ε the run reports"});
  } else if (a.boundKind() == BoundKind::kEstimate) {
    out.push_back({Severity::kWarning, "accountant",
                   named + "'s ε is an estimate, not a bound: the run's ε may be larger; an upper bound (rdp, pld) "
                           "guarantees it"});
  }
}

}  // namespace

std::string_view severityName(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

std::string_view batchAverageName(BatchAverage average) {
  return average == BatchAverage::kExpected ? "expected" : "realised";
}

std::optional<BatchAverage> parseBatchAverage(std::string_view text) {
  if (text == "expected") return BatchAverage::kExpected;
  if (text == "realised" || text == "realized") return BatchAverage::kRealised;
  return std::nullopt;
}

bool ConfigurationCheck::hasError() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; });
}

Result<ConfigurationCheck> checkConfiguration(const Params& params, const CheckOptions& options) {
  DPX_RETURN_IF_ERROR(params.validate());
  if (options.targetEpsilon && !(*options.targetEpsilon > 0.0 && std::isfinite(*options.targetEpsilon))) {
    return Status::invalidArgument("target ε = " + formatNumber(*options.targetEpsilon) + ": must be a number > 0");
  }
  DPX_ASSIGN_OR_RETURN(const Reported reported, resolveReported(options.reported, params.sampling));
  ConfigurationCheck check;
  check.runSampling = params.sampling ? params.sampling : reported.mechanismSampling;
  for (const Accountant* a : reported.accountants) check.accountants.emplace_back(a->id());
  checkSampling(params, reported.accountants, check.runSampling, check.findings);
  checkNeighbouring(params, reported.accountants, check.findings);
  checkBatchAverage(params, reported.accountants, check.runSampling, options.batchAverage, check.findings);
  checkDelta(params, check.findings);
  checkReportedKind(reported.accountants, options.reported, check.findings);
  checkEpsilon(params, reported.accountants, options, check.findings);
  std::stable_partition(check.findings.begin(), check.findings.end(),
                        [](const Finding& f) { return f.severity == Severity::kError; });
  return check;
}

}  // namespace dpx::core::accounting
