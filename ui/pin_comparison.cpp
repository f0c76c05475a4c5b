#include "pin_comparison.h"

#include <QHeaderView>

#include "common/format.h"

namespace dpx::ui {

namespace {

QString number(double v) { return QString::fromStdString(core::formatNumber(v, 5)); }

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(item->flags() & ~Qt::ItemIsEditable);
  return item;
}

}  // namespace

QStringList knobDifferences(const core::Params& a, const core::Params& b) {
  QStringList out;
  for (const core::KnobInfo& info : core::knobInfos()) {
    const double x = core::knobValue(a, info.knob);
    const double y = core::knobValue(b, info.knob);
    if (x == y) continue;
    out << QStringLiteral("%1 = %2 → %3").arg(QString::fromUtf8(info.symbol), number(x), number(y));
  }
  if (a.sampling != b.sampling) out << QStringLiteral("sampling");
  if (a.schedule != b.schedule) out << QStringLiteral("schedule");
  if (a.neighbouring != b.neighbouring) out << QStringLiteral("neighbouring relation");
  if (a.optimizer != b.optimizer) out << QStringLiteral("optimiser");
  if (a.averaged != b.averaged) out << QStringLiteral("averaged release");
  return out;
}

PinComparison::PinComparison(QWidget* parent) : QTableWidget(parent) {
  setObjectName(QStringLiteral("pinComparison"));
  setColumnCount(4);
  setHorizontalHeaderLabels(
      {QStringLiteral("A (pinned) vs B (now)"), QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B / A")});
  horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c < 4; ++c) horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  verticalHeader()->hide();
  setAlternatingRowColors(true);
  setSelectionMode(QAbstractItemView::NoSelection);
}

void PinComparison::compare(const AnalyticsSnapshot& pinned, std::optional<double> pinnedExact,
                            const AnalyticsSnapshot& current, std::optional<double> currentExact) {
  setRowCount(0);
  auto addRow = [this](const QString& what, const QString& a, const QString& b, const QString& ratio) {
    const int row = rowCount();
    insertRow(row);
    setItem(row, 0, cell(what));
    setItem(row, 1, cell(a));
    setItem(row, 2, cell(b));
    setItem(row, 3, cell(ratio));
  };
  for (const core::KnobInfo& info : core::knobInfos()) {
    const double a = core::knobValue(pinned.params, info.knob);
    const double b = core::knobValue(current.params, info.knob);
    if (a == b) continue;
    addRow(QStringLiteral("%1 %2").arg(QString::fromUtf8(info.symbol), QString::fromUtf8(info.title)), number(a),
           number(b), a != 0.0 ? number(b / a) : QStringLiteral("—"));
  }
  if (rowCount() == 0) addRow(QStringLiteral("the same knobs"), QString(), QString(), QString());
  auto addEpsilon = [&](const QString& what, std::optional<double> a, std::optional<double> b) {
    addRow(what, a ? number(*a) : QStringLiteral("—"), b ? number(*b) : QStringLiteral("—"),
           a && b && *a > 0.0 ? number(*b / *a) : QStringLiteral("—"));
  };
  if (pinnedExact || currentExact) addEpsilon(QStringLiteral("ε at δ — pld (exact, upper)"), pinnedExact, currentExact);
  for (const AccountantSummary& b : current.accountants) {
    std::optional<double> epsA;
    for (const AccountantSummary& a : pinned.accountants) {
      if (a.id == b.id && a.epsilon) epsA = a.epsilon->epsilon;
    }
    const std::optional<double> epsB = b.epsilon ? std::optional<double>(b.epsilon->epsilon) : std::nullopt;
    if (!epsA && !epsB) continue;
    addEpsilon(QStringLiteral("ε at δ — %1").arg(QString::fromStdString(b.id)), epsA, epsB);
  }
}

std::vector<QStringList> PinComparison::rowsText() const {
  std::vector<QStringList> rows;
  for (int r = 0; r < rowCount(); ++r) {
    QStringList row;
    for (int c = 0; c < columnCount(); ++c) row << (item(r, c) ? item(r, c)->text() : QString());
    rows.push_back(row);
  }
  return rows;
}

}  // namespace dpx::ui
