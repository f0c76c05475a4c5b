#include "frontier_panel.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMetaObject>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "common/format.h"
#include "compute/analytics.h"
#include "session/session.h"
#include "training/goal_seek.h"
#include "utility/utility_report.h"

namespace dpx::ui {

using namespace core::training;

namespace {

QString number(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }

constexpr int kSettleMs = 400;    // a frontier is seconds of work: wait for the knobs to rest
constexpr int kModelsMode = 100;  // the mode box's data for the models side by side

// Tramèr & Boneh's picture, as the issue of utility needs it: pixels, handcrafted features, a CNN.
const std::vector<std::string> kComparedModels{"linear-pixels", "scatter-linear", "cnn"};

// The non-private ceiling's curve, named after its mechanism.
const std::string& ceilingId() {
  static const std::string id(mechanismId(Mechanism::kSgd));
  return id;
}

QColor modelColor(const std::string& id) {
  if (id == "linear-pixels") return QColor(0x78, 0x90, 0x9c);
  if (id == "scatter-linear") return QColor(0x2e, 0x7d, 0x32);
  if (id == "cnn") return QColor(0xef, 0x6c, 0x00);
  return QColor(0x6a, 0x1b, 0x9a);
}

// A series' finished points as the chart draws them: mean line, min–max band, a note per point.
struct DrawnPoints {
  QVector<QPointF> mean;
  QVector<QPointF> low;
  QVector<QPointF> high;
  QStringList notes;
};

DrawnPoints drawnPoints(const std::vector<FrontierPoint>& points, bool byEpsilon) {
  DrawnPoints d;
  for (const FrontierPoint& p : points) {
    if (!p.ok()) continue;
    const double x = byEpsilon ? p.epsilon.value_or(p.targetEpsilon) : p.epochs;
    d.mean.push_back({x, p.accuracyMean});
    d.low.push_back({x, p.accuracyMin});
    d.high.push_back({x, p.accuracyMax});
    d.notes << QStringLiteral(
                   "target ε %1 → ε %2 · %3 epochs (%4 steps) · σ = %5 · η = %6 · accuracy %7 % (%8–%9 %) "
                   "over %10 seeds")
                   .arg(number(p.targetEpsilon), p.epsilon ? number(*p.epsilon) : QStringLiteral("—"), number(p.epochs))
                   .arg(p.steps)
                   .arg(number(p.sigma), number(p.eta), number(100 * p.accuracyMean), number(100 * p.accuracyMin),
                        number(100 * p.accuracyMax))
                   .arg(p.seeds);
  }
  return d;
}

void drawSeries(ChartPanel* chart, const QString& id, const QString& label, const CurveStyle& style,
                const DrawnPoints& d) {
  chart->setCurve(id, label, d.mean, style);
  chart->setPointNotes(id, d.notes);
  chart->setBand(id + QStringLiteral(":band"), d.low, d.high, style.color);
  chart->refreshAxes();
}

// A job's failure, in red in the status line; true when `result` is one.
bool showFailure(QLabel* status, const std::any& result) {
  const auto* failure = std::any_cast<core::Status>(&result);
  if (!failure) return false;
  status->setText(QStringLiteral("<span style='color:#b71c1c'>%1</span>")
                      .arg(QString::fromStdString(failure->message()).toHtmlEscaped()));
  return true;
}

}  // namespace

FrontierPanel::FrontierPanel(Session* session, QWidget* parent)
    : QWidget(parent),
      m_model(session->model()),
      m_session(session),
      m_utilityView(ViewController::Freshness::kNewestOnly, [this] { refreshUtility(); }) {
  setObjectName(QStringLiteral("frontierPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addLayout(buildToolbar());
  m_status =
      new QLabel(QStringLiteral("Press Compute: each point trains the ticked mechanisms, calibrated to its ε."), this);
  m_status->setObjectName(QStringLiteral("frontierStatus"));
  m_status->setWordWrap(true);
  layout->addWidget(m_status);
  QSplitter* chartAndTable = buildChartAndTable();
  m_goal = new GoalSeekBox(session, m_chart, this);
  layout->addWidget(m_goal);
  layout->addWidget(chartAndTable, 1);
  connectSignals();
}

QHBoxLayout* FrontierPanel::buildToolbar() {
  m_mode = new QComboBox(this);
  m_mode->setObjectName(QStringLiteral("frontierMode"));
  m_mode->addItem(QStringLiteral("accuracy against ε"), static_cast<int>(FrontierVary::kEpsilon));
  m_mode->addItem(QStringLiteral("accuracy against epochs at the current ε"), static_cast<int>(FrontierVary::kEpochs));
  m_mode->addItem(QStringLiteral("models side by side (Tramèr & Boneh 2021)"), kModelsMode);
  m_mode->setToolTip(
      QStringLiteral("Against ε: every point is a run calibrated to its target. Against epochs: every "
                     "point is calibrated to the same ε, so it shows whether more epochs help at equal "
                     "privacy (the Langevin bound of DP-SGLD saturates in K, Ryffel et al. 2022, Thm 3.1). "
                     "Models: linear on pixels, ScatterNet + linear and the end-to-end CNN on the trainer's "
                     "images, each trained by DP-SGD with Tramèr & Boneh 2021's recipe at every target ε — at "
                     "moderate ε handcrafted features win. Minutes of training: press Compute."));
  m_points = new QSpinBox(this);
  m_points->setRange(3, 16);
  m_points->setValue(10);
  m_points->setToolTip(
      QStringLiteral("Targets log-spaced over [ε/8, 8ε] (epochs over [E/8, 8E]) around the current "
                     "setting"));
  m_seeds = new QSpinBox(this);
  m_seeds->setRange(1, 20);
  m_seeds->setValue(3);
  m_seeds->setToolTip(QStringLiteral("Runs per point; the line is their mean, the band their min–max"));
  m_compute = new QPushButton(QStringLiteral("Compute"), this);
  m_compute->setObjectName(QStringLiteral("frontierCompute"));
  m_cancel = new QPushButton(QStringLiteral("Cancel"), this);
  m_follow = new QCheckBox(QStringLiteral("recompute when the knobs settle"), this);
  m_follow->setChecked(true);
  m_follow->setToolTip(
      QStringLiteral("While this view is shown, a settled change of the knobs, the data or the "
                     "mechanisms computes the frontier again"));
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 1000);
  m_progress->setMaximumWidth(160);
  auto* bar = new QHBoxLayout();
  bar->addWidget(m_mode);
  bar->addWidget(new QLabel(QStringLiteral("points"), this));
  bar->addWidget(m_points);
  bar->addWidget(new QLabel(QStringLiteral("seeds"), this));
  bar->addWidget(m_seeds);
  bar->addWidget(m_compute);
  bar->addWidget(m_cancel);
  bar->addWidget(m_follow);
  bar->addStretch(1);
  bar->addWidget(m_progress);
  return bar;
}

QSplitter* FrontierPanel::buildChartAndTable() {
  auto* split = new QSplitter(Qt::Vertical, this);
  m_chart = new ChartPanel(QStringLiteral("Privacy–utility frontier"), QStringLiteral("ε"),
                           QStringLiteral("test accuracy"), split);
  m_chart->setObjectName(QStringLiteral("frontierChart"));
  m_chart->setLogAxis(Qt::Horizontal, true);
  m_chart->setFixedRange(Qt::Vertical, std::make_pair(0.0, 1.0));
  m_chart->setLegendOnRight(true);
  split->addWidget(m_chart);
  m_utility = new QTableWidget(0, 4, split);
  m_utility->setObjectName(QStringLiteral("utilityTable"));
  m_utility->setHorizontalHeaderLabels({QStringLiteral("Utility bound"), QStringLiteral("value"),
                                        QStringLiteral("terms and inputs"), QStringLiteral("from")});
  m_utility->setToolTip(
      QStringLiteral("The papers' utility theorems for the current knobs and data: d, ξ² and the "
                     "distance to the optimum are estimated from the training set at a fitted "
                     "optimum; σ or η as the trainer would calibrate them."));
  m_utility->setColumnWidth(0, 330);
  m_utility->setColumnWidth(1, 110);
  m_utility->setColumnWidth(2, 430);
  m_utility->verticalHeader()->setVisible(false);
  m_utility->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_utility->horizontalHeader()->setStretchLastSection(true);
  split->addWidget(m_utility);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  return split;
}

// The frontier and the utility bounds follow settled changes while this view is shown; hidden,
// they are marked stale and computed when it is shown again.
void FrontierPanel::connectSignals() {
  m_settle.setSingleShot(true);
  m_settle.setInterval(kSettleMs);
  connect(&m_settle, &QTimer::timeout, this, [this] {
    if (m_follow->isChecked() && isVisible()) computeIfQuick();
  });
  auto changed = [this] {
    refreshStaleness();
    m_utilityStale = true;
    if (!isVisible()) return;
    m_utilityView.schedule(kSettleMs);
    if (m_follow->isChecked()) m_settle.start();
  };
  connect(m_session, &Session::trainingFinished, this, changed);
  connect(m_model, &ParameterModel::paramsChanged, this, changed);
  connect(m_model, &ParameterModel::trainerChanged, this, changed);
  connect(m_mode, &QComboBox::activated, this, [this] { computeIfQuick(); });
  connect(m_compute, &QPushButton::clicked, this, &FrontierPanel::compute);
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    m_job.cancel();
    ++m_generation;
    m_status->setText(QStringLiteral("Cancelled."));
    m_goal->clearFrontier(QStringLiteral("The frontier was cancelled: compute one to answer from it."));
    Q_EMIT frontierFinished();
  });
  connect(&m_job, &BackgroundJob::progressed, this,
          [this](double f) { m_progress->setValue(static_cast<int>(1000 * f)); });
}

void FrontierPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_utilityStale) m_utilityView.schedule(kSettleMs);
}

std::optional<FrontierJob> FrontierPanel::buildJob(QString* error) const {
  const std::optional<TrainingRequest> training = m_session->trainingRequest(error);
  if (!training) return std::nullopt;
  FrontierJob job;
  job.data = training->data;
  FrontierRequest& r = job.request;
  for (Mechanism m : training->mechanisms) {
    if (isPrivate(m)) r.mechanisms.push_back(m);
  }
  if (r.mechanisms.empty()) {
    *error = QStringLiteral("Tick at least one private mechanism in the Training tab.");
    return std::nullopt;
  }
  r.base = training->base;
  r.seeds = m_seeds->value();
  r.vary = static_cast<FrontierVary>(m_mode->currentData().toInt());
  // Centred on the ε the trainer would calibrate to (its target, or the table's ε).
  const std::optional<double> center = m_session->defaultTarget();
  if (!center || !(*center > 0.0)) {
    *error = QStringLiteral("No ε to centre the frontier on yet (the accountant table is still computing).");
    return std::nullopt;
  }
  job.centerEpsilon = *center;
  job.centerEpochs = r.base.epochs;
  if (r.vary == FrontierVary::kEpsilon) {
    r.epsilons = frontierEpsilonGrid(*center, m_points->value());
  } else {
    r.epsilons = {*center};
    r.epochsList = frontierEpochsGrid(r.base.epochs, m_points->value());
  }
  return job;
}

