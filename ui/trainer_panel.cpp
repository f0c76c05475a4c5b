#include "trainer_panel.h"

#include <thread>

#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSplitter>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "common/format.h"
#include "compute/analytics.h"
#include "knob_widget.h"
#include "training/dataset.h"

namespace dpx::ui {

using namespace core::training;

namespace {

QColor mechanismColor(const QString& id) {
  if (id == QLatin1String("dp-sgld")) return QColor(0x2c, 0xa0, 0x2c);
  if (id == QLatin1String("dp-sgd")) return QColor(0x1f, 0x77, 0xb4);
  if (id == QLatin1String("cyclic")) return QColor(0x94, 0x67, 0xbd);
  if (id == QLatin1String("outpert")) return QColor(0x8c, 0x56, 0x4b);
  if (id == QLatin1String("sgld-posterior")) return QColor(0x17, 0xbe, 0xcf);
  return QColor(0x50, 0x50, 0x50);
}

QString number(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }

}  // namespace

TrainerPanel::TrainerPanel(ParameterModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  setObjectName(QStringLiteral("trainerPanel"));
  auto* outer = new QHBoxLayout(this);
  auto* controls = new QWidget(this);
  controls->setMaximumWidth(380);
  auto* left = new QVBoxLayout(controls);
  left->setContentsMargins(0, 0, 0, 0);

  auto* dataBox = new QGroupBox(QStringLiteral("Data"), controls);
  auto* dataForm = new QFormLayout(dataBox);
  m_dataset = new QComboBox(dataBox);
  m_dataset->setObjectName(QStringLiteral("datasetBox"));
  for (const std::string& s : builtinSources()) m_dataset->addItem(QString::fromStdString(s), QString::fromStdString(s));
  if (m_dataset->findData(QStringLiteral("builtin:fashion-mnist")) < 0) {
    m_dataset->addItem(QStringLiteral("builtin:fashion-mnist (install dataset-fashion-mnist)"), QString());
    if (auto* items = qobject_cast<QStandardItemModel*>(m_dataset->model())) items->item(m_dataset->count() - 1)->setEnabled(false);
  }
  m_dataset->addItem(QStringLiteral("Open a CSV, LIBSVM or IDX file…"), QStringLiteral("open"));
  m_dataset->setToolTip(QStringLiteral("Rows are scaled to unit norm (per record, so the scaling costs no privacy)."));
  dataForm->addRow(QStringLiteral("Dataset"), m_dataset);
  left->addWidget(dataBox);

  auto* mechBox = new QGroupBox(QStringLiteral("Mechanisms, side by side"), controls);
  auto* mechGrid = new QGridLayout(mechBox);
  int i = 0;
  for (Mechanism m : allMechanisms()) {
    auto* box = new QCheckBox(QString::fromLatin1(mechanismId(m).data()), mechBox);
    box->setObjectName(QStringLiteral("mechanism_%1").arg(QString::fromLatin1(mechanismId(m).data())));
    box->setChecked(m == Mechanism::kDpSgld || m == Mechanism::kDpSgd || m == Mechanism::kSgd);
    const auto accountants = accountantsFor(m);
    box->setToolTip(QString::fromLatin1(mechanismName(m).data()) + QStringLiteral(" — ") +
                    (accountants.empty() ? QStringLiteral("non-private baseline")
                                         : QStringLiteral("privacy proven by the %1 accountant")
                                               .arg(QString::fromLatin1(accountants.front().data()))));
    m_mechanisms[m] = box;
    mechGrid->addWidget(box, i / 2, i % 2);
    ++i;
  }
  left->addWidget(mechBox);

  auto* optBox = new QGroupBox(QStringLiteral("Training"), controls);
  auto* form = new QFormLayout(optBox);
  m_batch = new QSpinBox(optBox);
  m_batch->setRange(1, 100000);
  m_batch->setValue(64);
  m_eta = new QDoubleSpinBox(optBox);
  m_eta->setDecimals(4);
  m_eta->setRange(1e-4, 10.0);
  m_eta->setValue(0.5);
  m_eta->setToolTip(QStringLiteral("Step size. dp-sgld needs η < 1/β (β ≈ 1 + λ for unit-norm rows); for the "
                                   "decreasing schedule η_k = 1/(2β + λk/2) is used instead."));
  m_lambda = new QDoubleSpinBox(optBox);
  m_lambda->setDecimals(5);
  m_lambda->setRange(0.0, 10.0);
  m_lambda->setSingleStep(0.001);
  m_lambda->setValue(0.001);
  m_epochs = new QSpinBox(optBox);
  m_epochs->setObjectName(QStringLiteral("epochsBox"));
  m_epochs->setRange(1, 1000);
  m_epochs->setValue(20);
  m_targetMode = new QCheckBox(QStringLiteral("calibrate σ to a target ε"), optBox);
  m_targetMode->setChecked(true);
  m_target = new QLineEdit(QStringLiteral("3"), optBox);
  m_target->setToolTip(QStringLiteral("Each mechanism's noise is calibrated through its own accountant so that all "
                                      "of them are compared at the same (ε, δ) — as in seed 000 Table 1."));
  m_threads = new QSpinBox(optBox);
  m_threads->setRange(1, 256);
  m_threads->setValue(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  m_seed = new QSpinBox(optBox);
  m_seed->setRange(0, 1'000'000);
  m_seed->setValue(1);
  form->addRow(QStringLiteral("batch size m"), m_batch);
  form->addRow(QStringLiteral("step size η"), m_eta);
  form->addRow(QStringLiteral("λ (L2)"), m_lambda);
  form->addRow(QStringLiteral("epochs"), m_epochs);
  form->addRow(m_targetMode, m_target);
  form->addRow(QStringLiteral("threads"), m_threads);
  form->addRow(QStringLiteral("seed"), m_seed);
  // One short line: a word-wrapped label in a squeezed form gets clipped.
  auto* note = new QLabel(QStringLiteral("σ, δ, L, schedule: the knobs on the left"), optBox);
  note->setToolTip(QStringLiteral("The noise multiplier σ (unless calibrated), δ, the clip norm L and the schedule "
                                  "come from the explorer's parameter panel."));
  note->setStyleSheet(QStringLiteral("color: palette(mid);"));
  form->addRow(note);
  left->addWidget(optBox);

  auto* buttons = new QHBoxLayout();
  m_start = new QPushButton(QStringLiteral("Start"), controls);
  m_start->setObjectName(QStringLiteral("startButton"));
  m_pause = new QPushButton(QStringLiteral("Pause"), controls);
  m_pause->setObjectName(QStringLiteral("pauseButton"));
  m_cancel = new QPushButton(QStringLiteral("Cancel"), controls);
  m_cancel->setObjectName(QStringLiteral("cancelButton"));
  buttons->addWidget(m_start);
  buttons->addWidget(m_pause);
  buttons->addWidget(m_cancel);
  left->addLayout(buttons);
  m_progress = new QProgressBar(controls);
  m_progress->setRange(0, 1000);
  left->addWidget(m_progress);
  m_status = new QLabel(QStringLiteral("Ready."), controls);
  m_status->setWordWrap(true);
  left->addWidget(m_status);
  m_results = new QTableWidget(0, 5, controls);
  m_results->setObjectName(QStringLiteral("trainingResults"));
  m_results->setHorizontalHeaderLabels({QStringLiteral("Mechanism"), QStringLiteral("test acc."), QStringLiteral("ε"),
                                        QStringLiteral("σ"), QStringLiteral("steps")});
  m_results->verticalHeader()->setVisible(false);
  m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_results->horizontalHeader()->setStretchLastSection(true);
  m_results->horizontalHeader()->setMinimumSectionSize(24);
  m_results->setMinimumHeight(130);
  left->addWidget(m_results, 1);
  m_explore = new QPushButton(QStringLiteral("Explore this run in the charts"), controls);
  m_explore->setToolTip(QStringLiteral("Set n, m, K, σ, η, L and λ of the explorer to the last trained run (one undo step)."));
  left->addWidget(m_explore);
  outer->addWidget(controls);

  auto* charts = new QSplitter(Qt::Vertical, this);
  m_accuracy = new ChartPanel(QStringLiteral("Accuracy per epoch"), QStringLiteral("epoch"), QStringLiteral("accuracy"), charts);
  m_accuracy->setObjectName(QStringLiteral("accuracyChart"));
  m_accuracy->setFixedRange(Qt::Vertical, std::make_pair(0.0, 1.0));
  m_epsilon = new ChartPanel(QStringLiteral("ε spent per epoch (at δ)"), QStringLiteral("epoch"), QStringLiteral("ε"), charts);
  m_epsilon->setObjectName(QStringLiteral("trainingEpsilonChart"));
  charts->addWidget(m_accuracy);
  charts->addWidget(m_epsilon);
  outer->addWidget(charts, 1);

  connect(m_start, &QPushButton::clicked, this, &TrainerPanel::start);
  connect(m_pause, &QPushButton::clicked, this, [this] {
    m_controller.setPaused(!m_controller.paused());
    updateButtons();
  });
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    m_controller.cancel();
    m_status->setText(QStringLiteral("Cancelling…"));
  });
  connect(m_dataset, &QComboBox::activated, this, [this](int index) {
    if (m_dataset->itemData(index).toString() != QLatin1String("open")) return;
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open a dataset"), QString(),
                                                      QStringLiteral("Datasets (*.csv *.tsv *.gz *.svm *.libsvm *.txt *-ubyte);;All files (*)"));
    if (!path.isEmpty()) setSource(path);
  });
  connect(m_explore, &QPushButton::clicked, this, [this] {
    if (m_controller.results().empty()) return;
    Q_EMIT exploreRun(m_controller.results().back().run.accountantParams);
  });
  connect(&m_controller, &TrainingController::dataLoaded, this, [this](const QString& d) { m_status->setText(d); });
  connect(&m_controller, &TrainingController::runStarted, this, [this](const QString& id, const QString& details) {
    m_status->setText(QStringLiteral("%1: %2").arg(id, details));
  });
  connect(&m_controller, &TrainingController::progress, this, [this](double f, const QString&) {
    m_progress->setValue(static_cast<int>(1000 * f));
  });
  connect(&m_controller, &TrainingController::epochDone, this, &TrainerPanel::onEpoch);
  connect(&m_controller, &TrainingController::runFinished, this, &TrainerPanel::onRunFinished);
  connect(&m_controller, &TrainingController::failed, this, [this](const QString& message) {
    m_status->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(message.toHtmlEscaped()));
  });
  connect(&m_controller, &TrainingController::finished, this, [this](bool cancelled) {
    if (cancelled) m_status->setText(QStringLiteral("Cancelled; ε shown is for the steps that ran."));
    updateButtons();
    Q_EMIT trainingFinished();
  });
  updateButtons();
}

