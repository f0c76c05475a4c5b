// The GUI's application layer: what every view reads and no view owns. A session holds the
// parameter model (the knobs and the trainer's settings, undoable), the training controller
// (and through it the shared dataset cache), the run settings that are not undone (seed,
// threads), and the values derived once for every view: the headline ε (the rdp accountant's ε
// of the current knobs, as the accountant table shows it) and from it the default calibration
// target. Views (the trainer, audit, frontier and calibration panels) receive the session and
// never each other; the request a training run sends is built here, once, for all of them.
// Widget-free: it is QObject signals and plain values.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>
#include <optional>

#include "compute/background_job.h"
#include "session/parameter_model.h"
#include "session/training_controller.h"

namespace dpx::ui {

// Live runs (training, the frontier) start by themselves only when estimated to finish within
// this time; longer ones wait for a press.
inline constexpr double kLiveBudgetSeconds = 2.0;
// Knob changes settle this long before a live restart.
inline constexpr int kLiveDebounceMs = 150;

// What produced a result: the knobs, and the data when the result trained on some. A view keeps
// it beside its result, so that a leftover of knobs or data that are gone can be told from a
// finding about the current ones.
struct ResultTag {
  core::Params knobs;
  std::optional<core::training::DatasetKey> data;
  bool operator==(const ResultTag&) const = default;
};
ResultTag tagOf(const TrainingRequest& request);

class Session : public QObject {
  Q_OBJECT
 public:
  Session(ParameterModel* model, std::shared_ptr<core::training::DatasetCache> cache, QObject* parent = nullptr);
  ~Session() override;

  ParameterModel* model() const { return m_model; }
  TrainingController* training() { return &m_training; }
  const TrainingController* training() const { return &m_training; }
  std::shared_ptr<core::training::DatasetCache> datasets() const { return m_training.cache(); }

  // Run settings outside the undo history: the seed of the split, the sampling and the noise,
  // and the worker threads of a run.
  std::uint64_t seed() const { return m_seed; }
  void setSeed(std::uint64_t seed);
  int threads() const { return m_threads; }
  void setThreads(int threads);

  // The headline ε of `params` (nullopt when the rdp accountant has none); it stands for the
  // current knobs only while `params` are the knobs.
  void setHeadlineEpsilon(const core::Params& params, std::optional<double> epsilon);
  // Computes the headline ε on a worker (one RDP conversion) when the table is not computing it.
  void requestHeadlineEpsilon(const core::Params& params, core::accounting::Conversion conversion);
  // The headline ε, if it is the current knobs'.
  std::optional<double> headlineEpsilon() const;
  // What runs calibrate to: the trainer's typed target, else the headline ε.
  std::optional<double> defaultTarget() const;

  // The key of the trainer's current data (source, features, scaling, split seed).
  core::training::DatasetKey dataKey() const;
  // Whether a result with `tag` is about the current knobs (and, if it trained, the current data).
  bool isCurrent(const ResultTag& tag) const;
  // Empty when a result with `tag` is current; else what differs, for the user: "σ = 1.1 (now
  // 27.5), other data".
  QString whatChanged(const ResultTag& tag) const;
  // The tag of the training controller's results (nullopt before the first run).
  std::optional<ResultTag> trainingTag() const;
  // The request a training run sends for the current knobs and settings (the mechanisms the model
  // refuses left out), or nullopt with the reason in `error`.
  std::optional<TrainingRequest> trainingRequest(QString* error) const;

 Q_SIGNALS:
  void headlineEpsilonChanged();
  void runSettingsChanged();  // seed or threads
  // A training run ended (cancelled or not); the controller's results are final.
  void trainingFinished();

 private:
  ParameterModel* m_model;
  TrainingController m_training;
  std::uint64_t m_seed = 1;
  int m_threads;
  std::optional<double> m_headlineEpsilon;
  core::Params m_headlineParams;
  BackgroundJob m_headlineJob{false};
};

}  // namespace dpx::ui