QString FrontierPanel::refusedNote() const {
  const TrainerSettings& t = m_model->trainer();
  QStringList refused;
  for (const MechanismInfo& info : mechanismInfos()) {
    const QString id = QString::fromLatin1(info.id.data());
    if (t.mechanisms.contains(id) && isPrivate(info.mechanism) &&
        !mechanismTrainsModel(info.mechanism, t.model).isOk()) {
      refused << id;
    }
  }
  if (refused.isEmpty()) return {};
  return QStringLiteral(" Not drawn: %1 — non-convex model (the %2 is a network; their analyses need a convex loss).")
      .arg(refused.join(QStringLiteral(", ")), QString::fromLatin1(modelKindName(t.model.kind).data()));
}

bool FrontierPanel::modelsMode() const { return m_mode->currentData().toInt() == kModelsMode; }

std::optional<double> FrontierPanel::estimateSeconds() const {
  const TrainingController* controller = m_session->training();
  if (modelsMode()) {
    QString error;
    const std::optional<ModelComparisonRequest> request = buildComparison(&error);
    if (!request) return std::nullopt;
    return comparisonSecondsEstimate(*request, *controller->cache(), controller->measuredRate(),
                                     controller->measuredNetworkRate());
  }
  QString error;
  const std::optional<FrontierJob> job = buildJob(&error);
  const std::optional<TrainingRequest> training = m_session->trainingRequest(&error);
  if (!job || !training) return std::nullopt;
  TrainingRequest one = *training;
  one.mechanisms = job->request.mechanisms;
  one.mechanisms.push_back(Mechanism::kSgd);  // the ceiling
  const std::optional<double> run = controller->estimateSeconds(one);
  if (!run) return std::nullopt;
  const bool byEpsilon = job->request.vary == FrontierVary::kEpsilon;
  const double points = static_cast<double>(byEpsilon ? job->request.epsilons.size() : job->request.epochsList.size());
  return *run * points * job->request.seeds;
}

void FrontierPanel::computeIfQuick() {
  const std::optional<double> seconds = estimateSeconds();
  if (seconds && *seconds <= kLiveBudgetSeconds) {
    compute();
    return;
  }
  m_job.cancel();
  ++m_generation;
  m_status->setText(seconds ? QStringLiteral("This frontier would take about %1 s on this machine (it follows the "
                                             "knobs by itself under %2 s): press Compute.")
                                  .arg(number(*seconds, 2))
                                  .arg(kLiveBudgetSeconds)
                            : QStringLiteral("Press Compute: the data is not loaded yet, so how long this frontier "
                                             "would take is not known."));
}

