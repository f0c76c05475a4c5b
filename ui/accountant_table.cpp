#include "accountant_table.h"

#include <QHeaderView>

#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "accounting/shuffle_accountant.h"
#include "common/format.h"

namespace dpx::ui {

using core::accounting::accountantOf;
using core::accounting::BoundKind;

namespace {

QString number(double v, int digits = 5) { return QString::fromStdString(core::formatNumber(v, digits)); }

// "pld — Exact composition (privacy loss distribution)": the row of an accountant not computed yet.
QString placeholderName(const core::accounting::Accountant& a) {
  return QString::fromStdString(a.info().id + " — " + a.info().name);
}

QString boundText(BoundKind kind) {
  switch (kind) {
    case BoundKind::kUpper:
      return QStringLiteral("upper bound");
    case BoundKind::kEstimate:
      return QStringLiteral("estimate");
    case BoundKind::kLower:
      return QStringLiteral("lower bound");
  }
  return {};
}

}  // namespace

QString describeNative(const std::vector<core::accounting::NativeValue>& native) {
  QStringList parts;
  for (const auto& v : native)
    parts << QStringLiteral("%1 = %2").arg(QString::fromStdString(v.key), number(v.value, 4));
  return parts.join(QStringLiteral(", "));
}

QStringList AccountantTable::headers() {
  return {QStringLiteral("Accountant"), QStringLiteral("ε at δ"),        QStringLiteral("Kind"),
          QStringLiteral("α*"),         QStringLiteral("at the α knob"), QStringLiteral("Native parameters"),
          QStringLiteral("Assumptions")};
}

AccountantTable::AccountantTable(QWidget* parent) : QTableWidget(parent) {
  setObjectName(QStringLiteral("accountantTable"));
  setColumnCount(7);
  setHorizontalHeaderLabels(headers());
  horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  horizontalHeader()->setStretchLastSection(true);
  verticalHeader()->setVisible(false);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setWordWrap(true);
  setAlternatingRowColors(true);
  setColumnWidth(0, 190);
  setColumnWidth(1, 150);
  setColumnWidth(2, 90);
  setColumnWidth(3, 50);
  setColumnWidth(4, 150);
  setColumnWidth(5, 330);
}

void AccountantTable::writeRow(int row, const AccountantSummary& s) {
  auto set = [&](int column, const QString& text, const QString& tip = {}) {
    auto* item = new QTableWidgetItem(text);
    item->setToolTip(tip.isEmpty() ? text : tip);
    if (!s.violations.empty()) item->setForeground(QColor(130, 130, 130));
    setItem(row, column, item);
  };
  set(0, QStringLiteral("%1 — %2").arg(QString::fromStdString(s.id), QString::fromStdString(s.name)),
      QString::fromStdString(s.citation));
  if (s.epsilon) {
    QString eps = number(s.epsilon->epsilon);
    if (s.epsilon->epsilonLower && s.epsilon->epsilonUpper) {
      eps = QStringLiteral("%1  [%2, %3]")
                .arg(number(s.epsilon->epsilon), number(*s.epsilon->epsilonLower, 4),
                     number(*s.epsilon->epsilonUpper, 4));
    }
    set(1, eps, QStringLiteral("ε at δ = %1").arg(number(s.epsilon->delta)));
    set(2, boundText(s.epsilon->bound));
    set(3, s.epsilon->alpha ? number(*s.epsilon->alpha, 4) : QStringLiteral("—"));
  } else {
    set(1, QStringLiteral("—"), QString::fromStdString(s.error));
    set(2, boundText(s.bound));
    set(3, QStringLiteral("—"));
  }
  if (s.rdpAtAlpha && s.epsilonAtAlpha) {
    set(4, QStringLiteral("ε(α) = %1 → ε = %2").arg(number(*s.rdpAtAlpha, 4), number(s.epsilonAtAlpha->epsilon, 4)),
        QStringLiteral("At the α knob alone: total Rényi ε(α) = %1, converted to ε = %2 at δ = %3 (the optimal order "
                       "α* gives ε = %4)")
            .arg(number(*s.rdpAtAlpha), number(s.epsilonAtAlpha->epsilon), number(s.epsilonAtAlpha->delta),
                 s.epsilon ? number(s.epsilon->epsilon) : QStringLiteral("—")));
  } else {
    set(4, QStringLiteral("—"), QStringLiteral("not an RDP analysis"));
  }
  std::vector<core::accounting::NativeValue> native = s.native;
  if (s.epsilon) native.insert(native.end(), s.epsilon->native.begin(), s.epsilon->native.end());
  set(5, describeNative(native));
  QString assumptions;
  if (s.violations.empty()) {
    assumptions = s.error.empty() ? QStringLiteral("all hold") : QString::fromStdString(s.error);
  } else {
    assumptions = QString::fromStdString(violationsText(s.violations));
  }
  QStringList stated;
  for (const std::string& a : s.assumptions) stated << QString::fromStdString(a);
  set(6, assumptions, QStringLiteral("Assumes:\n• ") + stated.join(QStringLiteral("\n• ")));
  if (!s.violations.empty()) item(row, 6)->setForeground(QColor(183, 28, 28));
}

void AccountantTable::showAnalytics(const AnalyticsSnapshot& snapshot) {
  setHorizontalHeaderItem(4, new QTableWidgetItem(QStringLiteral("at α = %1").arg(number(snapshot.params.alpha, 4))));
  m_analyticRows = static_cast<int>(snapshot.accountants.size());
  setRowCount(m_analyticRows + 2);
  for (int i = 0; i < m_analyticRows; ++i) writeRow(i, snapshot.accountants[static_cast<std::size_t>(i)]);
  writePldRow();
  writeShuffleRow();
  resizeRowsToContents();
}

void AccountantTable::writePldRow() {
  const int row = m_analyticRows;
  if (rowCount() <= row) setRowCount(row + 1);
  if (m_pld) {
    writeRow(row, *m_pld);
    return;
  }
  auto* name = new QTableWidgetItem(placeholderName(accountantOf<core::accounting::PldAccountant>()));
  setItem(row, 0, name);
  for (int c = 1; c < columnCount(); ++c) setItem(row, c, new QTableWidgetItem(c == 1 ? m_pldStatus : QString()));
}

void AccountantTable::showPld(const PldSnapshot& snapshot) {
  AccountantSummary s;
  const core::accounting::AccountantInfo& pld = accountantOf<core::accounting::PldAccountant>().info();
  s.id = pld.id;
  s.name = pld.name;
  s.citation = "Koskela et al. 2020; Doroshenko et al. 2022; Google dp_accounting";
  s.bound = BoundKind::kUpper;
  s.epsilon = snapshot.epsilon;
  s.error = snapshot.error;
  s.assumptions = {"Poisson sampling, add/remove neighbours, all iterates released",
                   "numerical: the bracket is rigorous"};
  m_pld = s;
  writePldRow();
  m_shuffle = snapshot.shuffle.id.empty() ? std::nullopt : std::optional<AccountantSummary>(snapshot.shuffle);
  if (!snapshot.shuffleDone) m_pldStatus = snapshot.error.empty() ? QStringLiteral("computing…") : QString();
  m_samplerNote = QString::fromStdString(snapshot.samplerNote);
  m_poissonNotABound = snapshot.poissonNotABound;
  writeShuffleRow();
}

// The shuffle lower bound, with the sampler note in its assumptions cell: red when the lower
// bound exceeds the Poisson upper bound, so "Poisson ε" does not bound a shuffled pipeline.
void AccountantTable::writeShuffleRow() {
  const int row = m_analyticRows + 1;
  if (rowCount() <= row) setRowCount(row + 1);
  if (!m_shuffle) {
    setItem(row, 0, new QTableWidgetItem(placeholderName(accountantOf<core::accounting::ShuffleAccountant>())));
    for (int c = 1; c < columnCount(); ++c) setItem(row, c, new QTableWidgetItem(c == 1 ? m_pldStatus : QString()));
    return;
  }
  writeRow(row, *m_shuffle);
  if (m_samplerNote.isEmpty() || !m_shuffle->violations.empty()) return;
  item(row, 6)->setText(m_samplerNote);
  if (m_poissonNotABound) item(row, 6)->setForeground(QColor(183, 28, 28));
}

void AccountantTable::showPldProgress(double fraction) {
  m_pld.reset();
  m_pldStatus = QStringLiteral("computing… %1 %").arg(static_cast<int>(100 * fraction));
  m_shuffle.reset();
  writePldRow();
  writeShuffleRow();
}

void AccountantTable::clearPld() {
  m_pld.reset();
  m_pldStatus = QStringLiteral("waiting");
  m_shuffle.reset();
  writePldRow();
  writeShuffleRow();
}

std::vector<QStringList> AccountantTable::rowsText() const {
  std::vector<QStringList> rows;
  for (int r = 0; r < rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < columnCount(); ++c) cells << (item(r, c) ? item(r, c)->text() : QString());
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace dpx::ui
