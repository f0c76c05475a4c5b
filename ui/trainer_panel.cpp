#include "trainer_panel.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "common/format.h"
#include "common/parallel.h"
#include "compute/analytics.h"
#include "knob_widget.h"
#include "training/dataset.h"

namespace dpx::ui {

using namespace core::training;

namespace {

QString number(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }
QString durationText(double seconds) { return QString::fromStdString(core::formatDuration(seconds)); }

// "60000 training · 10000 test records · 3969 ScatterNet features · 10 classes".
QString dataInfoText(const DataInfo& info) {
  return QStringLiteral("%1 training · %2 test records · %3 %4features · %5 classes")
      .arg(info.trainRecords)
      .arg(info.testRecords)
      .arg(info.dimension)
      .arg(info.features == FeatureKind::kScatterNet ? QStringLiteral("ScatterNet ") : QString())
      .arg(info.classes);
}

// The results table: the value a run used for a knob, with the knob's own value beside it when
// they differ, and the reason in the tooltip.
QTableWidgetItem* knobCell(const char* key, double used, const ResolvedRun& run, const QString& symbol) {
  auto* item = new QTableWidgetItem(number(used));
  item->setToolTip(QStringLiteral("%1 = %2 (the knob's value)").arg(symbol, number(used, 6)));
  for (const KnobOverride& o : run.overrides) {
    if (o.knob != key) continue;
    // Shown beside the knob only when they differ in the digits shown (a calibration that lands
    // on the knob's σ is no news); the tooltip keeps the full values.
    if (number(o.usedValue) != number(o.knobValue)) {
      item->setText(QStringLiteral("%1 (knob %2)").arg(number(o.usedValue), number(o.knobValue)));
    }
    item->setToolTip(
        QStringLiteral("%1 = %2 used instead of the knob's %3: %4")
            .arg(symbol, number(o.usedValue, 6), number(o.knobValue, 6), QString::fromStdString(o.reason)));
    item->setBackground(QColor(0xe3, 0xf2, 0xfd));
  }
  return item;
}

}  // namespace

TrainerPanel::TrainerPanel(Session* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_model(session->model()), m_controller(*session->training()) {
  setObjectName(QStringLiteral("trainerPanel"));
  auto* outer = new QHBoxLayout(this);
  auto* controls = new QWidget(this);
  controls->setMaximumWidth(420);
  buildControls(controls);
  outer->addWidget(controls);

  // Right: the two per-epoch charts side by side, the results (wide: used values beside knobs)
  // under them.
  auto* right = new QSplitter(Qt::Vertical, this);
  auto* charts = new QSplitter(Qt::Horizontal, right);
  m_accuracy = new ChartPanel(QStringLiteral("Accuracy per epoch (solid: test, dashed: train)"),
                              QStringLiteral("epoch"), QStringLiteral("accuracy"), charts);
  m_accuracy->setObjectName(QStringLiteral("accuracyChart"));
  m_accuracy->setFixedRange(Qt::Vertical, std::make_pair(0.0, 1.0));
  m_epsilon =
      new ChartPanel(QStringLiteral("ε spent per epoch (at δ)"), QStringLiteral("epoch"), QStringLiteral("ε"), charts);
  m_epsilon->setObjectName(QStringLiteral("trainingEpsilonChart"));
  charts->addWidget(m_accuracy);
  charts->addWidget(m_epsilon);
  right->addWidget(charts);
  right->addWidget(m_results);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);
  outer->addWidget(right, 1);

  m_redrawTimer.setSingleShot(true);
  m_redrawTimer.setInterval(kEpochRedrawMs);
  connect(&m_redrawTimer, &QTimer::timeout, this, &TrainerPanel::redrawEpochs);
  m_liveTimer.setSingleShot(true);
  m_liveTimer.setInterval(kLiveDebounceMs);
  connect(&m_liveTimer, &QTimer::timeout, this, &TrainerPanel::onSettled);
  connect(m_model, &ParameterModel::paramsChanged, this, [this] {
    refreshSummary();
    if (m_live->isChecked()) m_liveTimer.start();
  });
  connect(m_model, &ParameterModel::trainerChanged, this, [this] {
    refreshFromModel();
    if (m_live->isChecked()) m_liveTimer.start();
  });
  connect(m_session, &Session::headlineEpsilonChanged, this, &TrainerPanel::refreshSummary);
  connectController();
  refreshFromModel();
  updateButtons();
}

TrainerPanel::~TrainerPanel() = default;

void TrainerPanel::buildControls(QWidget* controls) {
  auto* left = new QVBoxLayout(controls);
  left->setContentsMargins(0, 0, 0, 0);
  left->addWidget(buildDataBox(controls));
  left->addWidget(buildMechanismBox(controls));
  left->addWidget(buildRunBox(controls));
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
  m_status->setObjectName(QStringLiteral("trainerStatus"));
  m_status->setWordWrap(true);
  left->addWidget(m_status);
  left->addStretch(1);
  m_explore = new QPushButton(QStringLiteral("Explore this run in the charts"), controls);
  m_explore->setToolTip(
      QStringLiteral("Set the knobs to the last run as trained: its n, K, σ, η, L and β (one undo step)."));
  left->addWidget(m_explore);
  buildResultsTable();
  connectControls();
}

QGroupBox* TrainerPanel::buildDataBox(QWidget* parent) {
  auto* box = new QGroupBox(QStringLiteral("Data"), parent);
  auto* layout = new QVBoxLayout(box);
  m_dataset = new QComboBox(box);
  m_dataset->setObjectName(QStringLiteral("datasetBox"));
  for (const std::string& s : builtinSources())
    m_dataset->addItem(QString::fromStdString(s), QString::fromStdString(s));
  if (m_dataset->findData(QStringLiteral("builtin:fashion-mnist")) < 0) {
    m_dataset->addItem(QStringLiteral("builtin:fashion-mnist (install dataset-fashion-mnist)"), QString());
    if (auto* items = qobject_cast<QStandardItemModel*>(m_dataset->model())) {
      items->item(m_dataset->count() - 1)->setEnabled(false);
    }
  }
  m_dataset->addItem(QStringLiteral("Open a CSV, LIBSVM or IDX file…"), QStringLiteral("open"));
  m_dataset->setToolTip(
      QStringLiteral("Rows are scaled to unit norm (per record, so the scaling costs no privacy). "
                     "Loading a dataset sets n to its training size (see n in the Parameters panel)."));
  m_features = new QComboBox(box);
  m_features->setObjectName(QStringLiteral("featuresBox"));
  m_features->addItem(QStringLiteral("features: raw values"), static_cast<int>(FeatureKind::kRaw));
  m_features->addItem(QStringLiteral("features: ScatterNet (images)"), static_cast<int>(FeatureKind::kScatterNet));
  m_features->setToolTip(
      QStringLiteral("ScatterNet: the scattering transform of each image (J = 2, L = 8, order 2; Oyallon & "
                     "Mallat 2015) and a per-example GroupNorm(27), the features of Tramèr & Boneh 2021 — a "
                     "function of each image alone, so it costs no privacy. Computed once per dataset (seconds "
                     "for Fashion-MNIST) and kept in the dataset cache; then rows are scaled like raw ones."));
  m_dataInfo = new QLabel(QStringLiteral("not loaded yet"), box);
  m_dataInfo->setObjectName(QStringLiteral("dataInfo"));
  m_dataInfo->setStyleSheet(QStringLiteral("color: palette(mid);"));
  m_dataInfo->setWordWrap(true);
  auto* row = new QHBoxLayout();
  row->addWidget(m_dataset, 3);
  row->addWidget(m_features, 2);
  layout->addLayout(row);
  m_modelKind = new QComboBox(box);
  m_modelKind->setObjectName(QStringLiteral("modelBox"));
  m_modelKind->addItem(QStringLiteral("model: softmax regression (linear, convex)"),
                       static_cast<int>(ModelKind::kLinear));
  m_modelKind->addItem(QStringLiteral("model: MLP, one hidden layer (tabular)"), static_cast<int>(ModelKind::kMlp));
  m_modelKind->addItem(QStringLiteral("model: CNN on 28 × 28 pixels (26 010 weights)"),
                       static_cast<int>(ModelKind::kCnn));
  m_modelKind->addItem(QStringLiteral("model: CNN on ScatterNet features (33 066 weights)"),
                       static_cast<int>(ModelKind::kScatterCnn));
  m_modelKind->setToolTip(
      QStringLiteral("Softmax regression is convex: every accountant applies. The networks are not: their ε is "
                     "composition's (rdp, gdp, pld, sgmcmc), so dp-sgld, cyclic and output perturbation cannot train "
                     "them. CNN: Papernot et al. 2020's tanh version of the TensorFlow Privacy MNIST CNN, as Tramèr "
                     "& Boneh 2021 train it end to end on x/255. ScatterNet CNN: Tramèr & Boneh 2021's CNN on the "
                     "81 × 7 × 7 scattering. MLP: one hidden ReLU layer (Bu et al. 2020's Adult model has 16 "
                     "units). Every example's gradient is clipped exactly over all layers."));
  m_hidden = new QSpinBox(box);
  m_hidden->setObjectName(QStringLiteral("hiddenBox"));
  m_hidden->setRange(1, 4096);
  m_hidden->setValue(16);
  m_hidden->setSuffix(QStringLiteral(" hidden units"));
  m_hidden->setToolTip(QStringLiteral("The MLP's hidden layer width"));
  auto* modelRow = new QHBoxLayout();
  modelRow->addWidget(m_modelKind, 3);
  modelRow->addWidget(m_hidden, 2);
  layout->addLayout(modelRow);
  layout->addWidget(m_dataInfo);
  return box;
}

// A check box per mechanism; ticking one is an undoable edit of the trainer's settings.
QGroupBox* TrainerPanel::buildMechanismBox(QWidget* parent) {
  auto* box = new QGroupBox(QStringLiteral("Mechanisms, trained side by side"), parent);
  auto* grid = new QGridLayout(box);
  int i = 0;
  for (const MechanismInfo& info : mechanismInfos()) {
    const QString id = QString::fromLatin1(info.id.data());
    auto* check = new QCheckBox(id, box);
    check->setObjectName(QStringLiteral("mechanism_%1").arg(id));
    check->setToolTip(QString::fromLatin1(info.name.data()) + QStringLiteral(" (") +
                      QString::fromLatin1(info.citation.data()) + QStringLiteral(") — ") +
                      (info.accountants.empty() ? QStringLiteral("non-private baseline")
                                                : QStringLiteral("privacy proven by the %1 accountant")
                                                      .arg(QString::fromLatin1(info.accountants.front().data()))));
    m_mechanisms[info.mechanism] = check;
    grid->addWidget(check, i / 2, i % 2);
    connect(check, &QCheckBox::toggled, this, [this, id](bool on) {
      editTrainer(
          [&](TrainerSettings& t) {
            t.mechanisms.removeAll(id);
            if (on) t.mechanisms << id;
          },
          (on ? QStringLiteral("train %1") : QStringLiteral("do not train %1")).arg(id));
    });
    ++i;
  }
  return box;
}

// The knobs a run reads (from the Parameters panel), the calibration target, threads, seed, live.
QGroupBox* TrainerPanel::buildRunBox(QWidget* parent) {
  auto* box = new QGroupBox(QStringLiteral("Run — knobs from the Parameters panel"), parent);
  auto* form = new QFormLayout(box);
  m_knobSummary = new QLabel(box);
  m_knobSummary->setObjectName(QStringLiteral("knobSummary"));
  m_knobSummary->setWordWrap(true);
  m_knobSummary->setToolTip(
      QStringLiteral("A run reads these from the Parameters panel (one set of knobs): edit them "
                     "there, undo covers them. The training set decides n."));
  form->addRow(m_knobSummary);
  m_calibrate = new QCheckBox(QStringLiteral("calibrate each to ε ="), box);
  m_calibrate->setObjectName(QStringLiteral("calibrateBox"));
  m_calibrate->setToolTip(
      QStringLiteral("Each mechanism's noise is calibrated through its own accountant so that all "
                     "of them are compared at the same (ε, δ), as in Ryffel et al. 2022, Table 1."));
  m_target = new QLineEdit(box);
  m_target->setObjectName(QStringLiteral("targetEntry"));
  m_target->setToolTip(
      QStringLiteral("The target ε. Empty: the ε the accountant table shows (rdp) for the current "
                     "knobs, which follows every knob."));
  form->addRow(m_calibrate, m_target);
  m_threads = new QSpinBox(box);
  m_threads->setRange(1, 256);
  m_threads->setValue(m_session->threads());
  m_seed = new QSpinBox(box);
  m_seed->setRange(0, 1'000'000);
  m_seed->setValue(static_cast<int>(m_session->seed()));
  m_seed->setToolTip(
      QStringLiteral("Seeds the train/test split and every random stream: a run is bit-identical "
                     "for a seed whatever the thread count."));
  auto* threadsSeed = new QHBoxLayout();
  threadsSeed->addWidget(new QLabel(QStringLiteral("threads"), box));
  threadsSeed->addWidget(m_threads);
  threadsSeed->addSpacing(12);
  threadsSeed->addWidget(new QLabel(QStringLiteral("seed"), box));
  threadsSeed->addWidget(m_seed);
  threadsSeed->addStretch(1);
  form->addRow(threadsSeed);
  m_live = new QCheckBox(QStringLiteral("Live: retrain when the knobs settle"), box);
  m_live->setObjectName(QStringLiteral("liveBox"));
  m_live->setToolTip(QStringLiteral("After a change of the knobs, cancel the running training and start again, when "
                                    "this machine can finish the run within %1 s (measured).")
                         .arg(kLiveBudgetSeconds));
  form->addRow(m_live);
  return box;
}

void TrainerPanel::buildResultsTable() {
  m_results = new QTableWidget(0, 7, this);
  m_results->setObjectName(QStringLiteral("trainingResults"));
  m_results->setHorizontalHeaderLabels({QStringLiteral("Mechanism"), QStringLiteral("test acc."), QStringLiteral("ε"),
                                        QStringLiteral("σ"), QStringLiteral("η"), QStringLiteral("L"),
                                        QStringLiteral("K")});
  m_results->verticalHeader()->setVisible(false);
  m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_results->horizontalHeader()->setStretchLastSection(true);
  m_results->horizontalHeader()->setMinimumSectionSize(24);
  m_results->setMinimumHeight(130);
  m_results->setToolTip(
      QStringLiteral("Values a run used instead of a knob are shaded, with the knob's value beside "
                     "them; hover for the reason."));
}

void TrainerPanel::connectControls() {
  connect(m_start, &QPushButton::clicked, this, &TrainerPanel::start);
  connect(m_pause, &QPushButton::clicked, this, [this] {
    m_controller.setPaused(!m_controller.paused());
    updateButtons();
  });
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    m_controller.cancel();
    m_status->setText(QStringLiteral("Cancelling…"));
  });
  connect(m_dataset, &QComboBox::activated, this, &TrainerPanel::onDatasetChosen);
  connect(m_features, &QComboBox::activated, this,
          [this](int index) { setFeatures(static_cast<FeatureKind>(m_features->itemData(index).toInt())); });
  connect(m_modelKind, &QComboBox::activated, this, [this](int index) {
    ModelSpec spec = m_model->trainer().model;
    spec.kind = static_cast<ModelKind>(m_modelKind->itemData(index).toInt());
    spec.activation.reset();  // each model's own default
    setModel(spec);
  });
  connect(m_hidden, &QSpinBox::editingFinished, this, [this] {
    ModelSpec spec = m_model->trainer().model;
    spec.hidden = m_hidden->value();
    setModel(spec);
  });
  connect(m_calibrate, &QCheckBox::toggled, this, [this](bool on) {
    editTrainer([&](TrainerSettings& t) { t.calibrate = on; },
                on ? QStringLiteral("calibrate to a target ε") : QStringLiteral("train at the σ knob"));
  });
  connect(m_target, &QLineEdit::editingFinished, this, &TrainerPanel::onTargetTyped);
  connect(m_threads, &QSpinBox::valueChanged, m_session, &Session::setThreads);
  connect(m_seed, &QSpinBox::valueChanged, this, [this](int seed) {
    m_session->setSeed(static_cast<std::uint64_t>(seed));
    ensureDataLoaded();
    if (m_live->isChecked()) m_liveTimer.start();
  });
  connect(m_live, &QCheckBox::toggled, this, [this](bool on) {
    if (on) onSettled();
  });
  connect(m_explore, &QPushButton::clicked, this, [this] {
    if (m_controller.results().empty()) return;
    Q_EMIT exploreRun(m_controller.results().back().run.accountantParams);
  });
}

