#include "session/parameter_model.h"

#include <QMetaObject>
#include <algorithm>
#include <cmath>

#include "common/format.h"

namespace dpx::ui {

using core::Knob;
using core::Params;

std::optional<DataBinding> bindToData(const core::Params& params, std::int64_t trainingRecords) {
  const auto minN = static_cast<std::int64_t>(core::knobInfo(Knob::kN).min);
  if (trainingRecords < minN) return std::nullopt;
  DataBinding binding;
  Params& p = binding.params;
  p = params;
  p.n = trainingRecords;
  // The epochs the knobs train, counted with the batch a run really draws (at most the data): a
  // tiny dataset seen in between must not multiply them into millions of steps on the next one.
  Params drawn = params;
  drawn.m = std::min(params.m, params.n);
  const double epochs = core::nominalEpochs(drawn);
  if (p.m > p.n) {
    binding.adjustments
        << QStringLiteral("m = %1 exceeds the data's %2 training records: m = %2 (full batch)").arg(params.m).arg(p.n);
    p.m = p.n;
  }
  const auto maxK = static_cast<std::int64_t>(core::knobInfo(Knob::kK).max);
  const core::Result<std::int64_t> steps = core::stepsForEpochs(epochs, p.n, p.m);
  p.K = std::clamp<std::int64_t>(steps ? *steps : params.K, 1, maxK);
  if (steps && *steps > maxK) {
    binding.adjustments << QStringLiteral(
                               "%1 epochs would need K = %2 steps, beyond the K slider's %3: K = %3 (%4 "
                               "epochs)")
                               .arg(QString::fromStdString(core::formatNumber(epochs, 4)))
                               .arg(*steps)
                               .arg(maxK)
                               .arg(QString::fromStdString(core::formatNumber(p.epochs(), 4)));
  }
  return binding;
}

namespace {

QString tooSmallForBinding(std::int64_t trainingRecords, std::int64_t n) {
  return QStringLiteral("the data has %1 training records, fewer than the smallest n (%2): n stays %3")
      .arg(trainingRecords)
      .arg(core::knobInfo(Knob::kN).min)
      .arg(n);
}

}  // namespace

ParameterModel::ParameterModel(QObject* parent) : QObject(parent), m_lastValid(m_state.params) {
  m_undo.setUndoLimit(500);
}

void ParameterModel::apply(const ModelState& state) {
  const bool trainerDiffers = !(state.trainer == m_state.trainer);
  const bool paramsDiffer = !(state.params == m_state.params);
  m_state = state;
  const core::Status status = state.params.validate();
  const bool valid = status.isOk();
  const QString message = QString::fromStdString(status.message());
  if (valid) m_lastValid = state.params;
  const bool validityChangedNow = valid != m_valid || message != m_message;
  m_valid = valid;
  m_message = message;
  if (validityChangedNow) Q_EMIT validityChanged(m_valid, m_message);
  if (paramsDiffer || validityChangedNow) Q_EMIT paramsChanged();
  if (trainerDiffers) Q_EMIT trainerChanged();
  // An undo or a change of source can leave n bound but not the data's: fix it after the
  // command has finished (the undo stack may not be edited from inside undo()).
  if (m_state.trainer.nFromData && !m_bindingQueued) {
    m_bindingQueued = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
          m_bindingQueued = false;
          enforceBinding();
        },
        Qt::QueuedConnection);
  }
}

void ParameterModel::push(const ModelState& before, const ModelState& after, const QString& text, int mergeId,
                          int dragToken) {
  m_lastEditDragged = dragToken != 0;
  ModelState consistent = after;
  consistent.params.convexLoss = after.trainer.model.convex();
  m_undo.push(new SetStateCommand(this, before, consistent, text, mergeId, dragToken));
}

void ParameterModel::pushParams(const Params& after, const QString& text, int mergeId, int dragToken) {
  ModelState next = m_state;
  next.params = after;
  push(m_state, next, text, mergeId, dragToken);
}

void ParameterModel::setKnob(Knob knob, double value, int dragToken) {
  Params after = m_state.params;
  core::setKnobValue(after, knob, value);
  if (core::knobValue(after, knob) == core::knobValue(m_state.params, knob)) return;  // integers round
  const core::KnobInfo& info = core::knobInfo(knob);
  const QString text = QStringLiteral("%1 = %2").arg(
      QString::fromUtf8(info.symbol), QString::fromStdString(core::formatNumber(core::knobValue(after, knob), 6)));
  pushParams(after, text, dragToken != 0 ? 1 + static_cast<int>(knob) : -1, dragToken);
}

void ParameterModel::setSchedule(core::Schedule schedule) {
  if (m_state.params.schedule == schedule) return;
  Params after = m_state.params;
  after.schedule = schedule;
  pushParams(after, QStringLiteral("schedule %1").arg(QString::fromLatin1(core::scheduleName(schedule).data())), -1, 0);
}

