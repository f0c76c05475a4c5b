// The attacks of the membership-inference audit: from the φ of the target and the shadow models,
// a score per audited record for the loss threshold, online LiRA and online RMIA. Apart from the
// game that trains the models and from the verdicts, so each attack can be read (and tested, for
// trueClassLogits and liraScores) on its own.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "audit/membership_inference.h"
#include "audit/membership_inference_detail.h"

namespace dpx::core::audit {
namespace {

using namespace training;

constexpr double kMinimumVariance = 1e-6;  // φ is a logit; below this a Gaussian fit is degenerate

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

double logGaussian(double x, double mean, double variance) {
  const double z = x - mean;
  return -0.5 * std::log(2.0 * std::numbers::pi * variance) - z * z / (2.0 * variance);
}

}  // namespace

std::vector<double> trueClassLogits(const Model& model, const FeatureMatrix& features,
                                    std::span<const std::int32_t> labels) {
  const Eigen::Index n = features.rows();
  std::vector<double> phi(static_cast<std::size_t>(n), 0.0);
  constexpr Eigen::Index kBlock = 256;  // bounded memory whatever n
  for (Eigen::Index begin = 0; begin < n; begin += kBlock) {
    const Eigen::Index rows = std::min(kBlock, n - begin);
    const Eigen::MatrixXd z = model.logits(FeatureMatrix(features.middleRows(begin, rows)));
    const Eigen::Index classes = z.cols();
    for (Eigen::Index i = 0; i < rows; ++i) {
      const int y = labels[static_cast<std::size_t>(begin + i)];
      double top = -std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < classes; ++j) {
        if (j != y) top = std::max(top, z(i, j));
      }
      double sum = 0.0;
      for (Eigen::Index j = 0; j < classes; ++j) {
        if (j != y) sum += std::exp(z(i, j) - top);
      }
      phi[static_cast<std::size_t>(begin + i)] = z(i, y) - top - std::log(sum);
    }
  }
  return phi;
}

namespace {

// φ over the shadow models of one side (0: OUT, 1: IN) of every audited record.
struct LiraSide {
  std::vector<double> mean, m2;  // Welford's running mean and sum of squared deviations, per record
  std::vector<std::int64_t> count;
  double pooledVariance = 1.0;  // for records with fewer than 2 samples on this side
  double globalMean = 0.0;      // for records with none
};

// Welford per record and side.
std::array<LiraSide, 2> welfordSides(std::size_t m, const std::vector<std::vector<double>>& shadowPhi,
                                     const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  std::array<LiraSide, 2> side;
  for (LiraSide& s : side) {
    s.mean.assign(m, 0.0);
    s.m2.assign(m, 0.0);
    s.count.assign(m, 0);
  }
  for (std::size_t j = 0; j < shadowPhi.size(); ++j) {
    for (std::size_t i = 0; i < m; ++i) {
      LiraSide& s = side[shadowIn[j][i] ? 1 : 0];
      const double x = shadowPhi[j][i];
      const double n = static_cast<double>(++s.count[i]);
      const double d = x - s.mean[i];
      s.mean[i] += d / n;
      s.m2[i] += d * (x - s.mean[i]);
    }
  }
  return side;
}

// The side's global mean and its pooled within-record variance (Carlini et al. 2022 §VI-B).
void poolSide(LiraSide& s, int k, const std::vector<std::vector<double>>& shadowPhi,
              const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  const std::size_t m = s.mean.size();
  double within = 0.0;
  double dof = 0.0;
  double total = 0.0;
  double samples = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    total += s.mean[i] * static_cast<double>(s.count[i]);
    samples += static_cast<double>(s.count[i]);
    if (s.count[i] >= 2) {
      within += s.m2[i];
      dof += static_cast<double>(s.count[i] - 1);
    }
  }
  s.globalMean = samples > 0.0 ? total / samples : 0.0;
  if (dof > 0.0) {
    s.pooledVariance = within / dof;
  } else if (samples >= 2.0) {
    // At most one sample per record (N ≤ 2): the spread of the side around its global mean.
    double spread = 0.0;
    for (std::size_t j = 0; j < shadowPhi.size(); ++j) {
      for (std::size_t i = 0; i < m; ++i) {
        if ((shadowIn[j][i] ? 1 : 0) != k) continue;
        const double d = shadowPhi[j][i] - s.globalMean;
        spread += d * d;
      }
    }
    s.pooledVariance = spread / (samples - 1.0);
  }
  s.pooledVariance = std::max(s.pooledVariance, kMinimumVariance);
}