std::optional<ModelComparisonRequest> FrontierPanel::buildComparison(QString* error) const {
  const QString source = m_model->trainer().source;
  if (source.isEmpty() || source == QLatin1String("open")) {
    *error = QStringLiteral(
        "Choose a dataset of 28 × 28 images in the Training tab (Fashion-MNIST needs the Debian "
        "package dataset-fashion-mnist).");
    return std::nullopt;
  }
  const std::optional<double> center = m_session->defaultTarget();
  if (!center || !(*center > 0.0)) {
    *error = QStringLiteral("No ε to centre the frontier on yet (the accountant table is still computing).");
    return std::nullopt;
  }
  ModelComparisonRequest request;
  request.source = source.toStdString();
  request.recipes = kComparedModels;
  request.epsilons = frontierEpsilonGrid(*center, m_points->value());
  request.delta = m_model->params().delta;
  request.seeds = m_seeds->value();
  request.seed = m_session->seed();
  request.threads = m_session->threads();
  return request;
}

void FrontierPanel::computeModels() {
  QString error;
  std::optional<ModelComparisonRequest> request = buildComparison(&error);
  if (!request) {
    m_status->setText(error.toHtmlEscaped());
    return;
  }
  const std::uint64_t generation = ++m_generation;
  m_running.reset();
  m_result.reset();
  m_comparison.reset();
  m_resultTag.reset();
  refreshStaleness();
  m_comparisonRunning = request;
  m_runningTag = ResultTag{m_model->params(), m_session->dataKey()};
  m_models.clear();
  for (const std::string& id : request->recipes) {
    ModelComparisonSeries s;
    s.id = id;
    s.label = findRecipe(id)->label;
    s.points.resize(request->epsilons.size());
    m_models.push_back(std::move(s));
  }
  m_chart->removeCurvesExcept({});
  for (const QString& band : m_chart->bandIds()) m_chart->removeBand(band);
  // The models differ by a few points near the top: the accuracy axis fits them.
  m_chart->setFixedRange(Qt::Vertical, std::nullopt);
  m_chart->setVerticalLimits(std::make_pair(0.0, 1.0));
  m_chart->setAxisTitle(
      Qt::Horizontal,
      QStringLiteral("ε (at δ = %1), DP-SGD, each model with its own recipe").arg(number(request->delta)));
  m_chart->setMarker(request->epsilons[request->epsilons.size() / 2], QStringLiteral("current ε"));
  m_chart->refreshAxes();
  m_goal->clearFrontier(QStringLiteral("Answers when the models' frontier is finished…"));
  m_progress->setValue(0);
  m_status->setText(QStringLiteral("Training %1 models at %2 targets ε, %3 seeds each…")
                        .arg(request->recipes.size())
                        .arg(request->epsilons.size())
                        .arg(request->seeds));
  std::shared_ptr<DatasetCache> cache = m_session->datasets();
  m_job.request(
      [this, work = *request, cache, generation](const std::atomic<bool>& cancel,
                                                 const BackgroundJob::Progress& progress) -> std::any {
        ModelComparisonCallbacks callbacks;
        callbacks.progress = progress;
        callbacks.pointDone = [this, generation](std::size_t s, std::size_t i, const FrontierPoint& p) {
          QMetaObject::invokeMethod(
              this, [this, generation, s, i, p] { showModelPoint(generation, s, i, p); }, Qt::QueuedConnection);
        };
        callbacks.status = [this, generation](const std::string& text) {
          const QString line = QString::fromStdString(text);
          QMetaObject::invokeMethod(
              this,
              [this, generation, line] {
                if (generation == m_generation) m_status->setText(line.toHtmlEscaped() + QStringLiteral("…"));
              },
              Qt::QueuedConnection);
        };
        core::Result<ModelComparisonResult> result = compareModels(work, *cache, callbacks, &cancel);
        if (!result) return result.status();
        return std::move(*result);
      },
      [this, generation](std::any&& result) {
        if (showFailure(m_status, result)) return;
        if (auto* r = std::any_cast<ModelComparisonResult>(&result)) finishModels(generation, std::move(*r));
      });
}

void FrontierPanel::showModelPoint(std::uint64_t generation, std::size_t series, std::size_t index,
                                   const FrontierPoint& point) {
  if (generation != m_generation || series >= m_models.size() || index >= m_models[series].points.size()) return;
  m_models[series].points[index] = point;
  redrawModel(series);
  Q_EMIT pointShown();
}

