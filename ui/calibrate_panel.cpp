#include "calibrate_panel.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <memory>

#include "accounting/calibration.h"
#include "accounting/pld_accountant.h"
#include "accounting/random_allocation_accountant.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "compute/slow_analytics.h"
#include "knob_widget.h"
#include "session/session.h"
#include "training/mechanism.h"
#include "training/trainer.h"

namespace dpx::ui {

using core::accounting::RiskCalibration;
using core::accounting::RiskTarget;
using core::training::Mechanism;

namespace {

// The analysis the risk calibration runs: the exact composition.
const core::accounting::PldAccountant& riskAccountant() {
  return core::accounting::accountantOf<core::accounting::PldAccountant>();
}

// Training every σ starts by itself when this machine does it within this time; otherwise on a
// click.
constexpr double kAccuracyBudgetSeconds = 10.0;

// The ε table's columns.
constexpr int kSigmaColumn = 1;
constexpr int kEpsilonColumn = 2;
constexpr int kAccuracyColumn = 3;
constexpr int kApplyColumn = 4;

QString number(double v, int digits = 6) { return QString::fromStdString(core::formatNumber(v, digits)); }

// A calibrated σ as shown: rounded up, so that the value read off the panel meets the target too
// ("Apply" sets the exact σ).
QString sigmaText(double sigma) { return number(core::roundedUpToPrinted(sigma, 6)); }

CalibrationRow calibrateOne(const core::accounting::Accountant& accountant, const core::Params& params, double goal,
                            core::accounting::Conversion conversion, const std::atomic<bool>& cancel) {
  core::accounting::EpsilonOptions options;
  options.conversion = conversion;
  options.exact.cancel = &cancel;
  CalibrationRow row;
  row.id = std::string(accountant.id());
  row.estimate = accountant.boundKind() == core::accounting::BoundKind::kEstimate;
  auto c = core::accounting::calibrateSigma(accountant, params, goal, options);
  if (c) {
    row.sigma = c->sigma;
    row.epsilon = c->epsilon.epsilon;
    core::Params calibrated = params;
    calibrated.sigma = c->sigma;
    for (const core::accounting::Violation& v : accountant.check(calibrated)) {
      row.violations.push_back(v.text());
    }
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
    // Tens of seconds of exact compositions: only for a run that batches that way, as on the ε chart.
    if (a == &core::accounting::accountantOf<core::accounting::RandomAllocationAccountant>() &&
        !showsRandomAllocation(params)) {
      CalibrationRow row;
      row.id = std::string(a->id());
      row.message = "calibrated when the Sampling knob names a batching without Poisson sampling (about 30 s)";
      rows.push_back(row);
      progress(static_cast<double>(++done) / static_cast<double>(accountants.size()));
      continue;
    }
    rows.push_back(calibrateOne(*a, params, goal, conversion, cancel));
    progress(static_cast<double>(++done) / static_cast<double>(accountants.size()));
  }
  return rows;
}

// The risk search's answer (on the worker): the calibration, or why there is none; and the PLD
// accountant's objections to the run (its curve assumes DP-SGD with Poisson sampling).
struct RiskAnswer {
  std::optional<RiskCalibration> risk;
  QString message;
  QString caveat;
};

std::any calibrateRiskOn(const core::Params& params, const RiskTarget& target, const std::atomic<bool>& cancel,
                         const BackgroundJob::Progress& progress) {
  core::accounting::ExactOptions options;
  options.cancel = &cancel;
  options.progress = progress;
  core::Result<RiskCalibration> r = core::accounting::calibrateSigmaToRisk(params, target, options);
  if (!r && r.status().code() == core::StatusCode::kCancelled) return {};
  RiskAnswer answer;
  if (r) {
    answer.risk = *r;
  } else {
    answer.message = QString::fromStdString(r.status().message());
  }
  for (const core::accounting::Violation& v : riskAccountant().check(params)) {
    answer.caveat += QString::fromStdString(v.text()) + QLatin1Char(' ');
  }
  return answer;
}

// The mechanism the trainer runs for an analysis: the first one it proves.
std::optional<Mechanism> mechanismFor(const std::string& accountant) {
  for (const core::training::MechanismInfo& info : core::training::mechanismInfos()) {
    for (std::string_view id : info.accountants) {
      if (id == accountant) return info.mechanism;
    }
  }
  return std::nullopt;
}

// The UI names of the core's parameters in its messages.
QString uiMessage(std::string message) {
  QString m = QString::fromStdString(message);
  m.replace(QStringLiteral("target-tpr"), QStringLiteral("TPR target"));
  m.replace(QStringLiteral("at-fpr"), QStringLiteral("FPR"));
  m.replace(QStringLiteral("target-advantage"), QStringLiteral("advantage target"));
  return m;
}

// The run a σ was found for, σ aside: a σ applies to the trainer's run only while these agree.
core::Params withoutSigma(core::Params p) {
  p.sigma = 0.0;
  return p;
}

void markEntry(QLineEdit* entry, bool bad) {
  entry->setStyleSheet(bad ? QStringLiteral("background: #ffebee;") : QString());
}

}  // namespace

CalibratePanel::CalibratePanel(ParameterModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildEpsilonPart(), 3);
  layout->addWidget(buildRiskPart());
  auto* accuracyRow = new QHBoxLayout();
  m_accuracyStatus = new QLabel(QStringLiteral("Accuracy: train once (Training tab) to see what each σ gives."), this);
  m_accuracyStatus->setObjectName(QStringLiteral("accuracyStatus"));
  m_accuracyStatus->setWordWrap(true);
  accuracyRow->addWidget(m_accuracyStatus, 1);
  m_accuracyButton = new QPushButton(QStringLiteral("Train at each σ"), this);
  m_accuracyButton->setObjectName(QStringLiteral("accuracyButton"));
  m_accuracyButton->setToolTip(
      QStringLiteral("Train, on the trainer's data and settings, the mechanism each analysis proves at each σ "
                     "found (σ fixed, no recalibration) and show the released model's test accuracy."));
  m_accuracyButton->setEnabled(false);
  accuracyRow->addWidget(m_accuracyButton, 0, Qt::AlignTop);
  layout->addLayout(accuracyRow);
  setRiskKind(RiskKind::kTprAtFpr);

