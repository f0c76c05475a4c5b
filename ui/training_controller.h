// Drives the core trainer from the GUI: loads the dataset and trains the chosen mechanisms one
// after another on a worker thread (each using all TBB workers), with pause, resume and cancel;
// epoch records, progress and results come back to the GUI thread as queued signals.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include "training/trainer.h"

namespace dpx::ui {

struct TrainingRequest {
  QString source;                 // "builtin:digits", a path …
  int labelColumn = -1;           // CSV files
  std::vector<core::training::Mechanism> mechanisms;
  core::training::TrainerConfig base;  // mechanism is replaced per run
  double testFraction = 0.2;
};

class TrainingController : public QObject {
  Q_OBJECT
 public:
  explicit TrainingController(QObject* parent = nullptr);
  ~TrainingController() override;

  bool running() const { return m_running; }
  void start(const TrainingRequest& request);
  void setPaused(bool paused);
  bool paused() const { return m_paused; }
  void cancel();
  void wait();  // blocks until the worker has ended (tests, shutdown)

  // Results of the runs of the last start(), in order (GUI thread only).
  const std::vector<core::training::TrainingResult>& results() const { return m_results; }
  std::shared_ptr<const core::training::TrainTestSplit> data() const { return m_data; }
  QString dataDescription() const { return m_description; }

 Q_SIGNALS:
  void dataLoaded(const QString& description);
  void runStarted(const QString& mechanism, const QString& details);
  void epochDone(const QString& mechanism, const core::training::EpochRecord& record);
  void progress(double fraction, const QString& mechanism);
  void runFinished(const QString& mechanism);
  void failed(const QString& message);
  void finished(bool cancelled);

 private:
  void work(TrainingRequest request);
  std::thread m_thread;
  std::atomic<bool> m_running{false};
  bool m_paused = false;
  std::mutex m_mutex;
  std::shared_ptr<core::training::TrainingControl> m_control;
  std::vector<core::training::TrainingResult> m_results;
  std::shared_ptr<const core::training::TrainTestSplit> m_data;
  QString m_dataKey;
  QString m_description;
};

}  // namespace dpx::ui

Q_DECLARE_METATYPE(dpx::core::training::EpochRecord)