void FrontierPanel::redrawModel(std::size_t series) {
  const ModelComparisonSeries& s = m_models[series];
  CurveStyle style;
  style.color = modelColor(s.id);
  style.markers = true;
  const ModelRecipe* recipe = findRecipe(s.id);
  style.tooltip = QString::fromStdString(s.label + ": " + (recipe ? recipe->settings : std::string()));
  drawSeries(m_chart, QString::fromStdString(s.id), QString::fromStdString(s.label), style,
             drawnPoints(s.points, true));
}

void FrontierPanel::finishModels(std::uint64_t generation, ModelComparisonResult result) {
  if (generation != m_generation) return;
  m_models = result.series;
  QStringList errors;
  for (std::size_t s = 0; s < m_models.size(); ++s) {
    redrawModel(s);
    if (!m_models[s].error.empty()) {
      errors << QString::fromStdString(m_models[s].label + ": " + m_models[s].error).toHtmlEscaped();
    }
  }
  QString text = QStringLiteral(
                     "%1 runs on %2 in %3 s%4 — DP-SGD, ε from %5; each model with Tramèr & Boneh 2021's "
                     "recipe (hover a curve).")
                     .arg(result.runs)
                     .arg(m_comparisonRunning ? QString::fromStdString(m_comparisonRunning->source) : QString(),
                          number(result.seconds, 3), result.cancelled ? QStringLiteral(" (cancelled)") : QString(),
                          QString::fromStdString(result.accountant));
  if (!errors.isEmpty())
    text += QStringLiteral("<br><span style='color:#b71c1c'>%1</span>").arg(errors.join(QStringLiteral("<br>")));
  m_status->setText(text);
  m_progress->setValue(1000);
  m_comparison = std::move(result);
  m_resultTag = m_runningTag;
  if (m_resultTag && m_comparisonRunning && !m_comparison->cancelled) {
    const std::vector<double>& targets = m_comparisonRunning->epsilons;
    m_goal->setFrontier(goalSeries(*m_comparison), true, targets[targets.size() / 2], *m_resultTag);
  }
  refreshStaleness();
  Q_EMIT frontierFinished();
}

void FrontierPanel::compute() {
  if (modelsMode()) {
    computeModels();
    return;
  }
  QString error;
  std::optional<FrontierJob> job = buildJob(&error);
  if (!job) {
    m_status->setText(error.toHtmlEscaped());
    return;
  }
  const std::uint64_t generation = ++m_generation;
  m_running = job;
  m_runningTag = ResultTag{job->request.base.knobs, job->data};
  m_result.reset();
  m_comparison.reset();
  m_resultTag.reset();
  refreshStaleness();
  const std::size_t points = resetSeries(*job);
  prepareChart(*job);
  m_goal->clearFrontier(QStringLiteral("Answers when the frontier is finished…"));
  m_progress->setValue(0);
  m_status->setText(QStringLiteral("Training %1 runs…")
                        .arg(static_cast<qint64>(points * job->request.mechanisms.size() * job->request.seeds)) +
                    refusedNote());
  startJob(*job, generation);
}

// One empty series per mechanism, a slot per point; returns the number of points.
std::size_t FrontierPanel::resetSeries(const FrontierJob& job) {
  m_series.clear();
  const bool byEpsilon = job.request.vary == FrontierVary::kEpsilon;
  const std::size_t points = byEpsilon ? job.request.epsilons.size() : job.request.epochsList.size();
  for (Mechanism m : job.request.mechanisms) {
    FrontierSeries s;
    s.mechanism = m;
    s.points.resize(points);
    m_series.push_back(s);
  }
  return points;
}

// An empty chart with the new x axis and the current ε (or epochs) marked.
void FrontierPanel::prepareChart(const FrontierJob& job) {
  const bool byEpsilon = job.request.vary == FrontierVary::kEpsilon;
  // Accuracy fits the points (a frontier between 80 and 90 % is not a flat line at the top of
  // [0, 1]) and never leaves [0, 1].
  m_chart->setFixedRange(Qt::Vertical, std::nullopt);
  m_chart->setVerticalLimits(std::make_pair(0.0, 1.0));
  m_chart->removeCurvesExcept({});
  for (const QString& band : m_chart->bandIds()) m_chart->removeBand(band);
  m_chart->setAxisTitle(
      Qt::Horizontal, byEpsilon
                          ? QStringLiteral("ε (at δ = %1)").arg(number(job.request.base.knobs.delta))
                          : QStringLiteral("epochs (each point calibrated to ε = %1)").arg(number(job.centerEpsilon)));
  m_chart->setMarker(byEpsilon ? job.centerEpsilon : job.centerEpochs,
                     byEpsilon ? QStringLiteral("current ε") : QStringLiteral("current epochs"));
  m_chart->refreshAxes();
}