void ParameterModel::setSampling(std::optional<core::Sampling> sampling) {
  if (m_state.params.sampling == sampling) return;
  Params after = m_state.params;
  after.sampling = sampling;
  pushParams(after, QStringLiteral("sampling"), -1, 0);
}

void ParameterModel::setNeighbouring(std::optional<core::Neighbouring> relation) {
  if (m_state.params.neighbouring == relation) return;
  Params after = m_state.params;
  after.neighbouring = relation;
  pushParams(after, QStringLiteral("neighbouring relation"), -1, 0);
}

void ParameterModel::setOptimizer(std::optional<core::Optimizer> optimizer) {
  if (m_state.params.optimizer == optimizer) return;
  Params after = m_state.params;
  after.optimizer = optimizer;
  pushParams(after, QStringLiteral("optimiser"), -1, 0);
}

void ParameterModel::setAveraged(bool averaged) {
  if (m_state.params.averaged == averaged) return;
  Params after = m_state.params;
  after.averaged = averaged;
  pushParams(after, averaged ? QStringLiteral("averaged release") : QStringLiteral("last-iterate release"), -1, 0);
}

void ParameterModel::setAll(const Params& params, const QString& description) {
  pushParams(params, description, -1, 0);
}

void ParameterModel::setState(const ModelState& state, const QString& description) {
  push(m_state, state, description, -1, 0);
}

void ParameterModel::setTrainer(const TrainerSettings& settings, const QString& description) {
  if (settings == m_state.trainer) return;
  ModelState next = m_state;
  next.trainer = settings;
  push(m_state, next, description, -1, 0);
}

void ParameterModel::setNFromData(bool bound) {
  if (bound == m_state.trainer.nFromData) return;
  if (!bound) {
    ModelState next = m_state;
    next.trainer.nFromData = false;
    push(m_state, next, QStringLiteral("n released from the data (what-if)"), -1, 0);
    return;
  }
  ModelState before = m_state;
  ModelState next = m_state;
  next.trainer.nFromData = true;
  QStringList adjustments;
  if (const auto size = currentDataSize()) {
    const std::optional<DataBinding> binding = bindToData(m_state.params, *size);
    if (!binding) {
      Q_EMIT dataBindingAdjusted(tooSmallForBinding(*size, m_state.params.n));
      return;
    }
    next.params = binding->params;
    adjustments = binding->adjustments;
  }
  push(before, next, QStringLiteral("n from the data"), -1, 0);
  if (!adjustments.isEmpty()) Q_EMIT dataBindingAdjusted(adjustments.join(QStringLiteral("; ")));
}

void ParameterModel::setDataSize(const QString& source, std::int64_t trainingRecords) {
  const bool known = dataSize(source) == trainingRecords;
  m_dataSizes[source] = trainingRecords;
  if (!known) Q_EMIT dataSizeChanged();
  enforceBinding();
}

std::optional<std::int64_t> ParameterModel::dataSize(const QString& source) const {
  const auto it = m_dataSizes.find(source);
  if (it == m_dataSizes.end()) return std::nullopt;
  return it->second;
}

void ParameterModel::enforceBinding() {
  if (!m_state.trainer.nFromData) return;
  const auto size = currentDataSize();
  if (!size || *size == m_state.params.n) return;
  ModelState before = m_state;
  before.trainer.nFromData = false;
  const std::optional<DataBinding> binding = bindToData(m_state.params, *size);
  if (!binding) {
    Q_EMIT dataBindingAdjusted(tooSmallForBinding(*size, m_state.params.n));
    return;
  }
  ModelState after = m_state;
  after.params = binding->params;
  push(before, after, QStringLiteral("n = %1 from the data").arg(*size), -1, 0);
  if (!binding->adjustments.isEmpty()) Q_EMIT dataBindingAdjusted(binding->adjustments.join(QStringLiteral("; ")));
}

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

void ParameterModel::setFixedAlphaView(bool fixed) {
  if (m_fixedAlpha == fixed) return;
  m_fixedAlpha = fixed;
  Q_EMIT viewChanged();
}

void ParameterModel::setBatchAverage(core::accounting::BatchAverage average) {
  if (m_batchAverage == average) return;
  m_batchAverage = average;
  Q_EMIT batchAverageChanged();
}

SetStateCommand::SetStateCommand(ParameterModel* model, ModelState before, ModelState after, const QString& text,
                                 int mergeId, int dragToken)
    : QUndoCommand(text),
      m_model(model),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_mergeId(mergeId),
      m_dragToken(dragToken) {}

void SetStateCommand::undo() { m_model->apply(m_before); }
void SetStateCommand::redo() { m_model->apply(m_after); }

bool SetStateCommand::mergeWith(const QUndoCommand* other) {
  const auto* next = static_cast<const SetStateCommand*>(other);
  if (next->m_mergeId != m_mergeId || next->m_dragToken != m_dragToken || m_dragToken == 0) return false;
  m_after = next->m_after;
  setText(next->text());
  return true;
}

}  // namespace dpx::ui
