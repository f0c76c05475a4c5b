#include "accountant_table.h"

#include <QHeaderView>
#include <map>

#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
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
  m_analytic = snapshot.accountants;
  rebuild();
}

AccountantTable::Group AccountantTable::groupOf(const AccountantSummary& s) {
  const BoundKind kind = s.epsilon ? s.epsilon->bound : s.bound;
  if (kind == BoundKind::kLower) return Group::kLower;
  if (kind == BoundKind::kEstimate) return Group::kEstimate;
  return s.violations.empty() ? Group::kApplies : Group::kDoesNotApply;
}

QString AccountantTable::groupTitle(Group group) {
  switch (group) {
    case Group::kApplies:
      return QStringLiteral("Upper bounds that apply to this run");
    case Group::kDoesNotApply:
      return QStringLiteral("Upper bounds whose assumptions this run breaks (not a bound for it)");
    case Group::kLower:
      return QStringLiteral("Lower bounds (what any proof must allow)");
    case Group::kEstimate:
      return QStringLiteral("Estimates (neither bound)");
  }
  return {};
}

// Rows grouped — upper bounds that apply, those that do not, lower bounds, estimates — each group
// under a title row; within a group, the registry's order. The exact pld and shuffle rows join
// their groups when computed (before: the pld row waits among the upper bounds that apply).
void AccountantTable::rebuild() {
  struct Shown {
    const AccountantSummary* summary = nullptr;  // null: a placeholder while the exact job runs
    QString placeholder;
  };
  std::map<Group, std::vector<Shown>> groups;
  for (const AccountantSummary& s : m_analytic) groups[groupOf(s)].push_back({&s, {}});
  if (m_pld) {
    groups[groupOf(*m_pld)].push_back({&*m_pld, {}});
  } else {
    groups[Group::kApplies].push_back({nullptr, placeholderName(accountantOf<core::accounting::PldAccountant>())});
  }
  if (m_shuffle) {
    groups[groupOf(*m_shuffle)].push_back({&*m_shuffle, {}});
  } else {
    groups[Group::kLower].push_back({nullptr, placeholderName(accountantOf<core::accounting::ShuffleAccountant>())});
  }
  if (m_randomAllocation) {
    groups[groupOf(*m_randomAllocation)].push_back({&*m_randomAllocation, {}});
  } else {
    groups[Group::kApplies].push_back(
        {nullptr, placeholderName(accountantOf<core::accounting::RandomAllocationAccountant>())});
  }
  int rows = 0;
  for (const auto& [group, members] : groups) rows += 1 + static_cast<int>(members.size());
  clearSpans();
  setRowCount(rows);
  int row = 0;
  for (const auto& [group, members] : groups) {
    auto* title = new QTableWidgetItem(groupTitle(group));
    QFont bold = title->font();
    bold.setBold(true);
    title->setFont(bold);
    title->setBackground(QColor(236, 239, 241));
    title->setData(kGroupRole, static_cast<int>(group));
    setItem(row, 0, title);
    for (int c = 1; c < columnCount(); ++c) delete takeItem(row, c);
    setSpan(row, 0, 1, columnCount());
    ++row;
    for (const Shown& shown : members) {
      if (shown.summary) {
        writeRow(row, *shown.summary);
        if (m_shuffle && shown.summary == &*m_shuffle) decorateShuffleRow(row);
      } else {
        setItem(row, 0, new QTableWidgetItem(shown.placeholder));
        for (int c = 1; c < columnCount(); ++c) setItem(row, c, new QTableWidgetItem(c == 1 ? m_pldStatus : QString()));
      }
      ++row;
    }
  }
  resizeRowsToContents();
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
  m_shuffle = snapshot.shuffle.id.empty() ? std::nullopt : std::optional<AccountantSummary>(snapshot.shuffle);
  m_randomAllocation =
      snapshot.randomAllocation.id.empty() ? std::nullopt : std::optional<AccountantSummary>(snapshot.randomAllocation);
  if (!snapshot.shuffleDone) m_pldStatus = snapshot.error.empty() ? QStringLiteral("computing…") : QString();
  m_samplerNote = QString::fromStdString(snapshot.samplerNote);
  m_poissonNotABound = snapshot.poissonNotABound;
  rebuild();
}

// The shuffle lower bound, with the sampler note in its assumptions cell: red when the lower
// bound exceeds the Poisson upper bound, so "Poisson ε" does not bound a shuffled pipeline.
void AccountantTable::decorateShuffleRow(int row) {
  if (m_samplerNote.isEmpty() || !m_shuffle->violations.empty()) return;
  item(row, 6)->setText(m_samplerNote);
  if (m_poissonNotABound) item(row, 6)->setForeground(QColor(183, 28, 28));
}

void AccountantTable::showPldProgress(double fraction) {
  m_pld.reset();
  m_pldStatus = QStringLiteral("computing… %1 %").arg(static_cast<int>(100 * fraction));
  m_shuffle.reset();
  m_randomAllocation.reset();
  rebuild();
}

void AccountantTable::clearPld() {
  m_pld.reset();
  m_pldStatus = QStringLiteral("waiting");
  m_shuffle.reset();
  m_randomAllocation.reset();
  rebuild();
}

std::vector<QStringList> AccountantTable::rowsText() const {
  std::vector<QStringList> rows;
  for (int r = 0; r < rowCount(); ++r) {
    if (isGroupRow(r)) continue;
    QStringList cells;
    for (int c = 0; c < columnCount(); ++c) cells << (item(r, c) ? item(r, c)->text() : QString());
    rows.push_back(cells);
  }
  return rows;
}

bool AccountantTable::isGroupRow(int row) const {
  const QTableWidgetItem* first = item(row, 0);
  return first && first->data(kGroupRole).isValid();
}

QStringList AccountantTable::groupTitles() const {
  QStringList titles;
  for (int r = 0; r < rowCount(); ++r) {
    if (isGroupRow(r)) titles << item(r, 0)->text();
  }
  return titles;
}

}  // namespace dpx::ui
