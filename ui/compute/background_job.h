// Heavy work off the GUI thread (the GUI thread never blocks): one job in flight per
// BackgroundJob; requests made while it runs are coalesced into one pending request (the
// latest), started as soon as the running one ends — so a slider drag never queues up work.
// A job may be cancelled when a newer request arrives (PLD, step sizes), in which case its result
// is dropped; results are delivered on the GUI thread through the callback of their request.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <any>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

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

 private:
  void start(Work work, Done done);
  void finished();
  const bool m_cancelOnRequest;
  bool m_running = false;
  std::shared_ptr<std::atomic<bool>> m_cancel;
  Done m_done;
  QFutureWatcher<std::any> m_watcher;
  std::optional<std::pair<Work, Done>> m_pending;
};

}  // namespace dpx::ui