// Computes the frontier on a worker; points and the ceiling are posted as they finish, tagged
// with the generation so a newer request's chart ignores them.
void FrontierPanel::startJob(const FrontierJob& job, std::uint64_t generation) {
  std::shared_ptr<DatasetCache> cache = m_session->datasets();
  m_job.request(
      [this, work = job, cache, generation](const std::atomic<bool>& cancel,
                                            const BackgroundJob::Progress& progress) -> std::any {
        core::Result<FrontierResult> result = runFrontier(work, *cache, generation, cancel, progress);
        if (!result) return result.status();
        return std::move(*result);
      },
      [this, generation](std::any&& result) {
        if (showFailure(m_status, result)) return;
        if (auto* r = std::any_cast<FrontierResult>(&result)) finish(generation, std::move(*r));
      });
}

// On the worker: loads the data and computes every point.
core::Result<FrontierResult> FrontierPanel::runFrontier(const FrontierJob& work, DatasetCache& cache,
                                                        std::uint64_t generation, const std::atomic<bool>& cancel,
                                                        const BackgroundJob::Progress& progress) {
  // Features not extracted yet are computed first (cancellable; the bar shows their progress,
  // then the runs').
  FeatureExtractionControl extraction;
  extraction.cancel = &cancel;
  extraction.progress = progress;
  DPX_ASSIGN_OR_RETURN(const CachedDataset data, cache.get(work.data, &extraction));
  FrontierRequest request = work.request;
  request.base.bounds = data.bounds;
  FrontierCallbacks callbacks;
  callbacks.pointDone = [this, generation](std::size_t s, std::size_t i, const FrontierPoint& p) {
    QMetaObject::invokeMethod(
        this, [this, generation, s, i, p] { showPoint(generation, s, i, p); }, Qt::QueuedConnection);
  };
  callbacks.ceilingDone = [this, generation](double accuracy) {
    QMetaObject::invokeMethod(
        this, [this, generation, accuracy] { showCeiling(generation, accuracy); }, Qt::QueuedConnection);
  };
  callbacks.progress = progress;
  return computeFrontier(request, data.data, callbacks, &cancel);
}

void FrontierPanel::showPoint(std::uint64_t generation, std::size_t series, std::size_t index,
                              const FrontierPoint& point) {
  if (generation != m_generation || series >= m_series.size() || index >= m_series[series].points.size()) return;
  m_series[series].points[index] = point;
  redrawSeries(series);
  Q_EMIT pointShown();
}

void FrontierPanel::redrawSeries(std::size_t series) {
  if (!m_running) return;
  const bool byEpsilon = m_running->request.vary == FrontierVary::kEpsilon;
  const FrontierSeries& s = m_series[series];
  const QString id = QString::fromLatin1(mechanismId(s.mechanism).data());
  CurveStyle style;
  style.color = QColor::fromRgb(mechanismColor(id.toStdString()));
  style.markers = true;
  style.tooltip = QString::fromLatin1(mechanismName(s.mechanism).data()) +
                  (byEpsilon ? QStringLiteral(": each point calibrated to its target ε")
                             : QStringLiteral(": each point recalibrated to the same ε"));
  drawSeries(m_chart, id, id, style, drawnPoints(s.points, byEpsilon));
  for (const FrontierPoint& p : s.points) {
    if (p.error.empty()) continue;
    m_status->setText(QStringLiteral("%1: %2").arg(id, QString::fromStdString(p.error).toHtmlEscaped()));
    break;
  }
}

void FrontierPanel::showCeiling(std::uint64_t generation, double accuracy) {
  if (generation != m_generation || !m_running) return;
  const bool byEpsilon = m_running->request.vary == FrontierVary::kEpsilon;
  const std::vector<double>& xs = byEpsilon ? m_running->request.epsilons : m_running->request.epochsList;
  if (xs.empty()) return;
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  CurveStyle style;
  style.color = QColor::fromRgb(mechanismColor(ceilingId()));
  style.pen = Qt::DashLine;
  style.width = 1.5;
  style.tooltip = QStringLiteral("non-private SGD, same knobs and epochs, mean over the seeds");
  m_chart->setCurve(QString::fromStdString(ceilingId()),
                    QStringLiteral("non-private (%1 %)").arg(number(100 * accuracy, 3)),
                    {{*lo, accuracy}, {*hi, accuracy}}, style);
  m_chart->refreshAxes();
}

