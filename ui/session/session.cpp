#include "session/session.h"

#include <QStringList>

#include "common/format.h"
#include "common/parallel.h"
#include "compute/analytics.h"
#include "training/mechanism.h"
#include "training/model.h"

namespace dpx::ui {

using namespace core::training;

Session::Session(ParameterModel* model, std::shared_ptr<DatasetCache> cache, QObject* parent)
    : QObject(parent), m_model(model), m_training(std::move(cache)), m_threads(core::effectiveThreads(0)) {
  connect(&m_training, &TrainingController::finished, this, [this] { Q_EMIT trainingFinished(); });
}

// The controller's destructor cancels a run and joins its workers.
Session::~Session() { m_headlineJob.cancel(); }

void Session::setSeed(std::uint64_t seed) {
  if (seed == m_seed) return;
  m_seed = seed;
  Q_EMIT runSettingsChanged();
}

void Session::setThreads(int threads) {
  if (threads == m_threads) return;
  m_threads = threads;
  Q_EMIT runSettingsChanged();
}

void Session::setHeadlineEpsilon(const core::Params& params, std::optional<double> epsilon) {
  m_headlineEpsilon = epsilon;
  m_headlineParams = params;
  Q_EMIT headlineEpsilonChanged();
}

void Session::requestHeadlineEpsilon(const core::Params& params, core::accounting::Conversion conversion) {
  m_headlineJob.request(
      [params, conversion](const std::atomic<bool>&, const BackgroundJob::Progress&) -> std::any {
        return tableEpsilon(params, conversion);
      },
      [this, params](std::any&& result) {
        if (auto* e = std::any_cast<std::optional<double>>(&result)) setHeadlineEpsilon(params, *e);
      });
}

std::optional<double> Session::headlineEpsilon() const {
  if (!(m_headlineParams == m_model->params())) return std::nullopt;
  return m_headlineEpsilon;
}

std::optional<double> Session::defaultTarget() const {
  if (m_model->trainer().targetEpsilon) return m_model->trainer().targetEpsilon;
  return headlineEpsilon();
}

DatasetKey Session::dataKey() const {
  DatasetKey key;
  key.source = m_model->trainer().source.toStdString();
  key.features = m_model->trainer().features;
  key.scaling = m_model->trainer().scaling;
  key.splitSeed = m_seed;
  return key;
}

ResultTag tagOf(const TrainingRequest& request) { return {request.base.knobs, request.data}; }

bool Session::isCurrent(const ResultTag& tag) const {
  return tag.knobs == m_model->params() && (!tag.data || *tag.data == dataKey());
}

QString Session::whatChanged(const ResultTag& tag) const {
  if (isCurrent(tag)) return {};
  const core::Params& now = m_model->params();
  QStringList changes;
  core::Params knobsAlike = tag.knobs;
  for (const core::KnobInfo& info : core::knobInfos()) {
    const double then = core::knobValue(tag.knobs, info.knob);
    const double current = core::knobValue(now, info.knob);
    core::setKnobValue(knobsAlike, info.knob, current);
    if (then == current) continue;
    changes << QStringLiteral("%1 = %2 (now %3)")
                   .arg(QString::fromUtf8(info.symbol), QString::fromStdString(core::formatNumber(then, 4)),
                        QString::fromStdString(core::formatNumber(current, 4)));
  }
  if (!(knobsAlike == now)) changes << QStringLiteral("other sampling, schedule or optimiser settings");
  if (tag.data && !(*tag.data == dataKey())) changes << QStringLiteral("other data or split");
  return changes.join(QStringLiteral(", "));
}

std::optional<ResultTag> Session::trainingTag() const {
  const std::optional<TrainingRequest>& request = m_training.lastRequest();
  if (!request) return std::nullopt;
  return tagOf(*request);
}

std::optional<TrainingRequest> Session::trainingRequest(QString* error) const {
  const TrainerSettings& t = m_model->trainer();
  if (t.source.isEmpty() || t.source == QLatin1String("open")) {
    *error = QStringLiteral("Choose a dataset first (Fashion-MNIST needs the Debian package dataset-fashion-mnist).");
    return std::nullopt;
  }
  if (!m_model->isValid()) {
    *error = QStringLiteral("The knobs are invalid: ") + m_model->validationMessage();
    return std::nullopt;
  }
  TrainingRequest request;
  request.data = dataKey();
  QStringList refused;
  for (const MechanismInfo& info : mechanismInfos()) {
    if (!t.mechanisms.contains(QString::fromLatin1(info.id.data()))) continue;
    if (!mechanismTrainsModel(info.mechanism, t.model).isOk()) {
      refused << QString::fromLatin1(info.id.data());
      continue;
    }
    request.mechanisms.push_back(info.mechanism);
  }
  if (request.mechanisms.empty()) {
    QStringList trainable;
    for (const MechanismInfo& info : mechanismInfos()) {
      if (mechanismTrainsModel(info.mechanism, t.model).isOk()) trainable << QString::fromLatin1(info.id.data());
    }
    if (trainable.size() > 1) trainable.last().prepend(QStringLiteral("or "));
    *error = refused.isEmpty()
                 ? QStringLiteral("Tick at least one mechanism.")
                 : QStringLiteral("%1 cannot train the %2 (non-convex model): tick %3.")
                       .arg(refused.join(QStringLiteral(", ")), QString::fromLatin1(modelKindName(t.model.kind).data()),
                            trainable.join(trainable.size() > 2 ? QStringLiteral(", ") : QStringLiteral(" ")));
    return std::nullopt;
  }
  TrainerConfig& c = request.base;
  c.model = t.model;
  c.knobs = m_model->params();
  c.epochs = core::nominalEpochs(c.knobs);
  c.threads = m_threads;
  c.seed = m_seed;
  if (t.calibrate) {
    if (const std::optional<double> target = defaultTarget()) {
      c.targetEpsilon = *target;
    } else {
      request.targetFromTable = m_model->conversion();  // the table is still computing: the worker does
    }
  }
  return request;
}

}  // namespace dpx::ui