TrainerPanel::~TrainerPanel() {
  m_controller.cancel();
  m_controller.wait();
}

void TrainerPanel::setSource(const QString& source) {
  int index = m_dataset->findData(source);
  if (index < 0) {
    m_dataset->insertItem(m_dataset->count() - 1, source, source);
    index = m_dataset->findData(source);
  }
  m_dataset->setCurrentIndex(index);
}

QString TrainerPanel::currentSource() const { return m_dataset->currentData().toString(); }

void TrainerPanel::updateButtons() {
  const bool running = m_controller.running();
  m_start->setEnabled(!running);
  m_pause->setEnabled(running);
  m_cancel->setEnabled(running);
  m_pause->setText(m_controller.paused() ? QStringLiteral("Resume") : QStringLiteral("Pause"));
  m_explore->setEnabled(!running && !m_controller.results().empty());
}

std::optional<TrainingRequest> TrainerPanel::buildRequest(QString* error) const {
  const QString source = currentSource();
  if (source.isEmpty() || source == QLatin1String("open")) {
    *error = QStringLiteral("Choose a dataset first (Fashion-MNIST needs the Debian package dataset-fashion-mnist).");
    return std::nullopt;
  }
  TrainingRequest request;
  request.source = source;
  for (const auto& [m, box] : m_mechanisms) {
    if (box->isChecked()) request.mechanisms.push_back(m);
  }
  if (request.mechanisms.empty()) {
    *error = QStringLiteral("Tick at least one mechanism.");
    return std::nullopt;
  }
  TrainerConfig& c = request.base;
  c.knobs = m_model->lastValid();
  c.knobs.m = m_batch->value();
  c.knobs.eta = m_eta->value();
  c.knobs.lambda = m_lambda->value();
  c.epochs = m_epochs->value();
  c.threads = m_threads->value();
  c.seed = static_cast<std::uint64_t>(m_seed->value());
  if (m_targetMode->isChecked()) {
    const std::optional<double> target = parseTypedNumber(m_target->text());
    if (!target || !(*target > 0.0)) {
      *error = QStringLiteral("The target ε must be a positive number.");
      return std::nullopt;
    }
    c.targetEpsilon = *target;
  }
  return request;
}