  connect(m_accuracyButton, &QPushButton::clicked, this, &CalibratePanel::trainAtEachSigma);
  connect(m_model, &ParameterModel::paramsChanged, this, &CalibratePanel::refreshAccuracyCells);
  connect(&m_job, &BackgroundJob::progressed, this,
          [this](double f) { m_status->setText(QStringLiteral("calibrating… %1 %").arg(static_cast<int>(100 * f))); });
  connect(&m_riskJob, &BackgroundJob::progressed, this, [this](double f) {
    m_riskStatus->setText(QStringLiteral("calibrating… %1 %").arg(static_cast<int>(100 * f)));
  });
  connect(&m_accuracyJob, &BackgroundJob::progressed, this, [this](double f) {
    m_accuracyStatus->setText(QStringLiteral("Training at each σ… %1 %").arg(static_cast<int>(100 * f)));
  });
}

CalibratePanel::~CalibratePanel() {
  m_accuracyJob.cancel();
  m_riskJob.cancel();
  m_job.cancel();
}

QWidget* CalibratePanel::buildEpsilonPart() {
  auto* part = new QWidget(this);
  auto* layout = new QVBoxLayout(part);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout();
  row->addWidget(new QLabel(QStringLiteral("target ε"), part));
  m_entry = new QLineEdit(QStringLiteral("1"), part);
  m_entry->setObjectName(QStringLiteral("targetEpsilon"));
  m_entry->setMaximumWidth(80);
  m_entry->setToolTip(
      QStringLiteral("The ε you want at the current δ. Each accountant finds the smallest σ that "
                     "certifies it (bracketed root finding; always ε(σ) ≤ target)."));
  row->addWidget(m_entry);
  auto* go = new QPushButton(QStringLiteral("Calibrate σ"), part);
  go->setObjectName(QStringLiteral("calibrateButton"));
  row->addWidget(go);
  row->addStretch(1);
  layout->addLayout(row);
  m_table = new QTableWidget(0, 5, part);
  m_table->setObjectName(QStringLiteral("calibrationTable"));
  m_table->setHorizontalHeaderLabels(
      {QStringLiteral("Accountant"), QStringLiteral("σ"), QStringLiteral("ε at σ"), QStringLiteral("accuracy"), {}});
  m_table->horizontalHeaderItem(kSigmaColumn)->setToolTip(QStringLiteral("the smallest σ with ε(σ) ≤ target"));
  m_table->horizontalHeaderItem(kEpsilonColumn)->setToolTip(QStringLiteral("ε at that σ (≤ target)"));
  m_table->horizontalHeaderItem(kAccuracyColumn)
      ->setToolTip(QStringLiteral("Test accuracy of the mechanism the analysis proves, trained at that σ with the "
                                  "trainer's data and settings"));
  m_table->verticalHeader()->setVisible(false);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setWordWrap(false);
  layout->addWidget(m_table, 1);
  m_status = new QLabel(part);
  m_status->setWordWrap(true);
  layout->addWidget(m_status);
  connect(go, &QPushButton::clicked, this, &CalibratePanel::calibrate);
  connect(m_entry, &QLineEdit::returnPressed, this, &CalibratePanel::calibrate);
  return part;
}