void TrainerPanel::onDatasetChosen(int index) {
  const QString data = m_dataset->itemData(index).toString();
  if (data != QLatin1String("open")) {
    setSource(data);
    return;
  }
  const QString path = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open a dataset"), QString(),
      QStringLiteral("Datasets (*.csv *.tsv *.gz *.svm *.libsvm *.txt *-ubyte);;All files (*)"));
  if (path.isEmpty()) {
    refreshFromModel();  // back to the current source
    return;
  }
  setSource(path);
}

void TrainerPanel::onTargetTyped() {
  const QString text = m_target->text().trimmed();
  std::optional<double> target;
  if (!text.isEmpty()) {
    target = parseTypedNumber(text);
    if (!target || !(*target > 0.0)) {
      m_target->setStyleSheet(QStringLiteral("background: #ffebee;"));
      m_status->setText(QStringLiteral("The target ε must be a positive number (empty: the table's ε)."));
      return;
    }
  }
  m_target->setStyleSheet(QString());
  editTrainer(
      [&](TrainerSettings& t) { t.targetEpsilon = target; },
      target ? QStringLiteral("target ε = %1").arg(number(*target)) : QStringLiteral("target ε from the table"));
}

void TrainerPanel::connectController() {
  connect(&m_controller, &TrainingController::dataReady, this, &TrainerPanel::onDataReady);
  connect(&m_controller, &TrainingController::dataProgress, this, [this](const QString& source, double fraction) {
    if (source != currentSource()) return;
    m_dataInfo->setText(QStringLiteral("computing ScatterNet features: %1 %").arg(std::lround(100 * fraction)));
  });
  connect(&m_controller, &TrainingController::dataFailed, this, [this](const QString& source, const QString& message) {
    m_dataProblems[source] = message;
    updateButtons();
    if (source != currentSource()) return;
    m_dataInfo->setText(QStringLiteral("could not be loaded"));
    m_status->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(message.toHtmlEscaped()));
  });
  connect(&m_controller, &TrainingController::started, this, [this] {
    m_runClock.start();
    clearRun();
    updateButtons();
  });
  connect(m_model, &ParameterModel::dataBindingAdjusted, this, [this](const QString& message) {
    m_status->setText(
        QStringLiteral("<span style='color:#8a5a00'>n from the data: %1.</span>").arg(message.toHtmlEscaped()));
  });
  connect(&m_controller, &TrainingController::runStarted, this, [this](const QString& id, const QString& details) {
    m_status->setText(QStringLiteral("%1: %2").arg(id, details));
  });
  connect(&m_controller, &TrainingController::progress, this, [this](const QString& id, double f) {
    m_fractions[id] = f;
    double sum = 0.0;
    for (const auto& [mechanism, fraction] : m_fractions) sum += fraction;
    const auto count = m_controller.lastRequest() ? m_controller.lastRequest()->mechanisms.size() : std::size_t{1};
    const double done = sum / static_cast<double>(std::max<std::size_t>(1, count));
    m_progress->setValue(static_cast<int>(1000 * done));
    showRemaining(done);
  });
  connect(&m_controller, &TrainingController::epochDone, this, &TrainerPanel::onEpoch);
  connect(&m_controller, &TrainingController::runFinished, this, &TrainerPanel::onRunFinished);
  connect(&m_controller, &TrainingController::failed, this, [this](const QString& message) {
    m_status->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>").arg(message.toHtmlEscaped()));
  });
  connect(&m_controller, &TrainingController::finished, this, &TrainerPanel::onFinished);
}