void FrontierPanel::finish(std::uint64_t generation, FrontierResult result) {
  if (generation != m_generation) return;
  m_series = result.series;
  for (std::size_t s = 0; s < m_series.size(); ++s) redrawSeries(s);
  if (result.vary == FrontierVary::kEpochs && m_running && !result.nonPrivateByEpochs.empty()) {
    QVector<QPointF> ceiling;
    for (std::size_t i = 0; i < result.nonPrivateByEpochs.size() && i < m_running->request.epochsList.size(); ++i) {
      ceiling.push_back({m_running->request.epochsList[i], result.nonPrivateByEpochs[i]});
    }
    CurveStyle style;
    style.color = QColor::fromRgb(mechanismColor(ceilingId()));
    style.pen = Qt::DashLine;
    style.width = 1.5;
    style.tooltip = QStringLiteral("non-private SGD at each number of epochs, mean over the seeds");
    m_chart->setCurve(QString::fromStdString(ceilingId()), QStringLiteral("non-private"), ceiling, style);
    m_chart->refreshAxes();
  }
  // Which data (and features) the points are about: a frontier is a fact about one preprocessing.
  const QString data =
      m_running ? QStringLiteral(" on %1%2")
                      .arg(QString::fromStdString(m_running->data.source),
                           m_running->data.features == FeatureKind::kRaw ? QString()
                                                                         : QStringLiteral(" (ScatterNet features)"))
                : QString();
  m_status->setText(QStringLiteral("%1 runs%2 in %3 s%4.")
                        .arg(result.runs)
                        .arg(data, number(result.seconds, 3))
                        .arg(result.cancelled ? QStringLiteral(" (cancelled)") : QString()) +
                    refusedNote());
  m_progress->setValue(1000);
  m_result = std::move(result);
  m_resultTag = m_runningTag;
  if (m_resultTag && m_running && !m_result->cancelled) {
    m_goal->setFrontier(goalSeries(*m_result), m_result->vary == FrontierVary::kEpsilon, m_running->centerEpsilon,
                        *m_resultTag);
  }
  refreshStaleness();
  Q_EMIT frontierFinished();
}

namespace {

// The run the trainer would do for `mechanism` at these knobs, as its accountant sees it (the
// data's n, L and β, the steps of its sampler), or why not.
core::Result<core::Params> resolvedRun(Mechanism mechanism, const TrainerConfig& base, const CachedDataset& data) {
  TrainerConfig config = base;
  config.mechanism = mechanism;
  config.targetEpsilon.reset();  // the report calibrates itself, as the trainer would
  config.bounds = data.bounds;
  DPX_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::create(config, data.data));
  return trainer->resolved().accountantParams;
}

void appendRows(std::vector<UtilityTableRow>& out, const QString& mechanism,
                const std::vector<core::utility::UtilityRow>& rows) {
  for (const core::utility::UtilityRow& r : rows) {
    // A statement that does not apply has no value: its detail says why.
    const QString value = r.applies ? number(r.value, 5) : QStringLiteral("—");
    out.push_back({mechanism, QString::fromStdString(r.label), value, QString::fromStdString(r.detail),
                   QString::fromStdString(r.citation)});
  }
}

void appendError(std::vector<UtilityTableRow>& out, const QString& mechanism, const core::Status& status) {
  out.push_back({mechanism, QStringLiteral("not available"), QStringLiteral("—"),
                 QString::fromStdString(status.message()), QString()});
}

// The bounds of the ticked mechanisms that have them: dp-sgld (Ryffel et al. 2022) and
// sgld-posterior (Li et al. 2019). Runs on a worker: the optimum fit is ~0.1 s on digits.
std::vector<UtilityTableRow> computeUtilityRows(const TrainingRequest& request, const CachedDataset& data,
                                                const std::atomic<bool>& cancel) {
  std::vector<UtilityTableRow> out;
  const double target = request.base.targetEpsilon.value_or(0.0);
  for (Mechanism m : request.mechanisms) {
    if (m != Mechanism::kDpSgld && m != Mechanism::kSgldPosterior) continue;
    const QString id = QString::fromLatin1(mechanismId(m).data());
    core::Result<core::Params> run = resolvedRun(m, request.base, data);
    if (!run) {
      appendError(out, id, run.status());
      continue;
    }
    if (m == Mechanism::kDpSgld) {
      core::utility::LangevinReportRequest r;
      r.params = *run;
      r.targetEpsilon = target;
      if (run->schedule == core::Schedule::kConstant) r.eta = run->eta;  // the step the run takes
      if (!request.base.targetEpsilon) r.sigma = run->sigma;
      r.data = data.data;
      r.cancel = &cancel;
      auto report = core::utility::langevinUtilityReport(r);
      report ? appendRows(out, id, core::utility::utilityRows(*report)) : appendError(out, id, report.status());
    } else {
      core::utility::SgmcmcReportRequest r;
      r.params = *run;
      r.targetEpsilon = target;
      if (!request.base.targetEpsilon) r.eta = run->eta;
      r.burnIn = static_cast<std::int64_t>(std::floor(request.base.posteriorBurnIn * static_cast<double>(run->K)));
      r.data = data.data;
      r.cancel = &cancel;
      auto report = core::utility::sgmcmcUtilityReport(r);
      report ? appendRows(out, id, core::utility::utilityRows(*report)) : appendError(out, id, report.status());
    }
  }
  return out;
}

}  // namespace