QWidget* CalibratePanel::buildRiskPart() {
  auto* box = new QGroupBox(QStringLiteral("σ for a target attack risk"), this);
  box->setObjectName(QStringLiteral("riskBox"));
  box->setToolTip(
      QStringLiteral("Kulynych et al. 2024, attack-aware noise calibration: the smallest σ whose trade-off curve "
                     "keeps every membership-inference attack on DP-SGD at or below the target. The curve is the "
                     "pessimistic exact PLD one, so the TPR shown is an upper bound on every attack's."));
  auto* layout = new QVBoxLayout(box);
  auto* row = new QHBoxLayout();
  m_riskKind = new QComboBox(box);
  m_riskKind->setObjectName(QStringLiteral("riskKind"));
  m_riskKind->addItem(QStringLiteral("attacker TPR ≤"), static_cast<int>(RiskKind::kTprAtFpr));
  m_riskKind->addItem(QStringLiteral("advantage ≤"), static_cast<int>(RiskKind::kAdvantage));
  m_riskKind->setToolTip(
      QStringLiteral("TPR at a chosen FPR (low FPR: the attacks that matter), or the advantage "
                     "max (TPR − FPR) over all FPR"));
  row->addWidget(m_riskKind);
  m_riskTarget = new QLineEdit(QStringLiteral("0.1"), box);
  m_riskTarget->setObjectName(QStringLiteral("riskTarget"));
  m_riskTarget->setMaximumWidth(70);
  row->addWidget(m_riskTarget);
  m_fprLabel = new QLabel(QStringLiteral("at FPR"), box);
  row->addWidget(m_fprLabel);
  m_fpr = new QLineEdit(QStringLiteral("0.01"), box);
  m_fpr->setObjectName(QStringLiteral("riskFpr"));
  m_fpr->setMaximumWidth(70);
  row->addWidget(m_fpr);
  row->addStretch(1);
  layout->addLayout(row);
  // On a line of its own: the dock is narrow (it shares its width with the knobs).
  auto* goRow = new QHBoxLayout();
  auto* go = new QPushButton(QStringLiteral("Calibrate σ"), box);
  go->setObjectName(QStringLiteral("riskCalibrateButton"));
  goRow->addWidget(go);
  goRow->addStretch(1);
  layout->addLayout(goRow);
  layout->addWidget(buildRiskResults(box));
  m_riskStatus = new QLabel(box);
  m_riskStatus->setObjectName(QStringLiteral("riskStatus"));
  m_riskStatus->setWordWrap(true);
  layout->addWidget(m_riskStatus);

  connect(go, &QPushButton::clicked, this, &CalibratePanel::calibrateRisk);
  connect(m_riskTarget, &QLineEdit::returnPressed, this, &CalibratePanel::calibrateRisk);
  connect(m_fpr, &QLineEdit::returnPressed, this, &CalibratePanel::calibrateRisk);
  connect(m_riskKind, &QComboBox::currentIndexChanged, this,
          [this](int index) { setRiskKind(static_cast<RiskKind>(m_riskKind->itemData(index).toInt())); });
  return box;
}

