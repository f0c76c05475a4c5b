// ROC, AUC, TPR at low FPR and trade-off points of an attack (see the header).
#include "audit/roc.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dpx::core::audit {

std::vector<RocPoint> rocCurve(std::span<const double> scores, std::span<const std::uint8_t> members) {
  const std::size_t n = std::min(scores.size(), members.size());
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  double positives = 0.0;
  for (std::size_t i = 0; i < n; ++i) positives += members[i] ? 1.0 : 0.0;
  const double negatives = static_cast<double>(n) - positives;
  std::vector<RocPoint> roc{{0.0, 0.0}};
  double tp = 0.0;
  double fp = 0.0;
  for (std::size_t k = 0; k < n;) {
    // A threshold cannot separate equal scores: the whole tie moves at once.
    const double s = scores[order[k]];
    for (; k < n && scores[order[k]] == s; ++k) {
      if (members[order[k]]) {
        tp += 1.0;
      } else {
        fp += 1.0;
      }
    }
    roc.push_back({negatives > 0.0 ? fp / negatives : 0.0, positives > 0.0 ? tp / positives : 0.0});
  }
  if (roc.back().fpr != 1.0 || roc.back().tpr != 1.0) roc.push_back({1.0, 1.0});
  return roc;
}

double areaUnderCurve(std::span<const RocPoint> roc) {
  double area = 0.0;
  for (std::size_t i = 1; i < roc.size(); ++i) {
    area += (roc[i].fpr - roc[i - 1].fpr) * 0.5 * (roc[i].tpr + roc[i - 1].tpr);
  }
  return area;
}

double tprAtFpr(std::span<const RocPoint> roc, double fpr) {
  double best = 0.0;
  // The relative slack absorbs the rounding of k/negatives at an FPR exactly on the target.
  const double limit = fpr * (1.0 + 1e-12);
  for (const RocPoint& p : roc) {
    if (p.fpr <= limit) best = std::max(best, p.tpr);
  }
  return best;
}

std::vector<TradeoffPoint> tradeoffPoints(std::span<const RocPoint> roc) {
  std::vector<TradeoffPoint> out;
  out.reserve(roc.size());
  for (const RocPoint& p : roc) out.push_back({p.fpr, 1.0 - p.tpr});
  return out;
}

std::vector<RocPoint> thinRoc(std::span<const RocPoint> roc, int maxPoints) {
  if (roc.size() <= static_cast<std::size_t>(std::max(2, maxPoints))) return {roc.begin(), roc.end()};
  const double step = 1.0 / std::max(1, maxPoints);
  std::vector<RocPoint> out{roc.front()};
  for (std::size_t i = 1; i + 1 < roc.size(); ++i) {
    const RocPoint& last = out.back();
    if (roc[i].fpr < 0.01 || roc[i].fpr - last.fpr >= step || roc[i].tpr - last.tpr >= step) out.push_back(roc[i]);
  }
  out.push_back(roc.back());
  return out;
}

}  // namespace dpx::core::audit
