// The Privacy tab's controllers, widget-free: what a knob change recomputes there, when, and in
// which order. The analytic accountants (curves and table) follow every change at once, as
// drafts while a drag streams values; the exact PLD bracket starts once the knobs rest and has
// both cores; the shuffle lower bound and the step-size chart follow it rather than halve its
// speed. While the tab is hidden only the headline ε is kept current (the trainer's default
// target); the rest is recomputed when the tab is shown again. Every result carries the knobs
// that produced it (its snapshot's params); the window only draws what arrives.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>
#include <optional>

#include "compute/analytics.h"
#include "compute/slow_analytics.h"
#include "session/view_controller.h"

namespace dpx::ui {

class ParameterModel;
class Session;

class PrivacyViews : public QObject {
  Q_OBJECT
 public:
  explicit PrivacyViews(Session* session, QObject* parent = nullptr);
  ~PrivacyViews() override;

  // Whether the Privacy tab is on screen; showing it brings its views up to date.
  void setShown(bool shown);
  // The exact PLD views on or off (off: their curves leave the charts).
  void setExactEnabled(bool enabled);
  bool exactEnabled() const { return m_exactEnabled; }
  // The ε the step-size chart compares against (the calibration target).
  void setReferenceEpsilon(double epsilon);
  // Requests every view for the current knobs now (the window's first paint).
  void refreshAll();
  void cancelAll();

  std::shared_ptr<const AnalyticsSnapshot> lastAnalytics() const { return m_lastAnalytics; }
  std::shared_ptr<const PldSnapshot> lastPld() const { return m_lastPld; }
  std::shared_ptr<const StepsizeSnapshot> lastStepsize() const { return m_lastStepsize; }
  ViewController* analytics() { return &m_analytics; }
  ViewController* exact() { return &m_exact; }
  ViewController* shuffle() { return &m_shuffle; }
  ViewController* stepsize() { return &m_stepsize; }

  static constexpr int kDraftWindowMs = 150;           // changes closer than this are a stream
  static constexpr int kSlowDebounceMs = 150;          // the exact views after a drag rests
  static constexpr int kSlowDebounceAfterEditMs = 60;  // after any other knob change

 Q_SIGNALS:
  // Draw as drafts (fast, aliased) while values stream in, smooth again once they rest.
  void draftDrawingChanged(bool draft);
  void analyticsReady(std::shared_ptr<const dpx::ui::AnalyticsSnapshot> snapshot);
  void pldProgress(double fraction);
  void pldReady(std::shared_ptr<const dpx::ui::PldSnapshot> snapshot);      // the Poisson bracket
  void shuffleReady(std::shared_ptr<const dpx::ui::PldSnapshot> snapshot);  // and the shuffle bound
  void pldCleared();                                                        // exact views off
  void stepsizeReady(std::shared_ptr<const dpx::ui::StepsizeSnapshot> snapshot);

 private:
  enum class AnalyticsDetail { kFollowInput, kFull };
  void knobsChanged();
  void viewChanged();
  void stopSlowViews();
  void startAnalytics(AnalyticsDetail detail);
  void applyAnalytics(std::shared_ptr<const AnalyticsSnapshot> snapshot, bool streaming);
  void startExact();
  void startShuffle(std::shared_ptr<const PldSnapshot> poisson);
  void startStepsize();
  Session* m_session;
  ParameterModel* m_model;
  bool m_shown = true;
  bool m_exactEnabled = true;
  double m_referenceEpsilon = 1.0;
  bool m_analyticsStale = false;
  bool m_slowViewsStale = false;
  AnalyticsDetail m_nextDetail = AnalyticsDetail::kFollowInput;
  ViewController m_analytics;
  ViewController m_exact;
  ViewController m_shuffle;
  ViewController m_stepsize;
  // The step-size chart waits while the exact bracket computes (it would halve its speed).
  bool m_stepsizeAfterExact = false;
  QElapsedTimer m_sinceLastRequest;
  QTimer m_settle;
  std::shared_ptr<const AnalyticsSnapshot> m_lastAnalytics;
  std::shared_ptr<const PldSnapshot> m_lastPld;
  std::shared_ptr<const StepsizeSnapshot> m_lastStepsize;
};

}  // namespace dpx::ui
