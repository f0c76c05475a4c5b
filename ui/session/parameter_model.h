// The single source of truth for the explorer's knobs and the trainer's settings (the LabPlot
// habit): panels edit it through undoable commands, charts, tables and the trainer listen to its
// signals. One slider drag is one undo step: edits carrying the same drag token merge.
//
// The trainer has no knobs of its own: a run reads m, σ, η, λ, δ, L, K (as epochs), schedule and
// sampling from here. Its settings (dataset, mechanisms, calibration target) live here too, so
// presets set them and undo covers them. Loading a dataset binds n to its training size ("n from
// data"); releasing the binding lets n be a what-if while every run still uses the data's n.
// The knobs' convexLoss follows the trainer's model in every state, so the accountant table, the
// threat-model ladder and the checks grey the convex analyses for a network.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QUndoCommand>
#include <QUndoStack>
#include <map>
#include <optional>

#include "accounting/accountant.h"
#include "accounting/configuration_check.h"
#include "common/params.h"
#include "training/dataset.h"
#include "training/mechanism.h"
#include "training/network.h"

namespace dpx::ui {

// A mechanism's id as TrainerSettings::mechanisms holds it.
inline QString mechanismText(core::training::Mechanism m) {
  return QString::fromLatin1(core::training::mechanismId(m).data());
}

// What the trainer runs, besides the knobs.
struct TrainerSettings {
  QString source = QStringLiteral("builtin:digits");  // "builtin:digits", a file path, …
  // What the model sees of each record: raw values, or ScatterNet features of images; and the
  // per-record scaling (unset: unit norm).
  core::training::FeatureKind features = core::training::FeatureKind::kRaw;
  std::optional<core::training::FeatureScaling> scaling;
  // The model trained: softmax regression, or a network (not convex: the accountants that need a
  // convex loss are greyed, and the mechanisms that rest on them are not trained).
  core::training::ModelSpec model;
  QStringList mechanisms{mechanismText(core::training::Mechanism::kDpSgld),
                         mechanismText(core::training::Mechanism::kDpSgd),
                         mechanismText(core::training::Mechanism::kSgd)};
  bool calibrate = true;  // calibrate each mechanism to the target ε
  // The target; unset: follow the ε the table shows for the current knobs (the rdp row).
  std::optional<double> targetEpsilon;
  bool nFromData = true;  // n is bound to the loaded training set's size
  bool operator==(const TrainerSettings&) const = default;
};

// Everything an undo step restores.
struct ModelState {
  core::Params params;
  TrainerSettings trainer;
};

class ParameterModel : public QObject {
  Q_OBJECT
 public:
  explicit ParameterModel(QObject* parent = nullptr);

  const core::Params& params() const { return m_state.params; }
  const TrainerSettings& trainer() const { return m_state.trainer; }
  const ModelState& state() const { return m_state; }
  // The last combination that passed Params::validate(): what the charts show while the
  // current one is invalid.
  const core::Params& lastValid() const { return m_lastValid; }
  bool isValid() const { return m_valid; }
  QString validationMessage() const { return m_message; }
  QUndoStack* undoStack() { return &m_undo; }

  // Edits, all undoable. `dragToken` ≠ 0 merges consecutive edits of the same knob with the same
  // token (a slider drag); 0 makes a step of its own (typed entry, key press).
  void setKnob(core::Knob knob, double value, int dragToken = 0);
  void setSchedule(core::Schedule schedule);
  void setSampling(std::optional<core::Sampling> sampling);
  void setNeighbouring(std::optional<core::Neighbouring> relation);
  void setOptimizer(std::optional<core::Optimizer> optimizer);
  void setAveraged(bool averaged);
  void setAll(const core::Params& params, const QString& description);  // one step
  void setState(const ModelState& state, const QString& description);   // presets: one step
  void setTrainer(const TrainerSettings& settings, const QString& description);
  // Binds n to the loaded data (K follows so the epochs stay the same) or releases it.
  void setNFromData(bool bound);

