// The trainer panel: choose a dataset (embedded digits and breast cancer, Fashion-MNIST when
// installed, or a CSV/LIBSVM/IDX file) and the mechanisms to compare, then watch train/test
// accuracy and ε spent grow epoch by epoch while the mechanisms train side by side. The model is
// softmax regression or a network (mlp, cnn, scatter-cnn); a network is trained only by the
// mechanisms whose accountants hold for a non-convex loss, the others are greyed with the reason.
// The trainer has no knobs of its own: m, σ, η, λ, δ, L, K (as epochs), schedule and sampling
// come from the parameter model, and so do the dataset, the mechanisms and the calibration
// target (undoable, set by presets). Calibration makes every mechanism meet the same ε (by
// default the ε the accountant table shows for the current knobs). With "live" on, a settled
// change of the knobs restarts training when this machine can finish it within two seconds.
// Where a run uses another value than a knob (n from the data, L and β from the data, σ from
// calibration), the results table shows both and says why.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QProgressBar>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QWidget>
#include <map>
#include <memory>
#include <optional>

#include "charts/chart_panel.h"
#include "session/session.h"
#include "session/session_file.h"

namespace dpx::ui {

// A run estimated longer than this shows its estimate and the time left.
inline constexpr double kLongRunSeconds = 10.0;
// Epochs that stream in faster than this are drawn together.
inline constexpr int kEpochRedrawMs = 40;

class TrainerPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TrainerPanel(Session* session, QWidget* parent = nullptr);
  ~TrainerPanel() override;

  ChartPanel* accuracyChart() const { return m_accuracy; }
  ChartPanel* epsilonChart() const { return m_epsilon; }
  TrainingController* controller() { return &m_controller; }
  Session* session() const { return m_session; }
  QPushButton* startButton() const { return m_start; }
  QPushButton* pauseButton() const { return m_pause; }
  QPushButton* cancelButton() const { return m_cancel; }
  QComboBox* datasetBox() const { return m_dataset; }
  QComboBox* featuresBox() const { return m_features; }
  QComboBox* modelBox() const { return m_modelKind; }
  QSpinBox* hiddenBox() const { return m_hidden; }
  QCheckBox* mechanismBox(core::training::Mechanism m) const { return m_mechanisms.at(m); }
  QCheckBox* liveBox() const { return m_live; }
  QCheckBox* calibrateBox() const { return m_calibrate; }
  QLineEdit* targetEntry() const { return m_target; }
  QTableWidget* resultsTable() const { return m_results; }
  QLabel* statusLabel() const { return m_status; }
  QLabel* knobSummary() const { return m_knobSummary; }
  QSpinBox* seedBox() const { return m_seed; }
  QSpinBox* threadsBox() const { return m_threads; }

  // Selects (or adds) a dataset source: an undoable change of the trainer's settings.
  void setSource(const QString& source);
  // Loads the current source if it is not loaded yet (binds n when n follows the data).
  void ensureDataLoaded();
  void start();
  // The request the Start button would send (the session's); nullopt with the reason in `error`.
  std::optional<TrainingRequest> buildRequest(QString* error) const;
  // Sets what the model sees (raw values or ScatterNet features): an undoable change.
  void setFeatures(core::training::FeatureKind features);
  // Sets the model trained: an undoable change. The CNNs read pixels as they are (x/255) or the
  // ScatterNet feature map, so choosing one also sets the features and scaling it reads.
  void setModel(const core::training::ModelSpec& model);
  // The key of the current data (source, features, scaling, split seed).
  core::training::DatasetKey dataKey() const;
  // The last training's finished runs as a session keeps them, with their knobs and data.
  std::vector<SavedRun> savedRuns() const;
  // Draws runs read from a session (curves and rows, greyed), and says what they ran with.
  void showSavedRuns(const std::vector<SavedRun>& runs);

 Q_SIGNALS:
  void trainingFinished();
  void liveRestarted();  // a settled change restarted training
  void exploreRun(const core::Params& params);

 private:
  void buildControls(QWidget* controls);
  QGroupBox* buildDataBox(QWidget* parent);
  QGroupBox* buildMechanismBox(QWidget* parent);
  QGroupBox* buildRunBox(QWidget* parent);
  void buildResultsTable();
  void connectControls();
  void onDatasetChosen(int index);
  void onDataReady(const QString& source, const DataInfo& info);
  void onFinished(bool cancelled);
  void onTargetTyped();
  void connectController();
  void refreshFromModel();
  void refreshSummary();
  void onSettled();
  void onEpoch(const QString& mechanism, const core::training::EpochRecord& record);
  void redrawEpochs();
  void drawHistory(const QString& mechanism);
  void onRunFinished(const QString& mechanism, const core::training::TrainingResult& result);
  void updateButtons();
  void showRemaining(double fractionDone);
  void clearRun();
  void editTrainer(const std::function<void(TrainerSettings&)>& edit, const QString& text);
  QString currentSource() const;
  Session* m_session;
  ParameterModel* m_model;
  TrainingController& m_controller;
  QComboBox* m_dataset = nullptr;
  QComboBox* m_features = nullptr;
  QComboBox* m_modelKind = nullptr;
  QSpinBox* m_hidden = nullptr;
  QLabel* m_dataInfo = nullptr;
  std::map<core::training::Mechanism, QCheckBox*> m_mechanisms;
  QLabel* m_knobSummary = nullptr;
  QCheckBox* m_calibrate = nullptr;
  QLineEdit* m_target = nullptr;
  QSpinBox* m_threads = nullptr;
  QSpinBox* m_seed = nullptr;
  QCheckBox* m_live = nullptr;
  QPushButton* m_start = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_explore = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QTableWidget* m_results = nullptr;
  ChartPanel* m_accuracy = nullptr;
  ChartPanel* m_epsilon = nullptr;
  QTimer m_liveTimer;
  QTimer m_redrawTimer;  // epochs stream faster than charts paint: draw at most every 40 ms
  QElapsedTimer m_sinceRedraw;
  QElapsedTimer m_runClock;  // since the run started (loading, calibration and training)
  QSet<QString> m_dirty;     // mechanisms with epochs not drawn yet
  bool m_liveWaitingForData = false;
  // Sources that cannot be trained on (failed to load, too few records), with the reason.
  QMap<QString, QString> m_dataProblems;
  std::optional<double> m_estimatedSeconds;  // of the run started last
  std::map<QString, std::vector<core::training::EpochRecord>> m_history;
  std::map<QString, double> m_fractions;
};

}  // namespace dpx::ui
