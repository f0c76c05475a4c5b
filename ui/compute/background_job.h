// Heavy work off the GUI thread (the GUI thread never blocks): one job in flight per
// BackgroundJob; requests made while it runs are coalesced into one pending request (the
// latest), started as soon as the running one ends — so a slider drag never queues up work.
// A job may be cancelled when a newer request arrives (PLD, step sizes), in which case its result
// is dropped; results are delivered on the GUI thread through the callback of their request.
//
// Each job runs on its own std::thread rather than Qt's thread pool: the thread's start and join
// are the only hand-offs between the GUI thread and the worker (the job's inputs go in through the
// thread's start, its result comes back through the join), so ThreadSanitizer sees every one —
// Debian's Qt is not instrumented, and a hand-off through its pool or its event queue is not.
#pragma once

#include <QObject>
#include <any>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace dpx::ui {

class BackgroundJob : public QObject {
  Q_OBJECT
 public:
  using Progress = std::function<void(double)>;
  using Work = std::function<std::any(const std::atomic<bool>& cancel, const Progress& progress)>;
  using Done = std::function<void(std::any&& result)>;

  explicit BackgroundJob(bool cancelRunningOnRequest, QObject* parent = nullptr);
  ~BackgroundJob() override;

  void request(Work work, Done done);
  void cancel();  // cancels the running job and drops the pending one
  bool busy() const { return m_running; }
  void waitForIdle();  // for tests and benchmarks

 Q_SIGNALS:
  void progressed(double fraction);
  void busyChanged(bool busy);

 private Q_SLOTS:
  void finished();  // queued by the worker as its last act; joins it

 private:
  void start(Work work, Done done);
  void joinWorker();
  const bool m_cancelOnRequest;
  bool m_running = false;
  std::shared_ptr<std::atomic<bool>> m_cancel;
  Done m_done;
  std::thread m_worker;
  // Written by the worker before it posts finished(); read on the GUI thread after the join.
  std::any m_result;
  std::exception_ptr m_failure;
  std::optional<std::pair<Work, Done>> m_pending;
};

}  // namespace dpx::ui