void TrainerPanel::start() {
  QString error;
  const std::optional<TrainingRequest> request = buildRequest(&error);
  if (!request) {
    m_status->setText(error);
    return;
  }
  const QString source = request->source;
  m_history.clear();
  m_results->setRowCount(0);
  m_accuracy->removeCurvesExcept({});
  m_epsilon->removeCurvesExcept({});
  m_progress->setValue(0);
  m_status->setText(QStringLiteral("Loading %1…").arg(source));
  m_controller.start(*request);
  updateButtons();
}

void TrainerPanel::onEpoch(const QString& mechanism, const EpochRecord& record) {
  auto& history = m_history[mechanism];
  history.push_back(record);
  QVector<QPointF> test;
  QVector<QPointF> train;
  QVector<QPointF> eps;
  for (const EpochRecord& r : history) {
    test.push_back({static_cast<double>(r.epoch), r.testAccuracy});
    train.push_back({static_cast<double>(r.epoch), r.trainAccuracy});
    if (r.epsilonSpent) eps.push_back({static_cast<double>(r.epoch), *r.epsilonSpent});
  }
  CurveStyle style;
  style.color = mechanismColor(mechanism);
  style.tooltip = QStringLiteral("test accuracy on held-out records");
  m_accuracy->setCurve(mechanism + QStringLiteral(":test"), mechanism + QStringLiteral(" test"), test, style);
  CurveStyle dashed = style;
  dashed.pen = Qt::DashLine;
  dashed.width = 1.4;
  dashed.tooltip = QStringLiteral("training accuracy: a diagnostic that reads the private data (not released)");
  m_accuracy->setCurve(mechanism + QStringLiteral(":train"), mechanism + QStringLiteral(" train"), train, dashed);
  m_accuracy->refreshAxes();
  if (!eps.isEmpty()) {
    CurveStyle e = style;
    e.tooltip = QStringLiteral("ε of releasing the model at that epoch, per the mechanism's accountant");
    m_epsilon->setCurve(mechanism, mechanism, eps, e);
    m_epsilon->refreshAxes();
  }
}