// σ, TPR, FPR, advantage, ε and accuracy of the risk answer, with its "Apply σ".
QWidget* CalibratePanel::buildRiskResults(QWidget* parent) {
  auto* results = new QWidget(parent);
  auto* form = new QFormLayout(results);
  form->setContentsMargins(0, 0, 0, 0);
  const std::vector<std::pair<QString, QString>> fields{{QStringLiteral("sigma"), QStringLiteral("σ")},
                                                        {QStringLiteral("tpr"), QStringLiteral("attack TPR ≤")},
                                                        {QStringLiteral("fpr"), QStringLiteral("at FPR")},
                                                        {QStringLiteral("advantage"), QStringLiteral("advantage ≤")},
                                                        {QStringLiteral("epsilon"), QStringLiteral("ε at δ")},
                                                        {QStringLiteral("accuracy"), QStringLiteral("test accuracy")}};
  for (const auto& [key, label] : fields) {
    auto* value = new QLabel(QStringLiteral("—"), results);
    value->setObjectName(QStringLiteral("risk_") + key);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(label, value);
    m_riskValues[key] = value;
  }
  m_riskApply = new QPushButton(QStringLiteral("Apply σ"), results);
  m_riskApply->setObjectName(QStringLiteral("apply_risk"));
  m_riskApply->setEnabled(false);
  form->addRow(QString(), m_riskApply);
  connect(m_riskApply, &QPushButton::clicked, this, [this] {
    if (m_risk) m_model->setKnob(core::Knob::kSigma, m_risk->sigma, 0);
  });
  return results;
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
      [this, params](std::any&& result) {
        auto* rows = std::any_cast<std::vector<CalibrationRow>>(&result);
        if (!rows) return;
        m_rowsKnobs = withoutSigma(params);
        showRows(*rows);
      });
}

// Reads the typed target; a new one is announced. False (and the entry marked) if it is not a
// number in (0, 1e4].
bool CalibratePanel::acceptTarget() {
  const std::optional<double> target = parseTypedNumber(m_entry->text());
  if (!target || !(*target > 0.0) || *target > 1e4) {
    m_status->setText(QStringLiteral("target ε must be a number in (0, 1e4]"));
    markEntry(m_entry, true);
    return false;
  }
  markEntry(m_entry, false);
  if (*target != m_target) {
    m_target = *target;
    Q_EMIT targetChanged(m_target);
  }
  return true;
}

void CalibratePanel::showRows(const std::vector<CalibrationRow>& rows) {
  m_rows = rows;
  m_table->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) showRow(i, rows[static_cast<std::size_t>(i)]);
  refreshAccuracyCells();
  m_table->resizeColumnsToContents();
  // A reason in place of ε is elided (its tooltip has it whole): the dock is narrow.
  m_table->setColumnWidth(kEpsilonColumn, std::min(m_table->columnWidth(kEpsilonColumn), 70));
  m_table->setColumnWidth(kApplyColumn, m_table->fontMetrics().horizontalAdvance(QStringLiteral("Apply")) + 20);
  m_status->setText(
      QStringLiteral("σ values certify ε ≤ %1 at δ = %2 (conservative; ≈ marks an estimate and grey an analysis "
                     "the run breaks, which do not)")
          .arg(number(m_target), number(m_model->lastValid().delta, 3)));
  Q_EMIT calibrated();
  maybeTrainAtEachSigma();
}

// A σ comes with an "Apply σ" button (one undoable edit); no σ shows the reason instead.
void CalibratePanel::showRow(int row, const CalibrationRow& r) {
  // An analysis the run breaks is greyed, as its curves are, with the reason on hover.
  auto* name = new QTableWidgetItem(QString::fromStdString(r.id));
  if (!r.violations.empty()) {
    QStringList why;
    for (const std::string& v : r.violations) why << QString::fromStdString(v);
    name->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
    name->setToolTip(QStringLiteral("assumptions this run breaks (its σ guarantees nothing here):\n") +
                     why.join(QLatin1Char('\n')));
  }
  m_table->setItem(row, 0, name);
  if (r.sigma) {
    m_table->setItem(row, kSigmaColumn, new QTableWidgetItem(sigmaText(*r.sigma)));
    // An estimate's ε is marked ≈: its σ does not guarantee the target.
    auto* epsilon = new QTableWidgetItem((r.estimate ? QStringLiteral("≈ ") : QString()) + number(r.epsilon));
    if (r.estimate) {
      epsilon->setToolTip(QStringLiteral("%1 estimates ε: its σ does not guarantee the target; an upper bound's does")
                              .arg(QString::fromStdString(r.id)));
    }
    m_table->setItem(row, kEpsilonColumn, epsilon);
    auto* apply = new QPushButton(QStringLiteral("Apply"), m_table);
    apply->setObjectName(QStringLiteral("apply_%1").arg(QString::fromStdString(r.id)));
    apply->setToolTip(QStringLiteral("Set σ to %1 (undoable)").arg(number(*r.sigma, 10)));
    // Styles give push buttons a wide minimum; the table has no room for it.
    apply->setMaximumWidth(apply->fontMetrics().horizontalAdvance(apply->text()) + 16);
    const double sigma = *r.sigma;
    connect(apply, &QPushButton::clicked, this, [this, sigma] { m_model->setKnob(core::Knob::kSigma, sigma, 0); });
    m_table->setCellWidget(row, kApplyColumn, apply);
  } else {
    auto* item = new QTableWidgetItem(QStringLiteral("—"));
    item->setToolTip(QString::fromStdString(r.message));
    m_table->setItem(row, kSigmaColumn, item);
    auto* why = new QTableWidgetItem(QString::fromStdString(r.message));
    why->setToolTip(QString::fromStdString(r.message));
    m_table->setItem(row, kEpsilonColumn, why);
    m_table->removeCellWidget(row, kApplyColumn);
  }
}

