// Drives the core trainer from the GUI: loads datasets on a worker (through a shared cache),
// trains the ticked mechanisms side by side in one oneTBB arena on a worker thread, with pause,
// resume, cancel and restart (a newer request cancels the running one and starts when it has
// stopped); epoch records, progress and results come back to the GUI thread as queued signals.
// It also measures how fast this machine trains, to say whether a run is quick enough to follow
// the knobs live.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "accounting/accountant.h"
#include "training/dataset_cache.h"
#include "training/trainer.h"

namespace dpx::ui {

struct TrainingRequest {
  core::training::DatasetKey data;
  std::vector<core::training::Mechanism> mechanisms;
  core::training::TrainerConfig base;  // mechanism (and accountant) replaced per run
  // Calibrate to the ε the accountant table shows for the knobs (the rdp row at this
  // conversion), computed on the worker when the table has not caught up with the knobs yet.
  std::optional<core::accounting::Conversion> targetFromTable;
};

// Sets base.targetEpsilon from targetFromTable (the rdp accountant's ε of the knobs, exactly as
// the table computes it); a no-op otherwise. Runs on a worker: it is an RDP conversion.
core::Status resolveTableTarget(TrainingRequest& request);

// What the trainer panel shows about a loaded source.
struct DataInfo {
  QString source;
  QString description;
  qint64 trainRecords = 0;
  qint64 testRecords = 0;
  int dimension = 0;
  int classes = 0;
  core::training::FeatureKind features = core::training::FeatureKind::kRaw;
  double loadSeconds = 0.0;
};

class TrainingController : public QObject {
  Q_OBJECT
 public:
  explicit TrainingController(std::shared_ptr<core::training::DatasetCache> cache, QObject* parent = nullptr);
  ~TrainingController() override;

  // Loads (or finds in the cache) a dataset on a worker: dataReady or dataFailed follows.
  void loadData(const core::training::DatasetKey& key);
  std::optional<DataInfo> dataInfo(const core::training::DatasetKey& key) const;
  std::shared_ptr<core::training::DatasetCache> cache() const { return m_cache; }

  bool running() const { return m_running; }
  // Starts the request; if a run is going, cancels it and starts this one once it has stopped.
  void start(const TrainingRequest& request);
  void setPaused(bool paused);
  bool paused() const { return m_paused; }
  void cancel();  // also drops a request waiting to start
  void wait();    // blocks until the worker has ended (tests, shutdown)

  // Results of the last start(), in the order of its mechanisms (finished runs only).
  const std::vector<core::training::TrainingResult>& results() const { return m_results; }
  QString dataDescription() const { return m_description; }
  const std::optional<TrainingRequest>& lastRequest() const { return m_request; }

  // Seconds the request would take on this machine: training and per-epoch evaluation work over
  // the measured rate (a conservative prior before the first run), plus the features'
  // extraction when they are not computed yet but the source's raw data is loaded (then its
  // size is known). Nullopt when the data's size is unknown (not loaded).
  std::optional<double> estimateSeconds(const TrainingRequest& request) const;
  // Work units (training_controller.cpp: forward multiply-adds × examples) per second measured
  // on the last finished request of softmax regression, or of a network (or the priors).
  double measuredRate() const { return m_rate; }
  double measuredNetworkRate() const { return m_networkRate; }

 Q_SIGNALS:
  void dataReady(const QString& source, const dpx::ui::DataInfo& info);
  // Features are being extracted for `source` (fraction done), before dataReady.
  void dataProgress(const QString& source, double fraction);
  void dataFailed(const QString& source, const QString& message);
  void started();
  void runStarted(const QString& mechanism, const QString& details);
  void epochDone(const QString& mechanism, const core::training::EpochRecord& record);
  void progress(const QString& mechanism, double fraction);
  void runFinished(const QString& mechanism, const core::training::TrainingResult& result);
  void failed(const QString& message);
  void finished(bool cancelled);

 private:
  void launch(const TrainingRequest& request);
  void work(TrainingRequest request, std::shared_ptr<core::training::TrainingControl> control);
  void trainOne(const TrainingRequest& request, std::size_t index, const core::training::CachedDataset& data,
                core::training::TrainingControl* control);
  core::training::TrainerCallbacks forwardingCallbacks(const QString& id);
  void postFailure(const QString& id, const core::Status& status);
  void postResult(const QString& id, std::size_t index, core::training::TrainingResult result);
  void onWorkerEnded(bool cancelled, double workUnits, double seconds, bool network);
  double rateFor(const core::training::ModelSpec& model) const;
  // The work of one mechanism's run of `request` on `data` (trainingWork with the model's size).
  static double requestWork(const TrainingRequest& request, const core::training::CachedDataset& data);
  // Extraction progress of `key`'s features, posted to the GUI thread as dataProgress.
  core::training::FeatureExtractionControl extractionReporter(const core::training::DatasetKey& key,
                                                              const std::atomic<bool>* cancel);
  std::shared_ptr<core::training::DatasetCache> m_cache;
  std::thread m_thread;
  std::vector<std::thread> m_loaders;
  bool m_running = false;
  bool m_paused = false;
  std::mutex m_mutex;
  std::shared_ptr<core::training::TrainingControl> m_control;
  std::optional<TrainingRequest> m_request;
  std::optional<TrainingRequest> m_pending;
  std::vector<core::training::TrainingResult> m_results;
  std::vector<std::optional<core::training::TrainingResult>> m_slots;  // by mechanism index
  QString m_description;
  double m_rate;         // softmax regression
  double m_networkRate;  // the networks
};

}  // namespace dpx::ui

Q_DECLARE_METATYPE(dpx::core::training::EpochRecord)
Q_DECLARE_METATYPE(dpx::core::training::TrainingResult)
Q_DECLARE_METATYPE(dpx::ui::DataInfo)
