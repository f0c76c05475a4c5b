// The trainer panel (SPEC §4, chart 5): choose a dataset (embedded digits and breast-cancer,
// Fashion-MNIST when installed, or a CSV/LIBSVM/IDX file) and the mechanisms to compare, then
// watch train/test accuracy and ε spent grow epoch by epoch while TBB workers train. The privacy
// knobs (σ, δ, L, schedule) come from the explorer, or σ is calibrated per mechanism to a target
// ε; batch size, step size, λ and epochs are the dataset's own. "Explore this run" sends the run
// as trained (its n, m, K, σ, η, L, λ) back to the explorer's knobs.
#pragma once

#include <map>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>

#include "charts/chart_panel.h"
#include "parameter_model.h"
#include "training_controller.h"

namespace dpx::ui {

class TrainerPanel : public QWidget {
  Q_OBJECT
 public:
  TrainerPanel(ParameterModel* model, QWidget* parent = nullptr);
  ~TrainerPanel() override;

  ChartPanel* accuracyChart() const { return m_accuracy; }
  ChartPanel* epsilonChart() const { return m_epsilon; }
  TrainingController* controller() { return &m_controller; }
  QPushButton* startButton() const { return m_start; }
  QPushButton* pauseButton() const { return m_pause; }
  QPushButton* cancelButton() const { return m_cancel; }
  QComboBox* datasetBox() const { return m_dataset; }
  QCheckBox* mechanismBox(core::training::Mechanism m) const { return m_mechanisms.at(m); }
  QSpinBox* epochsBox() const { return m_epochs; }
  QTableWidget* resultsTable() const { return m_results; }
  void setSource(const QString& source);  // selects (or adds) a dataset source
  void start();
  // The request the Start button would send; nullopt with the reason in `error`.
  std::optional<TrainingRequest> buildRequest(QString* error) const;

 Q_SIGNALS:
  void trainingFinished();
  void exploreRun(const core::Params& params);

 private:
  void onEpoch(const QString& mechanism, const core::training::EpochRecord& record);
  void onRunFinished(const QString& mechanism);
  void updateButtons();
  QString currentSource() const;
  ParameterModel* m_model;
  TrainingController m_controller;
  QComboBox* m_dataset;
  std::map<core::training::Mechanism, QCheckBox*> m_mechanisms;
  QSpinBox* m_batch;
  QDoubleSpinBox* m_eta;
  QDoubleSpinBox* m_lambda;
  QSpinBox* m_epochs;
  QCheckBox* m_targetMode;
  QLineEdit* m_target;
  QSpinBox* m_threads;
  QSpinBox* m_seed;
  QPushButton* m_start;
  QPushButton* m_pause;
  QPushButton* m_cancel;
  QPushButton* m_explore;
  QProgressBar* m_progress;
  QLabel* m_status;
  QTableWidget* m_results;
  ChartPanel* m_accuracy;
  ChartPanel* m_epsilon;
  std::map<QString, std::vector<core::training::EpochRecord>> m_history;
};

}  // namespace dpx::ui