// ---------------------------------------------------------------------------------------------
// Risk target

void CalibratePanel::setRiskKind(RiskKind kind) {
  const int index = m_riskKind->findData(static_cast<int>(kind));
  if (m_riskKind->currentIndex() != index) m_riskKind->setCurrentIndex(index);  // comes back here
  const bool tpr = kind == RiskKind::kTprAtFpr;
  m_fprLabel->setVisible(tpr);
  m_fpr->setVisible(tpr);
  m_riskTarget->setToolTip(tpr ? QStringLiteral("the largest TPR in (0, 1] an attack may reach at the FPR; at least "
                                                "the FPR (a coin flip already has TPR = FPR)")
                               : QStringLiteral("the largest advantage max (TPR − FPR), in [0, 1)"));
}

// The typed target, or nothing with the reason shown in place of the numbers.
std::optional<RiskTarget> CalibratePanel::readRiskTarget() {
  const bool tpr = m_riskKind->currentData().toInt() == static_cast<int>(RiskKind::kTprAtFpr);
  const std::optional<double> goal = parseTypedNumber(m_riskTarget->text());
  const std::optional<double> fpr = tpr ? parseTypedNumber(m_fpr->text()) : std::optional<double>(0.0);
  QString problem;
  if (!goal)
    problem = tpr ? QStringLiteral("TPR target: type a number in (0, 1]")
                  : QStringLiteral("advantage target: type a number in [0, 1)");
  if (goal && !fpr) problem = QStringLiteral("FPR: type a number in (0, 1)");
  std::optional<RiskTarget> target;
  if (problem.isEmpty()) {
    target = tpr ? RiskTarget::tprAt(*goal, *fpr) : RiskTarget::maxAdvantage(*goal);
    if (core::Status s = target->validate(); !s.isOk()) problem = uiMessage(s.message());
  }
  const bool fprBad = problem.startsWith(QStringLiteral("FPR"));
  markEntry(m_riskTarget, !problem.isEmpty() && !fprBad);
  markEntry(m_fpr, fprBad);
  if (problem.isEmpty()) return target;
  m_risk.reset();
  clearRiskValues();
  m_riskStatus->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(problem.toHtmlEscaped()));
  return std::nullopt;
}

void CalibratePanel::calibrateRisk() {
  const std::optional<RiskTarget> target = readRiskTarget();
  if (!target) return;
  const core::Params params = m_model->lastValid();
  m_riskStatus->setText(QStringLiteral("calibrating…"));
  m_riskJob.request(
      [params, goal = *target](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
        return calibrateRiskOn(params, goal, cancel, progress);
      },
      [this, params](std::any&& result) {
        auto* answer = std::any_cast<RiskAnswer>(&result);
        if (!answer) return;
        m_riskKnobs = withoutSigma(params);
        showRisk(answer->risk, answer->message);
        if (!answer->caveat.isEmpty()) {
          m_riskStatus->setText(
              m_riskStatus->text() +
              QStringLiteral("<br><span style='color:#b71c1c'>%1</span>").arg(answer->caveat.toHtmlEscaped()));
        }
      });
}

