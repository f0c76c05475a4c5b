#include "training_controller.h"

#include <QMetaObject>

#include "common/format.h"

namespace dpx::ui {

using namespace core::training;
using core::Result;

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<EpochRecord>("dpx::core::training::EpochRecord");
}

TrainingController::~TrainingController() {
  cancel();
  wait();
}

void TrainingController::start(const TrainingRequest& request) {
  if (m_running) return;
  wait();
  m_results.clear();
  m_paused = false;
  m_running = true;
  {
    std::lock_guard lock(m_mutex);
    m_control = std::make_shared<TrainingControl>();
  }
  m_thread = std::thread([this, request] { work(request); });
}

void TrainingController::setPaused(bool paused) {
  m_paused = paused;
  std::lock_guard lock(m_mutex);
  if (m_control) m_control->setPaused(paused);
}

void TrainingController::cancel() {
  std::lock_guard lock(m_mutex);
  if (m_control) {
    m_control->setPaused(false);
    m_control->requestCancel();
  }
}

void TrainingController::wait() {
  if (m_thread.joinable()) m_thread.join();
}

void TrainingController::work(TrainingRequest request) {
  auto post = [this](auto&& f) { QMetaObject::invokeMethod(this, std::forward<decltype(f)>(f), Qt::QueuedConnection); };
  std::shared_ptr<TrainingControl> control;
  {
    std::lock_guard lock(m_mutex);
    control = m_control;
  }
  // The loaded data is kept between runs of the same source.
  const QString key = request.source + QLatin1Char('#') + QString::number(request.labelColumn) + QLatin1Char('#') +
                      QString::number(request.testFraction) + QLatin1Char('#') + QString::number(request.base.seed);
  std::shared_ptr<const TrainTestSplit> data;
  QString description;
  {
    std::lock_guard lock(m_mutex);
    if (key == m_dataKey) {
      data = m_data;
      description = m_description;
    }
  }
  if (!data) {
    LoadOptions options;
    options.labelColumn = request.labelColumn;
    Result<LoadedData> loaded = loadData(request.source.toStdString(), options);
    if (!loaded) {
      post([this, message = QString::fromStdString(loaded.status().message())] {
        m_running = false;
        Q_EMIT failed(message);
        Q_EMIT finished(false);
      });
      return;
    }
    description = QString::fromStdString(loaded->description);
    Result<TrainTestSplit> split = trainTestSplit(std::move(*loaded), request.testFraction, request.base.seed);
    if (!split) {
      post([this, message = QString::fromStdString(split.status().message())] {
        m_running = false;
        Q_EMIT failed(message);
        Q_EMIT finished(false);
      });
      return;
    }
    data = std::make_shared<const TrainTestSplit>(std::move(*split));
    std::lock_guard lock(m_mutex);
    m_data = data;
    m_dataKey = key;
    m_description = description;
  }
  post([this, description] { Q_EMIT dataLoaded(description); });

  bool cancelled = false;
  for (Mechanism mechanism : request.mechanisms) {
    if (control->cancelRequested()) {
      cancelled = true;
      break;
    }
    const QString id = QString::fromLatin1(mechanismId(mechanism).data());
    TrainerConfig config = request.base;
    config.mechanism = mechanism;
    config.accountant.clear();
    if (mechanism == Mechanism::kSgd) config.targetEpsilon.reset();  // the non-private baseline has no ε to meet
    Result<std::unique_ptr<Trainer>> trainer = Trainer::create(config, data);
    if (!trainer) {
      post([this, message = id + QStringLiteral(": ") + QString::fromStdString(trainer.status().message())] {
        Q_EMIT failed(message);
      });
      continue;
    }
    const ResolvedRun& run = (*trainer)->resolved();
    QString details = QStringLiteral("%1 steps, σ = %2, η = %3").arg(run.steps).arg(
        QString::fromStdString(core::formatNumber(run.sigma, 4)), QString::fromStdString(core::formatNumber(run.eta, 4)));
    if (!run.violations.empty()) details += QStringLiteral(" — violates: ") + QString::fromStdString(run.violations.front());
    post([this, id, details] { Q_EMIT runStarted(id, details); });
    TrainerCallbacks callbacks;
    callbacks.progress = [this, id](double fraction, std::int64_t) {
      QMetaObject::invokeMethod(this, [this, fraction, id] { Q_EMIT progress(fraction, id); }, Qt::QueuedConnection);
    };
    callbacks.epochDone = [this, id](const EpochRecord& record) {
      QMetaObject::invokeMethod(this, [this, record, id] { Q_EMIT epochDone(id, record); }, Qt::QueuedConnection);
    };
    Result<TrainingResult> result = (*trainer)->run(control.get(), callbacks);
    if (!result) {
      post([this, message = id + QStringLiteral(": ") + QString::fromStdString(result.status().message())] {
        Q_EMIT failed(message);
      });
      continue;
    }
    const bool stopped = result->cancelled;
    post([this, id, r = std::move(*result)]() mutable {
      m_results.push_back(std::move(r));
      Q_EMIT runFinished(id);
    });
    if (stopped) {
      cancelled = true;
      break;
    }
  }
  post([this, cancelled] {
    m_running = false;
    Q_EMIT finished(cancelled);
  });
}

}  // namespace dpx::ui