void TrainerPanel::onDataReady(const QString& source, const DataInfo& info) {
  const auto minN = static_cast<qint64>(core::knobInfo(core::Knob::kN).min);
  if (info.trainRecords < minN) {
    m_dataProblems[source] = QStringLiteral("%1 has %2 training records; a run needs at least %3")
                                 .arg(source)
                                 .arg(info.trainRecords)
                                 .arg(minN);
  } else {
    m_dataProblems.remove(source);
  }
  updateButtons();
  m_model->setDataSize(source, info.trainRecords);
  if (source != currentSource()) return;
  m_dataInfo->setText(dataInfoText(info));
  m_dataInfo->setToolTip(info.description);
  if (m_liveWaitingForData) {
    m_liveWaitingForData = false;
    m_liveTimer.start();
  }
}

void TrainerPanel::onFinished(bool cancelled) {
  redrawEpochs();
  m_accuracy->setDraftDrawing(false);
  m_epsilon->setDraftDrawing(false);
  if (cancelled) {
    m_status->setText(QStringLiteral("Cancelled; ε shown is for the steps that ran."));
  } else {
    m_progress->setValue(1000);
    m_progress->setFormat(QStringLiteral("%p %"));
    QString text = QStringLiteral("Done: %1 mechanisms side by side in %2 s.")
                       .arg(m_controller.results().size())
                       .arg(number(static_cast<double>(m_runClock.elapsed()) / 1000.0, 3));
    // A run's ε is for the records it trained on: say so where the Privacy tab's n is a what-if.
    for (const TrainingResult& r : m_controller.results()) {
      const auto n = std::find_if(r.run.overrides.begin(), r.run.overrides.end(),
                                  [](const KnobOverride& o) { return o.knob == "n"; });
      if (n == r.run.overrides.end()) continue;
      text += QStringLiteral(
                  " The runs' ε are for the data's n = %1, not the Privacy tab's n = %2 (a what-if): "
                  "the sampling rate m/n differs.")
                  .arg(number(n->usedValue, 8), number(n->knobValue, 8));
      break;
    }
    m_status->setText(text);
  }
  updateButtons();
  Q_EMIT trainingFinished();
}