// log N(φ; μ, σ²) of record i on one side, with the side's pooled estimates where it has too few samples.
double sideLogLikelihood(const LiraSide& s, std::size_t i, double phi) {
  const double mean = s.count[i] > 0 ? s.mean[i] : s.globalMean;
  const double variance =
      s.count[i] >= 2 ? std::max(s.m2[i] / static_cast<double>(s.count[i] - 1), kMinimumVariance) : s.pooledVariance;
  return logGaussian(phi, mean, variance);
}

}  // namespace

std::vector<double> liraScores(std::span<const double> targetPhi, const std::vector<std::vector<double>>& shadowPhi,
                               const std::vector<std::vector<std::uint8_t>>& shadowIn) {
  const std::size_t m = targetPhi.size();
  std::array<LiraSide, 2> side = welfordSides(m, shadowPhi, shadowIn);  // 0: OUT, 1: IN
  for (int k = 0; k < 2; ++k) poolSide(side[static_cast<std::size_t>(k)], k, shadowPhi, shadowIn);
  std::vector<double> scores(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    scores[i] = sideLogLikelihood(side[1], i, targetPhi[i]) - sideLogLikelihood(side[0], i, targetPhi[i]);
  }
  return scores;
}

namespace detail {
namespace {

// The true-class probability p = 1/(1 + e^{−φ}) from φ = log(p/(1 − p)).
std::vector<double> probabilities(std::span<const double> phi) {
  std::vector<double> p(phi.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = std::exp(-std::fabs(phi[i]));  // in (0, 1]: no overflow on either side
    p[i] = phi[i] >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
  }
  return p;
}

// RMIA on the probabilities of the audited records and of the population under every model.
Result<RmiaResult> rmiaFromPhi(const std::vector<ModelOutcome>& outcomes, std::span<const double> targetPhi,
                               const std::vector<std::vector<double>>& shadowPhi,
                               const std::vector<std::vector<std::uint8_t>>& shadowIn, const RmiaConfig& config) {
  std::vector<std::vector<double>> shadowAudited;
  std::vector<std::vector<double>> shadowPopulation;
  for (const std::vector<double>& phi : shadowPhi) shadowAudited.push_back(probabilities(phi));
  for (std::size_t j = 1; j < outcomes.size(); ++j) {
    shadowPopulation.push_back(probabilities(outcomes[j].populationPhi));
  }
  Result<RmiaResult> scores = rmiaScores(probabilities(targetPhi), shadowAudited, shadowIn,
                                         probabilities(outcomes[0].populationPhi), shadowPopulation, config);
  if (!scores) return scores.status().withContext("RMIA");
  return scores;
}

}  // namespace

Result<AttackScores> attackScores(std::vector<ModelOutcome>& outcomes, const AuditPlan& plan, const RmiaConfig& rmia) {
  AttackScores out;
  const std::span<const std::uint8_t> targetIn(plan.included[0]);
  out.members.assign(targetIn.begin() + plan.firstAudited, targetIn.end());
  const std::vector<double>& targetPhi = outcomes[0].phi;
  std::vector<std::vector<double>> shadowPhi;
  std::vector<std::vector<std::uint8_t>> shadowIn;
  for (std::size_t j = 1; j < plan.jobs(); ++j) {
    shadowPhi.push_back(std::move(outcomes[j].phi));
    shadowIn.emplace_back(plan.included[j].begin() + plan.firstAudited, plan.included[j].end());
  }
  out.scores.resize(2);
  // −loss: the cross-entropy of the true class is log(1 + e^{−φ}).
  for (double phi : targetPhi) out.scores[0].push_back(-softplus(-phi));
  out.scores[1] = liraScores(targetPhi, shadowPhi, shadowIn);
  // RMIA needs a population that no model trained on: the test split, when there is one.
  if (!outcomes[0].populationPhi.empty()) {
    DPX_ASSIGN_OR_RETURN(RmiaResult relative, rmiaFromPhi(outcomes, targetPhi, shadowPhi, shadowIn, rmia));
    out.scores.push_back(std::move(relative.ranking));  // Score(x), its ties broken by LR(x)
    out.rmia = {rmia.gamma, relative.offlineA, relative.offlineAFitted,
                static_cast<std::int64_t>(outcomes[0].populationPhi.size())};
  }
  return out;
}

}  // namespace detail
}  // namespace dpx::core::audit
