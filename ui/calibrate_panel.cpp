#include "calibrate_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "accounting/calibration.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "knob_widget.h"

namespace dpx::ui {

// One accountant's answer: the σ that meets the target and the ε it gives, or why there is none.
struct CalibrationRow {
  std::string id;
  std::optional<double> sigma;
  double epsilon = 0.0;
  std::string message;
};

namespace {

CalibrationRow calibrateOne(const core::accounting::Accountant& accountant, const core::Params& params, double goal,
                            core::accounting::Conversion conversion, const std::atomic<bool>& cancel) {
  core::accounting::EpsilonOptions options;
  options.conversion = conversion;
  options.exact.cancel = &cancel;
  CalibrationRow row;
  row.id = std::string(accountant.id());
  auto c = core::accounting::calibrateSigma(accountant, params, goal, options);
  if (c) {
    row.sigma = c->sigma;
    row.epsilon = c->epsilon.epsilon;
    if (c->atLowerLimit) row.message = "met even at the smallest σ";
  } else {
    row.message = c.status().message();
  }
  return row;
}

// Every accountant's row (on the worker), or nothing when cancelled.
std::any calibrateAll(const core::Params& params, double goal, core::accounting::Conversion conversion,
                      const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
  std::vector<CalibrationRow> rows;
  const auto accountants = core::accounting::allAccountants();
  std::size_t done = 0;
  for (const core::accounting::Accountant* a : accountants) {
    if (cancel) return {};
    rows.push_back(calibrateOne(*a, params, goal, conversion, cancel));
    progress(static_cast<double>(++done) / static_cast<double>(accountants.size()));
  }
  return rows;
}

}  // namespace

CalibratePanel::CalibratePanel(ParameterModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  auto* layout = new QVBoxLayout(this);
  auto* row = new QHBoxLayout();
  row->addWidget(new QLabel(QStringLiteral("target ε"), this));
  m_entry = new QLineEdit(QStringLiteral("1"), this);
  m_entry->setObjectName(QStringLiteral("targetEpsilon"));
  m_entry->setMaximumWidth(80);
  m_entry->setToolTip(
      QStringLiteral("The ε you want at the current δ. Each accountant finds the smallest σ that "
                     "certifies it (bracketed root finding; always ε(σ) ≤ target)."));
  row->addWidget(m_entry);
  auto* go = new QPushButton(QStringLiteral("Calibrate σ"), this);
  go->setObjectName(QStringLiteral("calibrateButton"));
  row->addWidget(go);
  row->addStretch(1);
  layout->addLayout(row);
  m_table = new QTableWidget(0, 4, this);
  m_table->setObjectName(QStringLiteral("calibrationTable"));
  m_table->setHorizontalHeaderLabels(
      {QStringLiteral("Accountant"), QStringLiteral("σ for target"), QStringLiteral("ε at that σ"), QString()});
  m_table->verticalHeader()->setVisible(false);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  layout->addWidget(m_table);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  layout->addWidget(m_status);

  connect(go, &QPushButton::clicked, this, &CalibratePanel::calibrate);
  connect(m_entry, &QLineEdit::returnPressed, this, &CalibratePanel::calibrate);
  connect(&m_job, &BackgroundJob::progressed, this,
          [this](double f) { m_status->setText(QStringLiteral("calibrating… %1 %").arg(static_cast<int>(100 * f))); });
}

void CalibratePanel::calibrate() {
  if (!acceptTarget()) return;
  const core::Params params = m_model->lastValid();
  const core::accounting::Conversion conversion = m_model->conversion();
  const double goal = m_target;
  m_status->setText(QStringLiteral("calibrating…"));
  m_job.request(
      [params, conversion, goal](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
        return calibrateAll(params, goal, conversion, cancel, progress);
      },
      [this](std::any&& result) {
        if (auto* rows = std::any_cast<std::vector<CalibrationRow>>(&result)) showRows(*rows);
      });
}

// Reads the typed target; a new one is announced. False (and the entry marked) if it is not a
// number in (0, 1e4].
bool CalibratePanel::acceptTarget() {
  const std::optional<double> target = parseTypedNumber(m_entry->text());
  if (!target || !(*target > 0.0) || *target > 1e4) {
    m_status->setText(QStringLiteral("target ε must be a number in (0, 1e4]"));
    m_entry->setStyleSheet(QStringLiteral("background: #ffebee;"));
    return false;
  }
  m_entry->setStyleSheet(QString());
  if (*target != m_target) {
    m_target = *target;
    Q_EMIT targetChanged(m_target);
  }
  return true;
}

void CalibratePanel::showRows(const std::vector<CalibrationRow>& rows) {
  m_table->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) showRow(i, rows[static_cast<std::size_t>(i)]);
  m_table->resizeColumnsToContents();
  m_status->setText(QStringLiteral("σ values certify ε ≤ %1 at δ = %2 (conservative)")
                        .arg(QString::fromStdString(core::formatNumber(m_target, 6)),
                             QString::fromStdString(core::formatNumber(m_model->lastValid().delta, 3))));
  Q_EMIT calibrated();
}

// A σ comes with an "Apply σ" button (one undoable edit); no σ shows the reason instead.
void CalibratePanel::showRow(int row, const CalibrationRow& r) {
  m_table->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(r.id)));
  if (r.sigma) {
    m_table->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(core::formatNumber(*r.sigma, 6))));
    m_table->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(core::formatNumber(r.epsilon, 6))));
    auto* apply = new QPushButton(QStringLiteral("Apply σ"), m_table);
    apply->setObjectName(QStringLiteral("apply_%1").arg(QString::fromStdString(r.id)));
    const double sigma = *r.sigma;
    connect(apply, &QPushButton::clicked, this, [this, sigma] { m_model->setKnob(core::Knob::kSigma, sigma, 0); });
    m_table->setCellWidget(row, 3, apply);
  } else {
    auto* item = new QTableWidgetItem(QStringLiteral("—"));
    item->setToolTip(QString::fromStdString(r.message));
    m_table->setItem(row, 1, item);
    auto* why = new QTableWidgetItem(QString::fromStdString(r.message));
    why->setToolTip(QString::fromStdString(r.message));
    m_table->setItem(row, 2, why);
    m_table->removeCellWidget(row, 3);
  }
}

}  // namespace dpx::ui