QString TrainerPanel::currentSource() const { return m_model->trainer().source; }

namespace {

// The released model's test accuracy; sgld-posterior also shows its posterior average's.
QTableWidgetItem* accuracyCell(const TrainingResult& r) {
  const QString accuracy = number(100.0 * r.finalTestAccuracy) + QStringLiteral(" %");
  auto* item = new QTableWidgetItem(accuracy);
  if (!r.posteriorAverage) return item;
  item->setToolTip(QStringLiteral("last iterate %1 %; step-weighted posterior average after %2 burn-in steps "
                                  "(Li, Chen, Liu & Carin 2019, Lemma 6): %3 %")
                       .arg(number(100.0 * r.finalTestAccuracy))
                       .arg(r.posteriorAverage->burnInSteps)
                       .arg(number(100.0 * r.posteriorAverage->testAccuracy)));
  item->setText(accuracy + QStringLiteral(" · avg %1 %").arg(number(100.0 * r.posteriorAverage->testAccuracy, 3)));
  return item;
}

}  // namespace

core::training::DatasetKey TrainerPanel::dataKey() const { return m_session->dataKey(); }

void TrainerPanel::editTrainer(const std::function<void(TrainerSettings&)>& edit, const QString& text) {
  TrainerSettings settings = m_model->trainer();
  edit(settings);
  m_model->setTrainer(settings, text);
}

