// Every accountant's answer for the run in one table: ε at δ with its kind (upper bound /
// estimate / lower bound), the optimal Rényi order, its native parameters, and the assumptions
// the run violates, in words. The exact `pld` row fills in when its background job finishes.
#pragma once

#include <QTableWidget>
#include <optional>

#include "compute/analytics.h"
#include "compute/slow_analytics.h"

namespace dpx::ui {

class AccountantTable : public QTableWidget {
  Q_OBJECT
 public:
  explicit AccountantTable(QWidget* parent = nullptr);
  void showAnalytics(const AnalyticsSnapshot& snapshot);
  void showPld(const PldSnapshot& snapshot);
  void showPldProgress(double fraction);
  void clearPld();
  // Rows as text (report export, tests): one vector per accountant row (group titles left out).
  std::vector<QStringList> rowsText() const;
  static QStringList headers();
  // The groups the rows are in, in order: applies, does not apply, lower bounds, estimates.
  enum class Group { kApplies, kDoesNotApply, kLower, kEstimate };
  static Group groupOf(const AccountantSummary& summary);
  static QString groupTitle(Group group);
  QStringList groupTitles() const;  // the title rows shown, in order
  bool isGroupRow(int row) const;

 private:
  static constexpr int kGroupRole = Qt::UserRole + 1;
  void writeRow(int row, const AccountantSummary& summary);
  void rebuild();
  void decorateShuffleRow(int row);
  std::vector<AccountantSummary> m_analytic;
  std::optional<AccountantSummary> m_pld;
  std::optional<AccountantSummary> m_shuffle;           // computed with the pld bracket, compared with it
  std::optional<AccountantSummary> m_randomAllocation;  // the same stage, for non-Poisson batching
  QString m_samplerNote;
  bool m_poissonNotABound = false;
  QString m_pldStatus;
};

QString describeNative(const std::vector<core::accounting::NativeValue>& native);

}  // namespace dpx::ui
