// The privacy–utility frontier view: test accuracy against ε for each ticked mechanism (every
// point a run calibrated to its target, mean over seeds with the min–max band, non-private SGD
// as the ceiling, the current ε marked), or accuracy against epochs at the current ε (each point
// recalibrated: whether more epochs help at equal privacy). Points appear as their runs finish; a
// newer request cancels the older one. Below it, the papers' utility bounds for the knobs.
// The data, mechanisms, knobs and seed are the trainer's (one set of knobs).
// A third mode puts models side by side (Tramèr & Boneh 2021's picture): linear on pixels,
// ScatterNet + linear and the end-to-end CNN, each trained by DP-SGD with its own recipe
// (model_comparison.h) at the same targets ε. Following the knobs, a frontier starts by itself only
// when this machine is estimated to finish it within the live budget (two seconds); otherwise the
// status says how long it would take and Compute starts it. Under the status line, goal-seek
// (goal_seek_box.h) answers from the finished frontier.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QWidget>
#include <atomic>
#include <memory>
#include <optional>

#include "charts/chart_panel.h"
#include "compute/background_job.h"
#include "goal_seek_box.h"
#include "session/session.h"
#include "session/view_controller.h"
#include "training/dataset_cache.h"
#include "training/frontier.h"
#include "training/model_comparison.h"

namespace dpx::ui {

// A row of the utility table: what, its value, where it comes from.
struct UtilityTableRow {
  QString mechanism;
  QString label;
  QString value;
  QString detail;
  QString citation;
};

// A frontier request: the trainer's knobs, data, mechanisms and seed, and the grid.
struct FrontierJob {
  core::training::DatasetKey data;
  core::training::FrontierRequest request;
  double centerEpsilon = 0.0;
  double centerEpochs = 0.0;
};

class FrontierPanel : public QWidget {
  Q_OBJECT
 public:
  explicit FrontierPanel(Session* session, QWidget* parent = nullptr);
  ChartPanel* chart() const { return m_chart; }
  // The frontier on the chart (nullopt before the first, or while the chart compares models).
  const std::optional<FrontierJob>& frontierJob() const { return m_running; }
  QComboBox* modeBox() const { return m_mode; }
  QSpinBox* pointsBox() const { return m_points; }
  QSpinBox* seedsBox() const { return m_seeds; }
  QPushButton* computeButton() const { return m_compute; }
  QCheckBox* followBox() const { return m_follow; }
  QTableWidget* utilityTable() const { return m_utility; }
  BackgroundJob* utilityJob() { return m_utilityView.job(); }
  QLabel* statusLabel() const { return m_status; }
  GoalSeekBox* goalSeek() const { return m_goal; }
  BackgroundJob* job() { return &m_job; }
  // The finished frontier (points of a running one arrive in the chart first).
  const std::optional<core::training::FrontierResult>& lastResult() const { return m_result; }
  std::optional<FrontierJob> buildJob(QString* error) const;
  // The models mode's request: the trainer's source, δ, seed and threads, the ε grid, the seeds.
  std::optional<core::training::ModelComparisonRequest> buildComparison(QString* error) const;
  const std::optional<core::training::ModelComparisonResult>& lastComparison() const { return m_comparison; }
  // The comparison on the chart, running or finished (nullopt while the chart shows a frontier).
  const std::optional<core::training::ModelComparisonRequest>& comparisonJob() const { return m_comparisonRunning; }
  // The knobs and data of the finished frontier or comparison.
  const std::optional<ResultTag>& resultTag() const { return m_resultTag; }
  bool modelsMode() const;
  void compute();  // a newer request cancels the running one
  // Following the knobs: computes when the estimate is within the live budget; otherwise says
  // how long it would take (press Compute).
  void computeIfQuick();
  // Seconds the current mode's frontier would take on this machine; nullopt when unknown (the
  // data not loaded yet).
  std::optional<double> estimateSeconds() const;

 Q_SIGNALS:
  void pointShown();
  void frontierFinished();
  void utilityShown();  // the utility table was filled (or says why not)

 private:
  void refreshStaleness();
  void showEvent(QShowEvent* event) override;
  QHBoxLayout* buildToolbar();
  QSplitter* buildChartAndTable();
  void connectSignals();
  std::size_t resetSeries(const FrontierJob& job);
  void prepareChart(const FrontierJob& job);
  void startJob(const FrontierJob& job, std::uint64_t generation);
  core::Result<core::training::FrontierResult> runFrontier(const FrontierJob& work, core::training::DatasetCache& cache,
                                                           std::uint64_t generation, const std::atomic<bool>& cancel,
                                                           const BackgroundJob::Progress& progress);
  void showPoint(std::uint64_t generation, std::size_t series, std::size_t index,
                 const core::training::FrontierPoint& point);
  void showCeiling(std::uint64_t generation, double accuracy);
  void redrawSeries(std::size_t series);
  void finish(std::uint64_t generation, core::training::FrontierResult result);
  void computeModels();
  // " Not drawn: dp-sgld — non-convex model …" for ticked mechanisms the trainer's model refuses.
  QString refusedNote() const;
  void showModelPoint(std::uint64_t generation, std::size_t series, std::size_t index,
                      const core::training::FrontierPoint& point);
  void redrawModel(std::size_t series);
  void finishModels(std::uint64_t generation, core::training::ModelComparisonResult result);
  void refreshUtility();
  void showUtility(const std::vector<struct UtilityTableRow>& rows);
  void fillUtility(const std::vector<struct UtilityTableRow>& rows);
  ParameterModel* m_model;
  Session* m_session;
  ChartPanel* m_chart;
  QComboBox* m_mode;
  QSpinBox* m_points;
  QSpinBox* m_seeds;
  QPushButton* m_compute;
  QPushButton* m_cancel;
  QCheckBox* m_follow;
  QProgressBar* m_progress;
  QLabel* m_status;
  QTableWidget* m_utility;
  GoalSeekBox* m_goal;
  BackgroundJob m_job{true};
  ViewController m_utilityView;  // the utility table
  bool m_utilityStale = true;    // the bounds are for other knobs (or none yet)
  QTimer m_settle;
  std::uint64_t m_generation = 0;
  std::optional<FrontierJob> m_running;
  std::vector<core::training::FrontierSeries> m_series;  // as points arrive
  std::optional<core::training::FrontierResult> m_result;
  std::optional<core::training::ModelComparisonRequest> m_comparisonRunning;
  std::vector<core::training::ModelComparisonSeries> m_models;  // as points arrive
  std::optional<core::training::ModelComparisonResult> m_comparison;
  std::optional<ResultTag> m_runningTag;
  std::optional<ResultTag> m_resultTag;
};

}  // namespace dpx::ui
