#include "parameter_model.h"

#include "common/format.h"

namespace dpx::ui {

using core::Knob;
using core::Params;

ParameterModel::ParameterModel(QObject* parent) : QObject(parent), m_lastValid(m_params) {
  m_undo.setUndoLimit(500);
}

void ParameterModel::apply(const Params& params) {
  m_params = params;
  const core::Status status = params.validate();
  const bool valid = status.isOk();
  const QString message = QString::fromStdString(status.message());
  if (valid) m_lastValid = params;
  const bool validityChangedNow = valid != m_valid || message != m_message;
  m_valid = valid;
  m_message = message;
  if (validityChangedNow) Q_EMIT validityChanged(m_valid, m_message);
  Q_EMIT paramsChanged();
}

void ParameterModel::push(const Params& after, const QString& text, int mergeId, int dragToken) {
  m_undo.push(new SetParamsCommand(this, m_params, after, text, mergeId, dragToken));
}

void ParameterModel::setKnob(Knob knob, double value, int dragToken) {
  Params after = m_params;
  core::setKnobValue(after, knob, value);
  if (core::knobValue(after, knob) == core::knobValue(m_params, knob)) return;  // integers round
  const core::KnobInfo& info = core::knobInfo(knob);
  const QString text = QStringLiteral("%1 = %2").arg(QString::fromUtf8(info.symbol),
                                                     QString::fromStdString(core::formatNumber(core::knobValue(after, knob), 6)));
  push(after, text, dragToken != 0 ? 1 + static_cast<int>(knob) : -1, dragToken);
}

void ParameterModel::setSchedule(core::Schedule schedule) {
  if (m_params.schedule == schedule) return;
  Params after = m_params;
  after.schedule = schedule;
  push(after, QStringLiteral("schedule %1").arg(QString::fromLatin1(core::scheduleName(schedule).data())), -1, 0);
}

void ParameterModel::setSampling(std::optional<core::Sampling> sampling) {
  if (m_params.sampling == sampling) return;
  Params after = m_params;
  after.sampling = sampling;
  push(after, QStringLiteral("sampling"), -1, 0);
}

void ParameterModel::setNeighbouring(std::optional<core::Neighbouring> relation) {
  if (m_params.neighbouring == relation) return;
  Params after = m_params;
  after.neighbouring = relation;
  push(after, QStringLiteral("neighbouring relation"), -1, 0);
}

void ParameterModel::setAveraged(bool averaged) {
  if (m_params.averaged == averaged) return;
  Params after = m_params;
  after.averaged = averaged;
  push(after, averaged ? QStringLiteral("averaged release") : QStringLiteral("last-iterate release"), -1, 0);
}

void ParameterModel::setAll(const Params& params, const QString& description) { push(params, description, -1, 0); }

void ParameterModel::setConversion(core::accounting::Conversion conversion) {
  if (m_conversion == conversion) return;
  m_conversion = conversion;
  Q_EMIT viewChanged();
}

void ParameterModel::setEpochsAxis(bool epochs) {
  if (m_epochsAxis == epochs) return;
  m_epochsAxis = epochs;
  Q_EMIT viewChanged();
}

SetParamsCommand::SetParamsCommand(ParameterModel* model, Params before, Params after, const QString& text, int mergeId,
                                   int dragToken)
    : QUndoCommand(text),
      m_model(model),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_mergeId(mergeId),
      m_dragToken(dragToken) {}

void SetParamsCommand::undo() { m_model->apply(m_before); }
void SetParamsCommand::redo() { m_model->apply(m_after); }

bool SetParamsCommand::mergeWith(const QUndoCommand* other) {
  const auto* next = static_cast<const SetParamsCommand*>(other);
  if (next->m_mergeId != m_mergeId || next->m_dragToken != m_dragToken || m_dragToken == 0) return false;
  m_after = next->m_after;
  setText(next->text());
  return true;
}

}  // namespace dpx::ui