void FrontierPanel::refreshUtility() {
  m_utilityStale = false;
  QString error;
  std::optional<TrainingRequest> request = m_session->trainingRequest(&error);
  if (!request) {
    showUtility({{QString(), QStringLiteral("not available"), QStringLiteral("—"), error, QString()}});
    return;
  }
  // The bounds are stated for a target ε: the trainer's, or else the ε the knobs reach.
  if (!request->base.targetEpsilon && !request->targetFromTable) request->targetFromTable = m_model->conversion();
  std::shared_ptr<DatasetCache> cache = m_session->datasets();
  const TrainingRequest work = *request;
  m_utilityView.run(
      [work, cache](const std::atomic<bool>& cancel, const BackgroundJob::Progress&) -> std::any {
        TrainingRequest request = work;
        if (core::Status s = resolveTableTarget(request); !s.isOk()) return s;
        core::Result<CachedDataset> data = cache->get(request.data);
        if (!data) return data.status();
        return computeUtilityRows(request, *data, cancel);
      },
      [this](std::any&& result) {
        if (auto* rows = std::any_cast<std::vector<UtilityTableRow>>(&result)) showUtility(*rows);
        if (auto* status = std::any_cast<core::Status>(&result)) {
          showUtility({{QString(), QStringLiteral("not available"), QStringLiteral("—"),
                        QString::fromStdString(status->message()), QString()}});
        }
      });
}

void FrontierPanel::showUtility(const std::vector<UtilityTableRow>& rows) {
  fillUtility(rows);
  Q_EMIT utilityShown();
}

void FrontierPanel::fillUtility(const std::vector<UtilityTableRow>& rows) {
  m_utility->setRowCount(0);
  if (rows.empty()) {
    m_utility->setRowCount(1);
    m_utility->setItem(0, 0,
                       new QTableWidgetItem(QStringLiteral("Tick dp-sgld or sgld-posterior in the Training tab: "
                                                           "the papers give utility bounds for those two.")));
    return;
  }
  m_utility->setRowCount(static_cast<int>(rows.size()));
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const UtilityTableRow& r = rows[static_cast<std::size_t>(i)];
    auto* label = new QTableWidgetItem(r.mechanism.isEmpty() ? r.label : r.mechanism + QStringLiteral(": ") + r.label);
    label->setToolTip(r.citation);
    m_utility->setItem(i, 0, label);
    m_utility->setItem(i, 1, new QTableWidgetItem(r.value));
    auto* detail = new QTableWidgetItem(r.detail);
    detail->setToolTip(r.detail);
    m_utility->setItem(i, 2, detail);
    m_utility->setItem(i, 3, new QTableWidgetItem(r.citation));
    // Rows without a value (a statement that does not apply, a report not available) step back.
    if (r.value == QStringLiteral("—")) {
      for (int column = 0; column < m_utility->columnCount(); ++column) {
        m_utility->item(i, column)->setForeground(m_utility->palette().color(QPalette::Disabled, QPalette::Text));
      }
    }
  }
}

// A frontier of knobs or data that have changed since stays on screen, faded and labelled as
// such: never read as the current knobs' trade-off.
void FrontierPanel::refreshStaleness() {
  const bool stale = m_resultTag && !m_session->isCurrent(*m_resultTag);
  m_chart->setFaded(stale);
  m_chart->setHeading(stale ? QStringLiteral("Privacy–utility frontier — of earlier knobs")
                            : QStringLiteral("Privacy–utility frontier"));
  m_chart->setMessage(stale ? QStringLiteral("From %1 — before your change. Press Compute for the current knobs.")
                                  .arg(m_session->whatChanged(*m_resultTag))
                            : QString());
}

}  // namespace dpx::ui