void TrainerPanel::setSource(const QString& source) {
  if (source.isEmpty()) return;
  editTrainer([&](TrainerSettings& t) { t.source = source; }, QStringLiteral("dataset %1").arg(source));
  ensureDataLoaded();
}

void TrainerPanel::setFeatures(FeatureKind features) {
  if (m_model->trainer().features == features) return;
  editTrainer([&](TrainerSettings& t) { t.features = features; },
              QStringLiteral("features %1").arg(QString::fromLatin1(featureKindName(features).data())));
  ensureDataLoaded();
}

void TrainerPanel::setModel(const ModelSpec& model) {
  if (m_model->trainer().model == model) return;
  editTrainer(
      [&](TrainerSettings& t) {
        const bool wasCnn = t.model.kind == ModelKind::kCnn || t.model.kind == ModelKind::kScatterCnn;
        t.model = model;
        // The CNNs read the image (x/255) or the ScatterNet map as they are: scaling a row to unit
        // norm would rescale every pixel by the image's brightness.
        if (model.kind == ModelKind::kCnn) {
          t.features = FeatureKind::kRaw;
          t.scaling = FeatureScaling::kNone;
        } else if (model.kind == ModelKind::kScatterCnn) {
          t.features = FeatureKind::kScatterNet;
          t.scaling = FeatureScaling::kNone;
        } else if (wasCnn) {
          t.scaling.reset();  // back to the linear models' unit-norm rows
        }
      },
      QStringLiteral("model %1").arg(QString::fromLatin1(modelKindName(model.kind).data())));
  ensureDataLoaded();
}

void TrainerPanel::ensureDataLoaded() {
  // Cached or not, the answer comes back as dataReady (n binds there), so every caller sees the
  // same sequence.
  if (!m_controller.dataInfo(dataKey())) m_dataInfo->setText(QStringLiteral("loading…"));
  m_controller.loadData(dataKey());
}