void CalibratePanel::clearRiskValues() {
  for (auto& [key, label] : m_riskValues) {
    label->setText(QStringLiteral("—"));
    label->setToolTip(QString());
  }
  m_riskApply->setEnabled(false);
}

void CalibratePanel::showRisk(const std::optional<RiskCalibration>& risk, const QString& message) {
  m_risk = risk;
  clearRiskValues();
  if (!risk) {
    m_riskStatus->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(message.toHtmlEscaped()));
    Q_EMIT riskCalibrated();
    return;
  }
  m_riskValues[QStringLiteral("sigma")]->setText(sigmaText(risk->sigma));
  m_riskValues[QStringLiteral("tpr")]->setText(number(risk->tpr));
  m_riskValues[QStringLiteral("fpr")]->setText(number(risk->fpr));
  m_riskValues[QStringLiteral("advantage")]->setText(number(risk->advantage));
  m_riskValues[QStringLiteral("epsilon")]->setText(
      QStringLiteral("%1 (δ = %2)").arg(number(risk->epsilon), number(m_model->lastValid().delta, 3)));
  m_riskApply->setEnabled(true);
  m_riskStatus->setText(
      risk->atLowerLimit
          ? QStringLiteral("Met even at the smallest σ: privacy does not limit σ here.")
          : QStringLiteral("Upper bounds from the pessimistic PLD curve: no attack does better at this σ."));
  refreshAccuracyCells();
  Q_EMIT riskCalibrated();
  maybeTrainAtEachSigma();
}

QString CalibratePanel::riskValue(const QString& field) const {
  const auto it = m_riskValues.find(field);
  return it == m_riskValues.end() ? QString() : it->second->text();
}

// ---------------------------------------------------------------------------------------------
// Accuracy at each σ

void CalibratePanel::setSession(Session* session) {
  m_session = session;
  connect(session, &Session::trainingFinished, this, &CalibratePanel::maybeTrainAtEachSigma);
  connect(session->training(), &TrainingController::dataReady, this, &CalibratePanel::maybeTrainAtEachSigma);
}

void CalibratePanel::trainAtEachSigma() { startAccuracy(true); }
void CalibratePanel::maybeTrainAtEachSigma() { startAccuracy(false); }

// One run per σ shown (ε rows and the risk row): the mechanism the analysis proves, the trainer's
// settings, σ fixed (no calibration), only the released model evaluated.
std::vector<std::pair<CalibratePanel::AccuracyKey, core::training::TrainerConfig>> CalibratePanel::accuracyTasks(
    const TrainingRequest& base) {
  std::vector<std::pair<std::string, double>> sigmas;
  if (isCurrent(m_rowsKnobs)) {
    for (const CalibrationRow& r : m_rows) {
      if (r.sigma) sigmas.emplace_back(r.id, *r.sigma);
    }
  }
  if (m_risk && isCurrent(m_riskKnobs)) sigmas.emplace_back(riskAccountant().info().id, m_risk->sigma);
  std::vector<std::pair<AccuracyKey, core::training::TrainerConfig>> tasks;
  for (const auto& [accountant, sigma] : sigmas) {
    const std::optional<Mechanism> m = mechanismFor(accountant);
    if (!m) continue;
    const AccuracyKey key{std::string(core::training::mechanismId(*m)), accountant, sigma};
    const bool known = m_accuracy.count(key) > 0 ||
                       std::any_of(tasks.begin(), tasks.end(), [&](const auto& t) { return t.first == key; });
    if (known) continue;
    core::training::TrainerConfig c = base.base;
    c.mechanism = *m;
    c.accountant = accountant;
    c.knobs.sigma = sigma;
    c.targetEpsilon.reset();
    c.evaluateEachEpoch = false;
    tasks.emplace_back(key, c);
  }
  return tasks;
}

