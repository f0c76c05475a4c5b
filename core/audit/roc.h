// ROC of a membership-inference attack and the numbers read from it: area under the curve
// (trapezoid rule, equal to the Mann–Whitney statistic with ties counted half), TPR at a fixed
// low FPR (Carlini et al. 2022, "Membership Inference Attacks From First Principles", §III: the
// metric that matters for privacy), and the points on the trade-off plane of f-DP (Dong, Roth &
// Su 2019): type I error x = FPR, type II error y = 1 − TPR.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dpx::core::audit {

struct RocPoint {
  double fpr = 0.0;
  double tpr = 0.0;
};

struct TradeoffPoint {
  double x = 0.0;  // type I error (FPR)
  double y = 0.0;  // type II error (1 − TPR)
};

// The attack guesses IN when score ≥ t; one point per distinct score, from (0, 0) to (1, 1).
// With no members (or no non-members) the TPR (FPR) axis is undefined and stays 0 until the
// last point, (1, 1).
std::vector<RocPoint> rocCurve(std::span<const double> scores, std::span<const std::uint8_t> members);

// Trapezoid rule over the points.
double areaUnderCurve(std::span<const RocPoint> roc);

// The largest TPR among points with FPR ≤ fpr (0 when none).
double tprAtFpr(std::span<const RocPoint> roc, double fpr);

std::vector<TradeoffPoint> tradeoffPoints(std::span<const RocPoint> roc);

// At most about maxPoints points for output: the end points, every point with FPR < 1 % (where
// log-scale plots look), and a point whenever FPR or TPR moved by 1/maxPoints since the last kept.
std::vector<RocPoint> thinRoc(std::span<const RocPoint> roc, int maxPoints = 1000);

}  // namespace dpx::core::audit