void TrainerPanel::refreshFromModel() {
  const TrainerSettings& t = m_model->trainer();
  {
    const QSignalBlocker block(m_dataset);
    int index = m_dataset->findData(t.source);
    if (index < 0) {
      m_dataset->insertItem(m_dataset->count() - 1, t.source, t.source);
      index = m_dataset->findData(t.source);
    }
    m_dataset->setCurrentIndex(index);
  }
  {
    const QSignalBlocker block(m_features);
    m_features->setCurrentIndex(m_features->findData(static_cast<int>(t.features)));
  }
  {
    const QSignalBlocker block(m_modelKind);
    m_modelKind->setCurrentIndex(m_modelKind->findData(static_cast<int>(t.model.kind)));
  }
  {
    const QSignalBlocker block(m_hidden);
    m_hidden->setValue(t.model.hidden);
  }
  m_hidden->setVisible(t.model.kind == ModelKind::kMlp);
  for (const auto& [m, box] : m_mechanisms) {
    const QSignalBlocker block(box);
    box->setChecked(t.mechanisms.contains(mechanismText(m)));
    // A mechanism whose analysis needs a convex loss cannot train a network: greyed, with why.
    const core::Status trains = mechanismTrainsModel(m, t.model);
    box->setEnabled(trains.isOk());
    const QString base = box->property("baseToolTip").toString();
    if (base.isEmpty()) box->setProperty("baseToolTip", box->toolTip());
    box->setToolTip(trains.isOk() ? box->property("baseToolTip").toString()
                                  : QStringLiteral("non-convex model — ") + QString::fromStdString(trains.message()));
  }
  {
    const QSignalBlocker block(m_calibrate);
    m_calibrate->setChecked(t.calibrate);
  }
  m_target->setEnabled(t.calibrate);
  updateButtons();
  if (!m_target->hasFocus()) m_target->setText(t.targetEpsilon ? number(*t.targetEpsilon, 6) : QString());
  if (const auto info = m_controller.dataInfo(dataKey())) {
    m_dataInfo->setText(dataInfoText(*info));
  } else if (m_dataInfo->text() != QLatin1String("loading…") &&
             !m_dataInfo->text().startsWith(QLatin1String("computing"))) {
    m_dataInfo->setText(QStringLiteral("not loaded yet"));
  }
  refreshSummary();
}

void TrainerPanel::refreshSummary() {
  const core::Params& p = m_model->lastValid();
  const QString epochs = number(core::nominalEpochs(p), 4);
  QString text = QStringLiteral("m = %1 · η = %2 · λ = %3 · %4 epochs (K = %5)<br>σ = %6 · δ = %7 · L = %8 · %9 η")
                     .arg(p.m)
                     .arg(number(p.eta), number(p.lambda), epochs)
                     .arg(p.K)
                     .arg(number(p.sigma), number(p.delta), number(p.L),
                          QString::fromLatin1(core::scheduleName(p.schedule).data()));
  if (p.sampling)
    text += QStringLiteral(" · %1 batches").arg(QString::fromLatin1(core::samplingName(*p.sampling).data()));
  if (!m_model->isValid()) {
    text += QStringLiteral(
        "<br><span style='color:#b71c1c'>The knobs are invalid: a run waits for a valid "
        "combination.</span>");
  }
  m_knobSummary->setText(text);
  const std::optional<double> headline = m_session->headlineEpsilon();
  m_target->setPlaceholderText(headline ? QStringLiteral("%1 (table)").arg(number(*headline))
                                        : QStringLiteral("the table's ε"));
}

std::optional<TrainingRequest> TrainerPanel::buildRequest(QString* error) const {
  return m_session->trainingRequest(error);
}

void TrainerPanel::start() {
  if (const auto problem = m_dataProblems.constFind(currentSource()); problem != m_dataProblems.constEnd()) {
    m_status->setText(
        QStringLiteral("<span style='color:#b71c1c'>Cannot train: %1</span>").arg(problem->toHtmlEscaped()));
    return;
  }
  QString error;
  const std::optional<TrainingRequest> request = buildRequest(&error);
  if (!request) {
    m_status->setText(error.toHtmlEscaped());
    return;
  }
  m_status->setText(QStringLiteral("Loading %1…").arg(currentSource()));
  m_estimatedSeconds = m_controller.estimateSeconds(*request);
  m_controller.start(*request);
  if (m_estimatedSeconds && *m_estimatedSeconds > kLongRunSeconds) {
    m_status->setText(QStringLiteral("This run takes about %1 on this machine (estimated from the measured "
                                     "training rate); Cancel stops it.")
                          .arg(durationText(*m_estimatedSeconds)));
  }
  showRemaining(0.0);
  updateButtons();
}

// Runs over kLongRunSeconds show how long is left in the progress bar: from the estimate until
// enough of the run has passed to extrapolate its own pace.
void TrainerPanel::showRemaining(double fractionDone) {
  const double elapsed = m_runClock.isValid() ? static_cast<double>(m_runClock.elapsed()) / 1000.0 : 0.0;
  std::optional<double> total;
  if (fractionDone >= 0.02 && elapsed >= 1.0) {
    total = elapsed / fractionDone;
  } else if (m_estimatedSeconds) {
    total = *m_estimatedSeconds;
  }
  if (!total || *total <= kLongRunSeconds || !m_controller.running()) {
    m_progress->setFormat(QStringLiteral("%p %"));
    return;
  }
  m_progress->setFormat(QStringLiteral("%p % · about %1 left").arg(durationText(std::max(0.0, *total - elapsed))));
}