namespace {

// On the worker: trains each task in turn and posts each cell as it is done.
std::any trainEach(
    std::vector<std::pair<std::tuple<std::string, std::string, double>, core::training::TrainerConfig>> tasks,
    core::training::DatasetCache& cache, const core::training::DatasetKey& key,
    const std::function<void(AccuracyCell)>& post, const std::atomic<bool>& cancel,
    const BackgroundJob::Progress& progress) {
  core::Result<core::training::CachedDataset> data = cache.get(key);
  if (!data) return QString::fromStdString(data.status().message());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (cancel) return {};
    auto& [id, config] = tasks[i];
    AccuracyCell cell{std::get<0>(id), std::get<1>(id), std::get<2>(id), {}, {}, {}};
    config.bounds = data->bounds;
    auto trainer = core::training::Trainer::create(config, data->data);
    core::training::TrainingControl control(&cancel);
    core::Result<core::training::TrainingResult> result =
        trainer ? (*trainer)->run(&control) : core::Result<core::training::TrainingResult>(trainer.status());
    if (cancel || (result && result->cancelled)) return {};
    if (result) {
      cell.accuracy = result->finalTestAccuracy;
      cell.epsilon = result->epsilon;
    } else {
      cell.message = result.status().message();
    }
    post(std::move(cell));
    progress(static_cast<double>(i + 1) / static_cast<double>(tasks.size()));
  }
  return true;
}

}  // namespace

// The trainer's request for the accuracy column (nullopt, said in the status, without one); a
// change of data or settings drops the accuracies trained before.
std::optional<TrainingRequest> CalibratePanel::accuracyRequest() {
  QString why;
  std::optional<TrainingRequest> request = m_session ? m_session->trainingRequest(&why) : std::nullopt;
  if (!request) {
    m_accuracyStatus->setText(m_session ? QStringLiteral("Accuracy: ") + why
                                        : QStringLiteral("Accuracy: no trainer to train with."));
    return std::nullopt;
  }
  AccuracySettings settings{request->data, withoutSigma(request->base.knobs), request->base.epochs, request->base.seed};
  if (settings != m_accuracySettings) {
    m_accuracySettings = settings;
    m_accuracy.clear();
    ++m_accuracyGeneration;
    m_accuracyJob.cancel();
  }
  refreshAccuracyCells();
  return request;
}

void CalibratePanel::startAccuracy(bool evenIfSlow) {
  const std::optional<TrainingRequest> request = accuracyRequest();
  if (!request) return;
  const std::optional<DataInfo> info = m_session->training()->dataInfo(request->data);
  m_accuracyButton->setEnabled(info.has_value());
  if (!info) {
    m_accuracyStatus->setText(QStringLiteral("Accuracy: train once (Training tab) to see what each σ gives."));
    return;
  }
  auto tasks = accuracyTasks(*request);
  const bool stale = (!m_rows.empty() && !isCurrent(m_rowsKnobs)) || (m_risk && !isCurrent(m_riskKnobs));
  if (tasks.empty()) {
    if (stale) {
      m_accuracyStatus->setText(
          QStringLiteral("Accuracy: the knobs changed since these σ were found — calibrate again to train them."));
    }
    return;
  }
  if (m_session->training()->running()) {
    m_accuracyStatus->setText(QStringLiteral("Accuracy: waiting for the trainer's run to finish…"));
    return;  // its trainingFinished brings us back
  }
  TrainingRequest estimate = *request;
  estimate.base.evaluateEachEpoch = false;
  estimate.mechanisms.assign(tasks.size(), Mechanism::kDpSgd);  // the cost is per run
  const double seconds = m_session->training()->estimateSeconds(estimate).value_or(0.0);
  if (!evenIfSlow && seconds > kAccuracyBudgetSeconds) {
    m_accuracyStatus->setText(QStringLiteral("Accuracy: training each σ would take about %1 s — press "
                                             "“Train at each σ”.")
                                  .arg(number(seconds, 2)));
    return;
  }
  launchAccuracy(std::move(tasks), *request);
}

// Trains the tasks on the accuracy job; each cell is posted as its run ends, tagged with the
// settings' generation so cells of older settings are dropped.
void CalibratePanel::launchAccuracy(std::vector<std::pair<AccuracyKey, core::training::TrainerConfig>> tasks,
                                    const TrainingRequest& request) {
  const std::uint64_t generation = m_accuracyGeneration;
  std::shared_ptr<core::training::DatasetCache> cache = m_session->datasets();
  auto post = [this, generation](AccuracyCell cell) {
    QMetaObject::invokeMethod(
        this, [this, generation, cell] { showAccuracy(generation, cell); }, Qt::QueuedConnection);
  };
  m_accuracyStatus->setText(QStringLiteral("Training at each σ (%1 runs)…").arg(tasks.size()));
  m_accuracyJob.request(
      [tasks = std::move(tasks), cache, key = request.data, post](const std::atomic<bool>& cancel,
                                                                  const BackgroundJob::Progress& progress) {
        return trainEach(tasks, *cache, key, post, cancel, progress);
      },
      [this, generation, source = request.data.source](std::any&& result) {
        if (generation != m_accuracyGeneration) return;
        if (auto* error = std::any_cast<QString>(&result)) {
          m_accuracyStatus->setText(QStringLiteral("Accuracy: ") + *error);
        } else if (result.has_value()) {
          m_accuracyStatus->setText(QStringLiteral("Test accuracy on %1: each σ trained with the trainer's settings "
                                                   "(σ fixed; the run uses the data's n).")
                                        .arg(QString::fromStdString(source)));
        }
      });
}

