// A/B comparison of a pinned configuration (A) with the current knobs (B): the knobs that differ,
// then every accountant's ε at δ side by side with their ratio, so "what did halving σ buy?" is
// one glance. The pinned curves themselves are drawn as ghosts on the charts (ExplorerCharts).
#pragma once

#include <QTableWidget>

#include "compute/analytics.h"

namespace dpx::ui {

class PinComparison : public QTableWidget {
  Q_OBJECT
 public:
  explicit PinComparison(QWidget* parent = nullptr);
  // Fills the table from A's and B's snapshots (their params and accountants). A's exact bound,
  // if it was computed for A, is `pinnedExact`; B's is `currentExact`.
  void compare(const AnalyticsSnapshot& pinned, std::optional<double> pinnedExact, const AnalyticsSnapshot& current,
               std::optional<double> currentExact);
  // Rows as text (tests, report): first column the quantity, then A, B, B/A.
  std::vector<QStringList> rowsText() const;
};

// The knobs of `a` and `b` that differ, as "σ = 1.1 → 2" (empty when they are the same run).
QStringList knobDifferences(const core::Params& a, const core::Params& b);

}  // namespace dpx::ui
