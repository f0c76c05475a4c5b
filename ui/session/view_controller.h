// One view's path from a change of what it shows to a result on screen: debounce → job → drop
// stale → apply. A change waits out its debounce (a drag's next value is milliseconds away),
// the view's start function then builds the work from the state of that moment, the work runs
// on a worker (one job in flight, the newest request pending), and its result is applied only
// if it is still wanted: never one older than the result already applied, and — for views whose
// running work a newer request cancels — only the newest request's. Every view of the explorer
// goes through one of these, so the rule for what a drag recomputes lives in one place.
#pragma once

#include <QObject>
#include <QTimer>
#include <cstdint>
#include <functional>

#include "compute/background_job.h"

namespace dpx::ui {

class ViewController : public QObject {
  Q_OBJECT
 public:
  enum class Freshness {
    // A newer request cancels the running work; only the newest request's result is applied
    // (seconds of exact work whose answer would be for knobs that are gone).
    kNewestOnly,
    // Work runs to its end and the newest pending request follows; any result newer than the
    // one on screen is applied (milliseconds of work: a drag shows every value it can).
    kNeverBackwards,
  };
  ViewController(Freshness freshness, std::function<void()> start, QObject* parent = nullptr);
  ~ViewController() override;

  // Calls the start function after `debounceMs`, or now when it is 0; a schedule made meanwhile
  // restarts the wait.
  void schedule(int debounceMs);
  // For the start function: runs `work` on the worker and hands its result to `apply` on the GUI
  // thread if it is still wanted then.
  void run(BackgroundJob::Work work, BackgroundJob::Done apply);
  // Drops the wait, the pending and the running work: none of their results will be applied.
  void cancel();
  bool waiting() const { return m_debounce.isActive(); }
  bool busy() const { return m_job.busy(); }
  BackgroundJob* job() { return &m_job; }
  void waitForIdle() { m_job.waitForIdle(); }

 Q_SIGNALS:
  void progressed(double fraction);

 private:
  const Freshness m_freshness;
  std::function<void()> m_start;
  BackgroundJob m_job;
  QTimer m_debounce;
  std::uint64_t m_requested = 0;  // the generation of the newest request
  std::uint64_t m_applied = 0;    // the generation of the result on screen
  std::uint64_t m_cancelled = 0;  // requests up to this one were cancelled
};

}  // namespace dpx::ui
