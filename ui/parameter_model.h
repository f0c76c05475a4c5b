// The single source of truth for the explorer's knobs (the LabPlot habit): panels edit it
// through undoable commands, charts and tables listen to its signals. One slider drag is one
// undo step: edits carrying the same drag token merge.
#pragma once

#include <optional>

#include <QObject>
#include <QString>
#include <QUndoCommand>
#include <QUndoStack>

#include "accounting/accountant.h"
#include "common/params.h"

namespace dpx::ui {

class ParameterModel : public QObject {
  Q_OBJECT
 public:
  explicit ParameterModel(QObject* parent = nullptr);

  const core::Params& params() const { return m_params; }
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
  void setAveraged(bool averaged);
  void setAll(const core::Params& params, const QString& description);  // presets: one step

  // View settings (not part of the run, not undoable).
  core::accounting::Conversion conversion() const { return m_conversion; }
  void setConversion(core::accounting::Conversion conversion);
  bool epochsAxis() const { return m_epochsAxis; }
  void setEpochsAxis(bool epochs);

  // A fresh token for a drag that starts now.
  int beginDrag() { return ++m_dragCounter; }

  // Applies params without an undo step (used by the undo commands themselves).
  void apply(const core::Params& params);

 Q_SIGNALS:
  void paramsChanged();
  void validityChanged(bool valid, const QString& message);
  void viewChanged();

 private:
  void push(const core::Params& after, const QString& text, int mergeId, int dragToken);
  core::Params m_params;
  core::Params m_lastValid;
  bool m_valid = true;
  QString m_message;
  QUndoStack m_undo;
  core::accounting::Conversion m_conversion = core::accounting::Conversion::kImproved;
  bool m_epochsAxis = false;
  int m_dragCounter = 0;
};

// One parameter change; merges with the next one of the same knob and drag.
class SetParamsCommand : public QUndoCommand {
 public:
  SetParamsCommand(ParameterModel* model, core::Params before, core::Params after, const QString& text, int mergeId,
                   int dragToken);
  void undo() override;
  void redo() override;
  int id() const override { return m_mergeId; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  ParameterModel* m_model;
  core::Params m_before;
  core::Params m_after;
  int m_mergeId;
  int m_dragToken;
};

}  // namespace dpx::ui
