// "σ for a target", applied with one click (an undoable edit of σ). Two kinds of target:
//  * a target ε, per accountant (conservative: every σ shown gives ε ≤ target); the target also
//    anchors the constants c and c₂ of the step-size chart;
//  * a target attack risk (Kulynych et al. 2024): a membership-inference attack's TPR at a chosen
//    FPR, or its advantage max (TPR − FPR), read from the pessimistic exact PLD trade-off curve of
//    the run (DP-SGD), so the σ shown keeps every attack at or below the target.
// Both searches run in the background. When the trainer has its data loaded, each σ found is also
// trained — the mechanism its analysis proves, with the trainer's settings and that σ fixed — on a
// third background job, and its test accuracy is shown beside it: what each answer costs in utility.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QWidget>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "accounting/risk_calibration.h"
#include "compute/background_job.h"
#include "session/parameter_model.h"
#include "session/training_controller.h"
#include "training/dataset_cache.h"

namespace dpx::ui {

class Session;

// One accountant's answer to the ε target: the σ that meets it and the ε it gives, or why there is
// none.
struct CalibrationRow {
  std::string id;
  bool estimate = false;                // the accountant estimates ε: its σ does not guarantee the target
  std::vector<std::string> violations;  // the analysis' assumptions the run breaks (then neither does it)
  std::optional<double> sigma;
  double epsilon = 0.0;
  std::string message;
};

// The accuracy of one σ: the released model's test accuracy and the ε its run reports (with the
// data's n, which may differ from the n knob), or why there is none.
struct AccuracyCell {
  std::string mechanism;
  std::string accountant;
  double sigma = 0.0;
  std::optional<double> accuracy;
  std::optional<double> epsilon;
  std::string message;
};

class CalibratePanel : public QWidget {
  Q_OBJECT
 public:
  explicit CalibratePanel(ParameterModel* model, QWidget* parent = nullptr);
  ~CalibratePanel() override;
  double targetEpsilon() const { return m_target; }
  QTableWidget* table() const { return m_table; }
  void calibrate();  // start the background search for the ε target
  BackgroundJob* job() { return &m_job; }

  // The risk target: "attacker TPR ≤ T at FPR F" or "advantage ≤ A".
  enum class RiskKind { kTprAtFpr = 0, kAdvantage = 1 };
  void setRiskKind(RiskKind kind);
  void calibrateRisk();  // start the background search for the risk target
  BackgroundJob* riskJob() { return &m_riskJob; }
  QComboBox* riskKindBox() const { return m_riskKind; }
  QLineEdit* riskTargetEntry() const { return m_riskTarget; }
  QLineEdit* fprEntry() const { return m_fpr; }
  QPushButton* riskApplyButton() const { return m_riskApply; }
  QLabel* riskStatus() const { return m_riskStatus; }
  // The value shown for "sigma", "tpr", "fpr", "advantage", "epsilon" or "accuracy" ("—" if none).
  QString riskValue(const QString& field) const;
  const std::optional<core::accounting::RiskCalibration>& riskResult() const { return m_risk; }

  // The trainer whose data and settings the accuracy column uses.
  void setSession(Session* session);
  BackgroundJob* accuracyJob() { return &m_accuracyJob; }
  QLabel* accuracyStatus() const { return m_accuracyStatus; }
  QPushButton* accuracyButton() const { return m_accuracyButton; }
  void trainAtEachSigma();  // trains every σ shown that has no accuracy yet

 Q_SIGNALS:
  void targetChanged(double epsilon);
  void calibrated();
  void riskCalibrated();
  void accuracyShown();  // a cell of the accuracy column was filled in

 private:
  // What the accuracy column trains: the trainer's settings at one σ; what it shows.
  struct AccuracySettings {
    core::training::DatasetKey data;
    core::Params knobs;  // σ zeroed
    double epochs = 0.0;
    std::uint64_t seed = 0;
    bool operator==(const AccuracySettings&) const = default;
  };
  using AccuracyKey = std::tuple<std::string, std::string, double>;  // mechanism, accountant, σ

  QWidget* buildEpsilonPart();
  QWidget* buildRiskPart();
  QWidget* buildRiskResults(QWidget* parent);
  bool acceptTarget();
  void showRows(const std::vector<CalibrationRow>& rows);
  void showRow(int row, const CalibrationRow& r);
  std::optional<core::accounting::RiskTarget> readRiskTarget();
  void showRisk(const std::optional<core::accounting::RiskCalibration>& risk, const QString& message);
  void clearRiskValues();
  std::vector<std::pair<AccuracyKey, core::training::TrainerConfig>> accuracyTasks(const TrainingRequest& base);
  void maybeTrainAtEachSigma();
  std::optional<TrainingRequest> accuracyRequest();
  void startAccuracy(bool evenIfSlow);
  void launchAccuracy(std::vector<std::pair<AccuracyKey, core::training::TrainerConfig>> tasks,
                      const TrainingRequest& request);
  void showAccuracy(std::uint64_t generation, const AccuracyCell& cell);
  void refreshAccuracyCells();
  QString accuracyText(const std::string& accountant, std::optional<double> sigma, bool current,
                       QString* tooltip) const;
  bool isCurrent(const std::optional<core::Params>& knobs) const;

  ParameterModel* m_model;
  Session* m_session = nullptr;
  QLineEdit* m_entry;
  QTableWidget* m_table;
  QLabel* m_status;
  QComboBox* m_riskKind;
  QLineEdit* m_riskTarget;
  QLabel* m_fprLabel;
  QLineEdit* m_fpr;
  QPushButton* m_riskApply;
  QLabel* m_riskStatus;
  std::map<QString, QLabel*> m_riskValues;
  QLabel* m_accuracyStatus;
  QPushButton* m_accuracyButton;
  BackgroundJob m_job{true};
  BackgroundJob m_riskJob{true};
  BackgroundJob m_accuracyJob{true};
  double m_target = 1.0;
  std::vector<CalibrationRow> m_rows;
  std::optional<core::Params> m_rowsKnobs;  // the run the rows were found for, σ zeroed
  std::optional<core::Params> m_riskKnobs;
  std::optional<core::accounting::RiskCalibration> m_risk;
  std::optional<AccuracySettings> m_accuracySettings;
  std::map<AccuracyKey, AccuracyCell> m_accuracy;
  std::uint64_t m_accuracyGeneration = 0;
};

}  // namespace dpx::ui