void TrainerPanel::onSettled() {
  if (!m_live->isChecked()) return;
  QString error;
  const std::optional<TrainingRequest> request = buildRequest(&error);
  if (!request) {
    m_status->setText(QStringLiteral("Live: ") + error.toHtmlEscaped());
    return;
  }
  const std::optional<double> seconds = m_controller.estimateSeconds(*request);
  if (!seconds) {
    m_liveWaitingForData = true;
    ensureDataLoaded();
    m_status->setText(QStringLiteral("Live: loading %1…").arg(currentSource()));
    return;
  }
  if (*seconds > kLiveBudgetSeconds) {
    m_status->setText(QStringLiteral("Live: this run would take about %1 s on this machine (live runs start under "
                                     "%2 s) — press Start.")
                          .arg(number(*seconds, 2))
                          .arg(kLiveBudgetSeconds));
    return;
  }
  m_controller.start(*request);
  updateButtons();
  Q_EMIT liveRestarted();
}

void TrainerPanel::clearRun() {
  m_history.clear();
  m_dirty.clear();
  m_redrawTimer.stop();
  m_fractions.clear();
  m_results->setRowCount(0);
  m_accuracy->removeCurvesExcept({});
  m_epsilon->removeCurvesExcept({});
  m_progress->setValue(0);
}

void TrainerPanel::updateButtons() {
  const bool running = m_controller.running();
  m_start->setText(running ? QStringLiteral("Restart") : QStringLiteral("Start"));
  const auto problem = m_dataProblems.constFind(currentSource());
  const bool usable = problem == m_dataProblems.constEnd();
  m_start->setEnabled(usable);
  m_start->setToolTip(usable ? QString() : QStringLiteral("Cannot train: %1").arg(*problem));
  m_pause->setEnabled(running);
  m_cancel->setEnabled(running);
  m_pause->setText(m_controller.paused() ? QStringLiteral("Resume") : QStringLiteral("Pause"));
  m_explore->setEnabled(!running && !m_controller.results().empty());
}

void TrainerPanel::onEpoch(const QString& mechanism, const EpochRecord& record) {
  m_history[mechanism].push_back(record);
  m_dirty.insert(mechanism);
  // The first epoch after a quiet spell is drawn at once (a live restart shows at once); epochs
  // arriving faster than that are drawn together, drafted, at most every 40 ms.
  if (!m_sinceRedraw.isValid() || m_sinceRedraw.elapsed() >= kEpochRedrawMs) {
    redrawEpochs();
  } else if (!m_redrawTimer.isActive()) {
    m_redrawTimer.start();
  }
}

void TrainerPanel::redrawEpochs() {
  m_redrawTimer.stop();
  const bool streaming = m_sinceRedraw.isValid() && m_sinceRedraw.elapsed() < 2 * kEpochRedrawMs;
  m_accuracy->setDraftDrawing(streaming && m_controller.running());
  m_epsilon->setDraftDrawing(streaming && m_controller.running());
  m_sinceRedraw.start();
  const QSet<QString> dirty = m_dirty;
  m_dirty.clear();
  for (const QString& mechanism : dirty) drawHistory(mechanism);
  m_accuracy->refreshAxes();
  m_epsilon->refreshAxes();
}

void TrainerPanel::drawHistory(const QString& mechanism) {
  const auto& history = m_history[mechanism];
  QVector<QPointF> test;
  QVector<QPointF> train;
  QVector<QPointF> eps;
  for (const EpochRecord& r : history) {
    test.push_back({static_cast<double>(r.epoch), r.testAccuracy});
    train.push_back({static_cast<double>(r.epoch), r.trainAccuracy});
    if (r.epsilonSpent) eps.push_back({static_cast<double>(r.epoch), *r.epsilonSpent});
  }
  CurveStyle style;
  style.color = QColor::fromRgb(mechanismColor(mechanism.toStdString()));
  style.tooltip = QStringLiteral("test accuracy on held-out records");
  m_accuracy->setCurve(mechanism + QStringLiteral(":test"), mechanism, test, style);
  CurveStyle dashed = style;
  dashed.pen = Qt::DashLine;
  dashed.width = 1.4;
  dashed.tooltip = QStringLiteral("training accuracy: a diagnostic that reads the private data (not released)");
  dashed.inLegend = false;  // the title says dashed is training accuracy
  m_accuracy->setCurve(mechanism + QStringLiteral(":train"), mechanism + QStringLiteral(" train"), train, dashed);
  if (!eps.isEmpty()) {
    CurveStyle e = style;
    e.tooltip = QStringLiteral("ε of releasing the model at that epoch, per the mechanism's accountant");
    m_epsilon->setCurve(mechanism, mechanism, eps, e);
  }
}

