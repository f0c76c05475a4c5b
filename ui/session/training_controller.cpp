#include "session/training_controller.h"

#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/format.h"
#include "common/parallel.h"
#include "compute/analytics.h"
#include "training/feature_extraction.h"

namespace dpx::ui {

using namespace core::training;
using core::Result;

namespace {

// Before any run: parameter·examples per second of the softmax trainer on a 2-core machine with
// the evaluation included — measured ~3e9 on digits and Fashion-MNIST; the prior is lower so the
// first estimate errs on the slow side.
constexpr double kPriorRate = 1.5e9;
// The networks' rate in multiply-adds per second (a training example counted as three forward
// passes): measured ~5e10 for the CNN at batch 256 on 2 cores; the prior is lower.
constexpr double kPriorNetworkRate = 2e10;

DataInfo infoOf(const DatasetKey& key, const CachedDataset& entry) {
  DataInfo info;
  info.source = QString::fromStdString(key.source);
  info.description = QString::fromStdString(entry.description);
  info.trainRecords = entry.data->train.size();
  info.testRecords = entry.data->test.size();
  info.dimension = entry.data->train.dimension();
  info.classes = entry.data->train.numClasses;
  info.features = key.features;
  info.loadSeconds = entry.loadSeconds;
  return info;
}

// One mechanism's trainer: the request's settings on the loaded data, in the caller's arena
// (the mechanisms of a run train side by side).
TrainerConfig configFor(const TrainingRequest& request, Mechanism mechanism, const CachedDataset& data) {
  TrainerConfig config = request.base;
  config.mechanism = mechanism;
  config.accountant.clear();
  config.bounds = data.bounds;
  config.useCallerArena = true;
  if (!isPrivate(mechanism)) config.targetEpsilon.reset();  // the non-private baseline has no ε to meet
  return config;
}

// "1000 steps, σ = 1.1, η = 0.5", and the first violated assumption if any.
QString runDetails(const ResolvedRun& run) {
  QString details = QStringLiteral("%1 steps, σ = %2, η = %3")
                        .arg(run.steps)
                        .arg(QString::fromStdString(core::formatNumber(run.sigma, 4)),
                             QString::fromStdString(core::formatNumber(run.eta, 4)));
  if (!run.violations.empty())
    details += QStringLiteral(" — violates: ") + QString::fromStdString(run.violations.front());
  return details;
}

}  // namespace

core::Status resolveTableTarget(TrainingRequest& request) {
  if (!request.targetFromTable) return core::Status::ok();
  const std::optional<double> target = tableEpsilon(request.base.knobs, *request.targetFromTable);
  if (!target) {
    return core::Status::notApplicable(
        "the accountant table has no ε for these knobs to calibrate to: type a target ε");
  }
  request.base.targetEpsilon = *target;
  request.targetFromTable.reset();
  return core::Status::ok();
}

TrainingController::TrainingController(std::shared_ptr<DatasetCache> cache, QObject* parent)
    : QObject(parent), m_cache(std::move(cache)), m_rate(kPriorRate), m_networkRate(kPriorNetworkRate) {
  qRegisterMetaType<EpochRecord>("dpx::core::training::EpochRecord");
  qRegisterMetaType<TrainingResult>("dpx::core::training::TrainingResult");
  qRegisterMetaType<DataInfo>("dpx::ui::DataInfo");
}

TrainingController::~TrainingController() {
  m_pending.reset();
  cancel();
  wait();
  for (std::thread& t : m_loaders) {
    if (t.joinable()) t.join();
  }
}

void TrainingController::loadData(const DatasetKey& key) {
  if (const auto entry = m_cache->peek(key)) {
    const DataInfo info = infoOf(key, *entry);
    QMetaObject::invokeMethod(
        this, [this, info] { Q_EMIT dataReady(info.source, info); }, Qt::QueuedConnection);
    return;
  }
  // Loads are rare (a new source or seed): one thread each, joined at shutdown.
  m_loaders.emplace_back([this, key] {
    const FeatureExtractionControl extraction = extractionReporter(key, nullptr);
    Result<CachedDataset> entry = m_cache->get(key, &extraction);
    const QString source = QString::fromStdString(key.source);
    if (!entry) {
      const QString message = QString::fromStdString(entry.status().message());
      QMetaObject::invokeMethod(
          this, [this, source, message] { Q_EMIT dataFailed(source, message); }, Qt::QueuedConnection);
      return;
    }
    const DataInfo info = infoOf(key, *entry);
    QMetaObject::invokeMethod(
        this, [this, source, info] { Q_EMIT dataReady(source, info); }, Qt::QueuedConnection);
  });
}

FeatureExtractionControl TrainingController::extractionReporter(const DatasetKey& key,
                                                                const std::atomic<bool>* cancel) {
  FeatureExtractionControl control;
  control.cancel = cancel;
  if (key.features == FeatureKind::kRaw) return control;
  const QString source = QString::fromStdString(key.source);
  // At most a hundred updates: the extraction reports every 64 images.
  auto last = std::make_shared<std::atomic<int>>(-1);
  control.progress = [this, source, last](double fraction) {
    const int percent = static_cast<int>(fraction * 100);
    if (last->exchange(percent) == percent) return;
    QMetaObject::invokeMethod(
        this, [this, source, fraction] { Q_EMIT dataProgress(source, fraction); }, Qt::QueuedConnection);
  };
  return control;
}

std::optional<DataInfo> TrainingController::dataInfo(const DatasetKey& key) const {
  const auto entry = m_cache->peek(key);
  if (!entry) return std::nullopt;
  return infoOf(key, *entry);
}

std::optional<double> TrainingController::estimateSeconds(const TrainingRequest& request) const {
  std::optional<DataInfo> info = dataInfo(request.data);
  double extraction = 0.0;
  if (!info && request.data.features != FeatureKind::kRaw) {
    // Features not computed yet: their extraction from the raw data, if that is loaded (at any
    // scaling: the images' number and shape are what the extraction's time depends on).
    DatasetKey raw = request.data;
    raw.features = FeatureKind::kRaw;
    raw.scaling.reset();
    std::optional<CachedDataset> pixels = m_cache->peek(raw);
    if (!pixels) {
      raw.scaling = FeatureScaling::kNone;
      pixels = m_cache->peek(raw);
    }
    if (!pixels || !pixels->data->train.image) return std::nullopt;
    const ImageShape shape = *pixels->data->train.image;
    const qint64 images = pixels->data->train.size() + pixels->data->test.size();
    extraction = scatterNetSecondsEstimate(images, shape, request.base.threads);
    const Dataset::FeatureMapShape map = scatterNetMapShape(shape);
    const TensorShape input = request.base.model.convex() ? TensorShape{scatterNetDimension(shape), 1, 1}
                                                          : TensorShape{map.channels, map.height, map.width};
    const int classes = pixels->data->train.numClasses;
    return extraction + static_cast<double>(request.mechanisms.size()) *
                            trainingWork(request.base, pixels->data->train.size(), pixels->data->test.size(),
                                         forwardMacsOf(request.base.model, input, classes)) /
                            rateFor(request.base.model);
  }
  const std::optional<CachedDataset> entry = m_cache->peek(request.data);
  if (!entry) return std::nullopt;
  return static_cast<double>(request.mechanisms.size()) * requestWork(request, *entry) / rateFor(request.base.model);
}

double TrainingController::rateFor(const ModelSpec& model) const { return model.convex() ? m_rate : m_networkRate; }

double TrainingController::requestWork(const TrainingRequest& request, const CachedDataset& data) {
  const Dataset& train = data.data->train;
  return trainingWork(request.base, train.size(), data.data->test.size(),
                      forwardMacsOf(request.base.model, modelInput(request.base.model, train), train.numClasses));
}

void TrainingController::start(const TrainingRequest& request) {
  if (m_running) {
    m_pending = request;
    {
      std::lock_guard lock(m_mutex);
      if (m_control) {
        m_control->setPaused(false);
        m_control->requestCancel();
      }
    }
    return;
  }
  launch(request);
}

void TrainingController::launch(const TrainingRequest& request) {
  wait();
  m_results.clear();
  m_slots.assign(request.mechanisms.size(), std::nullopt);
  m_request = request;
  m_paused = false;
  m_running = true;
  auto control = std::make_shared<TrainingControl>();
  {
    std::lock_guard lock(m_mutex);
    m_control = control;
  }
  Q_EMIT started();
  m_thread = std::thread([this, request, control] { work(request, control); });
}

void TrainingController::setPaused(bool paused) {
  m_paused = paused;
  std::lock_guard lock(m_mutex);
  if (m_control) m_control->setPaused(paused);
}

void TrainingController::cancel() {
  m_pending.reset();
  std::lock_guard lock(m_mutex);
  if (m_control) {
    m_control->setPaused(false);
    m_control->requestCancel();
  }
}

void TrainingController::wait() {
  if (m_thread.joinable()) m_thread.join();
}

void TrainingController::work(TrainingRequest request, std::shared_ptr<TrainingControl> control) {
  core::Status target = resolveTableTarget(request);
  // The run's cancel also stops an extraction it waits for.
  const FeatureExtractionControl extraction = extractionReporter(request.data, control->cancelFlag());
  Result<CachedDataset> data = target.isOk() ? m_cache->get(request.data, &extraction) : Result<CachedDataset>(target);
  if (!data) {
    const QString message = QString::fromStdString(data.status().message());
    QMetaObject::invokeMethod(
        this,
        [this, message] {
          Q_EMIT failed(message);
          onWorkerEnded(false, 0.0, 0.0, false);
        },
        Qt::QueuedConnection);
    return;
  }
  const DataInfo info = infoOf(request.data, *data);
  QMetaObject::invokeMethod(
      this,
      [this, info] {
        m_description = info.description;
        Q_EMIT dataReady(info.source, info);
      },
      Qt::QueuedConnection);
  const auto start = std::chrono::steady_clock::now();
  // The mechanisms train side by side: each trainer's gradient chunks and noise parts are tasks
  // of the same arena, so two cores stay busy even when one batch is a single chunk.
  core::inArena(request.base.threads, [&] {
    core::parallelFor(
        std::size_t{0}, request.mechanisms.size(), [&](std::size_t i) { trainOne(request, i, *data, control.get()); },
        tbb::simple_partitioner());
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double work = static_cast<double>(request.mechanisms.size()) * requestWork(request, *data);
  const bool cancelled = control->cancelRequested();
  const bool network = !request.base.model.convex();
  QMetaObject::invokeMethod(
      this, [this, cancelled, work, seconds, network] { onWorkerEnded(cancelled, work, seconds, network); },
      Qt::QueuedConnection);
}

// On a worker of the arena: creates and runs one mechanism's trainer; what happens is posted to
// the GUI thread as queued signals.
void TrainingController::trainOne(const TrainingRequest& request, std::size_t index, const CachedDataset& data,
                                  TrainingControl* control) {
  if (control->cancelRequested()) return;
  const Mechanism mechanism = request.mechanisms[index];
  const QString id = QString::fromLatin1(mechanismId(mechanism).data());
  Result<std::unique_ptr<Trainer>> trainer = Trainer::create(configFor(request, mechanism, data), data.data);
  if (!trainer) {
    postFailure(id, trainer.status());
    return;
  }
  const QString details = runDetails((*trainer)->resolved());
  QMetaObject::invokeMethod(
      this, [this, id, details] { Q_EMIT runStarted(id, details); }, Qt::QueuedConnection);
  Result<TrainingResult> result = (*trainer)->run(control, forwardingCallbacks(id));
  if (!result) {
    postFailure(id, result.status());
    return;
  }
  postResult(id, index, std::move(*result));
}

// Progress and finished epochs of mechanism `id`, forwarded to the GUI thread.
TrainerCallbacks TrainingController::forwardingCallbacks(const QString& id) {
  TrainerCallbacks callbacks;
  callbacks.progress = [this, id](double fraction, std::int64_t) {
    QMetaObject::invokeMethod(
        this, [this, fraction, id] { Q_EMIT progress(id, fraction); }, Qt::QueuedConnection);
  };
  callbacks.epochDone = [this, id](const EpochRecord& record) {
    QMetaObject::invokeMethod(
        this, [this, record, id] { Q_EMIT epochDone(id, record); }, Qt::QueuedConnection);
  };
  return callbacks;
}

void TrainingController::postFailure(const QString& id, const core::Status& status) {
  const QString message = id + QStringLiteral(": ") + QString::fromStdString(status.message());
  QMetaObject::invokeMethod(
      this, [this, message] { Q_EMIT failed(message); }, Qt::QueuedConnection);
}

// Stores the result in its mechanism's slot (results() keeps the request's order) and announces it.
void TrainingController::postResult(const QString& id, std::size_t index, TrainingResult result) {
  QMetaObject::invokeMethod(
      this,
      [this, id, index, r = std::move(result)]() mutable {
        if (index < m_slots.size()) m_slots[index] = r;
        m_results.clear();
        for (const auto& slot : m_slots) {
          if (slot) m_results.push_back(*slot);
        }
        Q_EMIT runFinished(id, r);
      },
      Qt::QueuedConnection);
}

void TrainingController::onWorkerEnded(bool cancelled, double workUnits, double seconds, bool network) {
  wait();
  m_running = false;
  if (!cancelled && workUnits > 0.0 && seconds > 0.05) (network ? m_networkRate : m_rate) = workUnits / seconds;
  Q_EMIT finished(cancelled);
  if (m_pending) {
    const TrainingRequest next = *m_pending;
    m_pending.reset();
    launch(next);
  }
}

}  // namespace dpx::ui