  // The training-set size of a loaded data source (not an edit: a fact the trainer found). When
  // n is bound and `source` is the trainer's, n follows in an undo step of its own.
  void setDataSize(const QString& source, std::int64_t trainingRecords);
  std::optional<std::int64_t> dataSize(const QString& source) const;
  // The loaded size of the trainer's current source, if known.
  std::optional<std::int64_t> currentDataSize() const { return dataSize(m_state.trainer.source); }

  // View settings (not part of the run, not undoable).
  core::accounting::Conversion conversion() const { return m_conversion; }
  void setConversion(core::accounting::Conversion conversion);
  bool epochsAxis() const { return m_epochsAxis; }
  void setEpochsAxis(bool epochs);
  // ε curves of the RDP accountants at the α knob alone instead of the optimal order.
  bool fixedAlphaView() const { return m_fixedAlpha; }
  void setFixedAlphaView(bool fixed);
  // How the user's pipeline averages the noisy gradient sum (the trainer always divides by m):
  // read by the configuration check only.
  core::accounting::BatchAverage batchAverage() const { return m_batchAverage; }
  void setBatchAverage(core::accounting::BatchAverage average);

  // A fresh token for a drag that starts now.
  int beginDrag() { return ++m_dragCounter; }
  // The latest edit came from a drag (a held slider): the views may draw it as a draft.
  bool lastEditDragged() const { return m_lastEditDragged; }

  // Applies a state without an undo step (used by the undo commands themselves).
  void apply(const ModelState& state);

 Q_SIGNALS:
  void paramsChanged();
  void trainerChanged();
  void dataSizeChanged();  // a source's training size became known
  void validityChanged(bool valid, const QString& message);
  // Binding n to the data changed more than n and K (m capped, K clamped) or was refused.
  void dataBindingAdjusted(const QString& message);
  void viewChanged();
  void batchAverageChanged();

 private:
  void push(const ModelState& before, const ModelState& after, const QString& text, int mergeId, int dragToken);
  void pushParams(const core::Params& after, const QString& text, int mergeId, int dragToken);
  // n bound, the source's size known and different: one step from the unbound state to the
  // bound one (so undoing it leaves n a consistent what-if).
  void enforceBinding();
  ModelState m_state;
  core::Params m_lastValid;
  bool m_valid = true;
  QString m_message;
  QUndoStack m_undo;
  std::map<QString, std::int64_t> m_dataSizes;
  core::accounting::Conversion m_conversion = core::accounting::Conversion::kImproved;
  bool m_epochsAxis = false;
  bool m_fixedAlpha = false;
  core::accounting::BatchAverage m_batchAverage = core::accounting::BatchAverage::kExpected;
  int m_dragCounter = 0;
  bool m_lastEditDragged = false;
  bool m_bindingQueued = false;
};

// One change of the model; merges with the next one of the same knob and drag.
class SetStateCommand : public QUndoCommand {
 public:
  SetStateCommand(ParameterModel* model, ModelState before, ModelState after, const QString& text, int mergeId,
                  int dragToken);
  void undo() override;
  void redo() override;
  int id() const override { return m_mergeId; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  ParameterModel* m_model;
  ModelState m_before;
  ModelState m_after;
  int m_mergeId;
  int m_dragToken;
};

struct DataBinding {
  core::Params params;
  QStringList adjustments;  // what else the binding had to change, and why, in words
};
// n = the data's training size, m ≤ n, and K = ⌈E·n/m⌉ for the epochs E the knobs had
// (core::nominalEpochs, counted with the batch a run draws: at most n), within K's slider range.
// Nullopt when the data has fewer records than n's minimum: no run is possible, n is not bound.
std::optional<DataBinding> bindToData(const core::Params& params, std::int64_t trainingRecords);

}  // namespace dpx::ui