void TrainerPanel::onRunFinished(const QString& mechanism, const TrainingResult& r) {
  if (!m_dirty.isEmpty()) redrawEpochs();
  // Rows in the order of the mechanisms (the display order), not the order they finish in.
  int row = 0;
  const auto order = [](const QString& id) {
    const auto m = parseMechanism(id.toStdString());
    return m ? static_cast<int>(*m) : static_cast<int>(allMechanisms().size());
  };
  while (row < m_results->rowCount() && order(m_results->item(row, 0)->text()) < order(mechanism)) ++row;
  m_results->insertRow(row);
  m_results->setItem(row, 0, new QTableWidgetItem(mechanism));
  m_results->setItem(row, 1, accuracyCell(r));
  auto* eps =
      new QTableWidgetItem(r.epsilon ? (r.run.epsilonIsEstimate ? QStringLiteral("≈ ") : QString()) + number(*r.epsilon)
                                     : QStringLiteral("∞"));
  eps->setToolTip(r.epsilon
                      ? QStringLiteral("%1 at δ = %2").arg(QString::fromStdString(r.run.accountant), number(r.delta))
                      : QStringLiteral("not private: no accountant proves any ε"));
  m_results->setItem(row, 2, eps);
  const ResolvedRun& run = r.run;
  const bool isPrivateRun = r.epsilon.has_value();
  m_results->setItem(row, 3,
                     isPrivateRun ? knobCell("sigma", run.sigma, run, QStringLiteral("σ"))
                                  : new QTableWidgetItem(QStringLiteral("—")));
  m_results->setItem(row, 4, knobCell("eta", run.eta, run, QStringLiteral("η")));
  m_results->setItem(row, 5,
                     std::isfinite(run.clipNorm) ? knobCell("L", run.clipNorm, run, QStringLiteral("L"))
                                                 : new QTableWidgetItem(QStringLiteral("no clipping")));
  m_results->setItem(row, 6, knobCell("K", static_cast<double>(r.stepsDone), run, QStringLiteral("K")));
  QStringList notes;
  for (const KnobOverride& o : run.overrides) {
    if (o.knob == "n" || o.knob == "beta") {
      notes << QStringLiteral("%1 = %2 (knob %3): %4")
                   .arg(QString::fromStdString(o.knob), number(o.usedValue), number(o.knobValue),
                        QString::fromStdString(o.reason));
    }
  }
  // What the run derived and why (L and β from the data, a calibrated σ, the schedule it ran, an
  // estimated ε).
  for (const std::string& n : run.notes) notes << QString::fromStdString(n);
  m_results->item(row, 0)->setToolTip(
      QString::fromLatin1(mechanismName(run.mechanism).data()) +
      (notes.isEmpty() ? QString() : QStringLiteral("\n") + notes.join(QLatin1Char('\n'))));
  if (!run.violations.empty()) {
    QString all;
    for (const std::string& v : run.violations) all += QString::fromStdString(v) + QLatin1Char('\n');
    m_results->item(row, 0)->setToolTip(QStringLiteral("Violated: ") + all.trimmed());
    m_results->item(row, 0)->setForeground(QColor(183, 28, 28));
  }
  m_results->resizeColumnsToContents();
  updateButtons();
}

std::vector<SavedRun> TrainerPanel::savedRuns() const {
  std::vector<SavedRun> runs;
  const std::optional<ResultTag> tag = m_session->trainingTag();
  if (!tag) return runs;
  for (const TrainingResult& r : m_controller.results()) {
    if (r.cancelled) continue;
    SavedRun run;
    run.mechanism = QString::fromLatin1(mechanismId(r.run.mechanism).data());
    run.data = tag->data ? QString::fromStdString(tag->data->source) : QString();
    run.knobs = tag->knobs;
    run.epsilon = r.epsilon;
    run.delta = r.delta;
    run.testAccuracy = r.finalTestAccuracy;
    run.trainAccuracy = r.finalTrainAccuracy;
    run.sigmaUsed = r.run.sigma;
    run.etaUsed = r.run.eta;
    run.clipNormUsed = std::isfinite(r.run.clipNorm) ? r.run.clipNorm : 0.0;
    run.stepsUsed = r.stepsDone;
    run.history = r.history;
    runs.push_back(std::move(run));
  }
  return runs;
}

void TrainerPanel::showSavedRuns(const std::vector<SavedRun>& runs) {
  if (m_controller.running()) m_controller.cancel();
  clearRun();
  QStringList sources;
  for (const SavedRun& run : runs) {
    m_history[run.mechanism] = run.history;
    drawHistory(run.mechanism);
    const int row = m_results->rowCount();
    m_results->insertRow(row);
    const auto greyed = [](const QString& text) {
      auto* item = new QTableWidgetItem(text);
      item->setForeground(QColor(110, 110, 110));
      return item;
    };
    m_results->setItem(row, 0, greyed(run.mechanism));
    m_results->setItem(row, 1, greyed(number(100.0 * run.testAccuracy) + QStringLiteral(" %")));
    m_results->setItem(row, 2, greyed(run.epsilon ? number(*run.epsilon) : QStringLiteral("∞")));
    m_results->setItem(row, 3, greyed(run.epsilon ? number(run.sigmaUsed) : QStringLiteral("—")));
    m_results->setItem(row, 4, greyed(number(run.etaUsed)));
    m_results->setItem(row, 5,
                       greyed(run.clipNormUsed > 0.0 ? number(run.clipNormUsed) : QStringLiteral("no clipping")));
    m_results->setItem(row, 6, greyed(number(static_cast<double>(run.stepsUsed))));
    if (!sources.contains(run.data)) sources << run.data;
  }
  if (runs.empty()) return;
  const ResultTag tag{runs.front().knobs, std::nullopt};
  const QString changed = m_session->whatChanged(tag);
  m_status->setText(QStringLiteral("<span style='color:#555'>Saved runs from the session file (data: %1)%2. Start "
                                   "trains again with the knobs on screen.</span>")
                        .arg(sources.join(QStringLiteral(", ")).toHtmlEscaped(),
                             changed.isEmpty()
                                 ? QString()
                                 : QStringLiteral(" — from %1, before your change").arg(changed.toHtmlEscaped())));
}

}  // namespace dpx::ui