void TrainerPanel::onRunFinished(const QString& mechanism) {
  if (m_controller.results().empty()) return;
  const TrainingResult& r = m_controller.results().back();
  const int row = m_results->rowCount();
  m_results->insertRow(row);
  m_results->setItem(row, 0, new QTableWidgetItem(mechanism));
  m_results->setItem(row, 1, new QTableWidgetItem(number(100.0 * r.finalTestAccuracy) + QStringLiteral(" %")));
  auto* eps = new QTableWidgetItem(r.epsilon ? number(*r.epsilon) : QStringLiteral("∞"));
  eps->setToolTip(r.epsilon ? QStringLiteral("%1 at δ = %2").arg(QString::fromStdString(r.run.accountant), number(r.delta))
                            : QStringLiteral("not private: no accountant proves any ε"));
  m_results->setItem(row, 2, eps);
  m_results->setItem(row, 3, new QTableWidgetItem(r.epsilon ? number(r.run.sigma) : QStringLiteral("—")));
  m_results->setItem(row, 4, new QTableWidgetItem(QString::number(r.stepsDone)));
  if (!r.run.violations.empty()) {
    QString all;
    for (const std::string& v : r.run.violations) all += QString::fromStdString(v) + QLatin1Char('\n');
    for (int c = 0; c < 5; ++c) m_results->item(row, c)->setToolTip(QStringLiteral("Violated: ") + all.trimmed());
    m_results->item(row, 0)->setForeground(QColor(183, 28, 28));
  }
  m_results->resizeColumnsToContents();
  updateButtons();
}

}  // namespace dpx::ui