// Whether a σ found for `knobs` is still one for the knobs as they are now (σ aside).
bool CalibratePanel::isCurrent(const std::optional<core::Params>& knobs) const {
  return knobs && *knobs == withoutSigma(m_model->params());
}

void CalibratePanel::showAccuracy(std::uint64_t generation, const AccuracyCell& cell) {
  if (generation != m_accuracyGeneration) return;
  m_accuracy[AccuracyKey{cell.mechanism, cell.accountant, cell.sigma}] = cell;
  refreshAccuracyCells();
  Q_EMIT accuracyShown();
}

// The accuracy of the run for an analysis at σ: a percentage, "…" while it trains, "—" without.
QString CalibratePanel::accuracyText(const std::string& accountant, std::optional<double> sigma, bool current,
                                     QString* tooltip) const {
  const std::optional<Mechanism> m = mechanismFor(accountant);
  if (!sigma) return QStringLiteral("—");
  if (!current) {
    *tooltip = QStringLiteral("The knobs changed since this σ was found: calibrate again.");
    return QStringLiteral("—");
  }
  if (!m) {
    *tooltip = QStringLiteral("No mechanism of the trainer is proved by this analysis.");
    return QStringLiteral("—");
  }
  const QString name = QString::fromLatin1(core::training::mechanismName(*m).data());
  // Accuracies were trained with m_accuracySettings: they count while the knobs still agree.
  const bool trainedHere = m_accuracySettings && m_accuracySettings->knobs == withoutSigma(m_model->params());
  auto it = m_accuracy.find(AccuracyKey{std::string(core::training::mechanismId(*m)), accountant, *sigma});
  if (!trainedHere) it = m_accuracy.end();
  const bool loaded = m_session && m_accuracySettings && m_session->training()->dataInfo(m_accuracySettings->data);
  if (it == m_accuracy.end()) {
    *tooltip = loaded ? QStringLiteral("%1 at σ = %2: not trained yet").arg(name, number(*sigma))
                      : QStringLiteral("Train once (Training tab) to see accuracy.");
    return loaded ? QStringLiteral("…") : QStringLiteral("—");
  }
  const AccuracyCell& c = it->second;
  if (!c.accuracy) {
    *tooltip = QString::fromStdString(c.message);
    return QStringLiteral("—");
  }
  *tooltip = QStringLiteral("%1 trained at σ = %2 with the trainer's settings: test accuracy %3 %")
                 .arg(name, number(*sigma), number(100.0 * *c.accuracy, 4));
  if (c.epsilon) *tooltip += QStringLiteral("; its run reports ε = %1 (the data's n)").arg(number(*c.epsilon, 4));
  return QStringLiteral("%1 %").arg(100.0 * *c.accuracy, 0, 'f', 1);
}

void CalibratePanel::refreshAccuracyCells() {
  for (int i = 0; i < static_cast<int>(m_rows.size()) && i < m_table->rowCount(); ++i) {
    const CalibrationRow& r = m_rows[static_cast<std::size_t>(i)];
    QString tooltip;
    auto* item = new QTableWidgetItem(accuracyText(r.id, r.sigma, isCurrent(m_rowsKnobs), &tooltip));
    item->setToolTip(tooltip);
    m_table->setItem(i, kAccuracyColumn, item);
  }
  QString tooltip;
  QLabel* label = m_riskValues[QStringLiteral("accuracy")];
  label->setText(accuracyText(riskAccountant().info().id, m_risk ? std::optional<double>(m_risk->sigma) : std::nullopt,
                              isCurrent(m_riskKnobs), &tooltip));
  label->setToolTip(tooltip);
}

}  // namespace dpx::ui
