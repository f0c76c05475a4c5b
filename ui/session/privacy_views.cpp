#include "session/privacy_views.h"

#include <utility>

#include "session/parameter_model.h"
#include "session/session.h"

namespace dpx::ui {

PrivacyViews::PrivacyViews(Session* session, QObject* parent)
    : QObject(parent),
      m_session(session),
      m_model(session->model()),
      m_analytics(ViewController::Freshness::kNeverBackwards, [this] { startAnalytics(m_nextDetail); }),
      m_exact(ViewController::Freshness::kNewestOnly, [this] { startExact(); }),
      m_shuffle(ViewController::Freshness::kNewestOnly, [] {}),
      m_stepsize(ViewController::Freshness::kNewestOnly, [this] { startStepsize(); }) {
  m_settle.setSingleShot(true);
  m_settle.setInterval(kDraftWindowMs);
  // A drag has ended: a draft on screen is replaced by the full curves, drawn smooth when they
  // arrive (one antialiased repaint, not one for the draft and one for the full view).
  connect(&m_settle, &QTimer::timeout, this, [this] {
    if (m_lastAnalytics && m_lastAnalytics->draft) {
      m_nextDetail = AnalyticsDetail::kFull;
      m_analytics.schedule(0);
      return;
    }
    Q_EMIT draftDrawingChanged(false);
  });
  connect(&m_exact, &ViewController::progressed, this, &PrivacyViews::pldProgress);
  connect(m_model, &ParameterModel::paramsChanged, this, &PrivacyViews::knobsChanged);
  connect(m_model, &ParameterModel::viewChanged, this, &PrivacyViews::viewChanged);
}

PrivacyViews::~PrivacyViews() { cancelAll(); }

void PrivacyViews::refreshAll() {
  m_nextDetail = AnalyticsDetail::kFollowInput;
  m_analytics.schedule(0);
  m_exact.schedule(0);
}

void PrivacyViews::cancelAll() {
  m_settle.stop();
  m_analytics.cancel();
  stopSlowViews();
}

// The slow views' running jobs are for knobs that are gone: stopped at once, so the new analytics
// have both cores, and started again once the knobs rest.
void PrivacyViews::stopSlowViews() {
  m_exact.cancel();
  m_shuffle.cancel();
  m_stepsize.cancel();
  m_stepsizeAfterExact = false;
}

void PrivacyViews::knobsChanged() {
  if (!m_model->isValid()) return;  // the last valid state stays on screen
  stopSlowViews();
  m_nextDetail = AnalyticsDetail::kFollowInput;
  m_analytics.schedule(0);
  // A drag waits longer before the seconds of exact work start again than a typed value, an
  // arrow-key step or undo, whose next change is not milliseconds away.
  m_exact.schedule(m_model->lastEditDragged() ? kSlowDebounceMs : kSlowDebounceAfterEditMs);
}

void PrivacyViews::viewChanged() {
  stopSlowViews();
  m_nextDetail = AnalyticsDetail::kFull;  // a view toggle is a click, not a drag
  m_analytics.schedule(0);
  m_exact.schedule(kSlowDebounceMs);
}

void PrivacyViews::setShown(bool shown) {
  m_shown = shown;
  if (!shown) return;
  if (m_analyticsStale) {
    m_nextDetail = AnalyticsDetail::kFollowInput;
    m_analytics.schedule(0);
  }
  if (m_slowViewsStale) m_exact.schedule(0);
}

void PrivacyViews::setExactEnabled(bool enabled) {
  m_exactEnabled = enabled;
  if (enabled) {
    m_exact.schedule(0);
    return;
  }
  m_exact.cancel();
  m_shuffle.cancel();
  if (m_stepsizeAfterExact) m_stepsize.schedule(0);  // it was waiting for the exact view
  m_lastPld.reset();
  Q_EMIT pldCleared();
}

void PrivacyViews::setReferenceEpsilon(double epsilon) {
  m_referenceEpsilon = epsilon;
  m_exact.schedule(kSlowDebounceMs);
}

void PrivacyViews::startAnalytics(AnalyticsDetail detail) {
  const core::Params params = m_model->lastValid();
  const core::accounting::Conversion conversion = m_model->conversion();
  if (!m_shown) {
    // The charts and the table are hidden: only the table's ε, the trainer's default target, is
    // needed now (one RDP conversion, not six accountants' curves competing with a live run).
    m_analyticsStale = true;
    m_session->requestHeadlineEpsilon(params, conversion);
    return;
  }
  m_analyticsStale = false;
  const bool epochsAxis = m_model->epochsAxis();
  const bool fixedAlpha = m_model->fixedAlphaView();
  // Changes coming in quick succession (a drag, a held arrow key) are drawn as drafts, which
  // paint ~4× faster; the charts turn smooth again once the values settle. A lone change is drawn
  // smooth at once. Decided from when the user made the change, not from when the worker
  // finished, so a slow build draws the same way as a fast one.
  // A streaming change of a held slider is also computed as a draft (coarser axes); the settle
  // timer asks for the full curves once the values rest. Other quick changes (typed values, undo,
  // a script driving the model) keep their full curves and are only drawn as drafts.
  const bool settling = detail == AnalyticsDetail::kFull;
  const bool streaming = !settling && m_sinceLastRequest.isValid() && m_sinceLastRequest.elapsed() < kDraftWindowMs;
  const bool coarse = streaming && m_model->lastEditDragged();
  if (!settling) m_sinceLastRequest.start();
  m_analytics.run(
      [params, conversion, epochsAxis, fixedAlpha, coarse](const std::atomic<bool>&,
                                                           const BackgroundJob::Progress&) -> std::any {
        return std::make_shared<const AnalyticsSnapshot>(
            computeAnalytics(params, conversion, epochsAxis, fixedAlpha, coarse));
      },
      [this, streaming](std::any&& result) {
        if (auto* s = std::any_cast<std::shared_ptr<const AnalyticsSnapshot>>(&result)) applyAnalytics(*s, streaming);
      });
}

void PrivacyViews::applyAnalytics(std::shared_ptr<const AnalyticsSnapshot> snapshot, bool streaming) {
  m_lastAnalytics = snapshot;
  if (streaming || m_settle.isActive()) {
    Q_EMIT draftDrawingChanged(true);
    m_settle.start();
  } else if (!snapshot->draft) {
    Q_EMIT draftDrawingChanged(false);  // the full curves after a drag
  }
  // The table's ε is the run's headline ε, and the trainer's default calibration target.
  m_session->setHeadlineEpsilon(snapshot->params, tableEpsilon(*snapshot));
  Q_EMIT analyticsReady(std::move(snapshot));
}

// The exact PLD bracket, then what waits for it. Seconds of CPU on two cores: computed for the
// Privacy tab when it is shown, so they do not slow a live training run on another tab.
void PrivacyViews::startExact() {
  if (!m_shown) {
    m_slowViewsStale = true;
    stopSlowViews();  // their answers would be for knobs that are gone
    return;
  }
  m_slowViewsStale = false;
  if (!m_exactEnabled) {
    startStepsize();
    return;
  }
  // The Poisson bracket first, on both cores: the step-size chart (and the shuffle bound) follow
  // it instead of halving its speed. Until then the chart keeps its last curves.
  m_stepsize.cancel();
  m_shuffle.cancel();  // its bound would be for knobs that are gone
  m_stepsizeAfterExact = true;
  Q_EMIT pldProgress(0.0);
  const core::Params params = m_model->lastValid();
  const bool epochsAxis = m_model->epochsAxis();
  m_exact.run(
      [params, epochsAxis](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) -> std::any {
        auto s = computePoissonPld(params, epochsAxis, cancel, progress);
        if (!s) return {};
        return std::make_shared<const PldSnapshot>(std::move(*s));
      },
      [this](std::any&& result) {
        auto* s = std::any_cast<std::shared_ptr<const PldSnapshot>>(&result);
        if (!s) return;  // cancelled: whatever cancelled it requests the slow views again
        m_lastPld = *s;
        Q_EMIT pldReady(*s);
        if ((*s)->error.empty() && !(*s)->shuffleDone) startShuffle(*s);
        if (m_stepsizeAfterExact) startStepsize();
      });
}

// The second stage of the exact view: the shuffle lower bound beside the Poisson bracket on
// screen.
void PrivacyViews::startShuffle(std::shared_ptr<const PldSnapshot> poisson) {
  m_shuffle.run(
      [poisson](const std::atomic<bool>& cancel, const BackgroundJob::Progress&) -> std::any {
        PldSnapshot s = *poisson;
        if (!addShuffleStage(s, cancel)) return {};
        return std::make_shared<const PldSnapshot>(std::move(s));
      },
      [this](std::any&& result) {
        auto* s = std::any_cast<std::shared_ptr<const PldSnapshot>>(&result);
        if (!s || !m_lastPld || (*s)->params != m_lastPld->params) return;
        m_lastPld = *s;
        Q_EMIT shuffleReady(*s);
      });
}

void PrivacyViews::startStepsize() {
  m_stepsizeAfterExact = false;
  const core::Params params = m_model->lastValid();
  const double reference = m_referenceEpsilon;
  m_stepsize.run(
      [params, reference](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) -> std::any {
        auto s = computeStepsize(params, reference, cancel, progress);
        if (!s) return {};
        return std::make_shared<const StepsizeSnapshot>(std::move(*s));
      },
      [this](std::any&& result) {
        auto* s = std::any_cast<std::shared_ptr<const StepsizeSnapshot>>(&result);
        if (!s) return;
        m_lastStepsize = *s;
        Q_EMIT stepsizeReady(*s);
      });
}

}  // namespace dpx::ui
