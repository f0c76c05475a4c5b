#include "compute/background_job.h"

#include <QCoreApplication>
#include <QMetaObject>
#include <utility>

namespace dpx::ui {

BackgroundJob::BackgroundJob(bool cancelRunningOnRequest, QObject* parent)
    : QObject(parent), m_cancelOnRequest(cancelRunningOnRequest) {}

BackgroundJob::~BackgroundJob() {
  m_pending.reset();
  if (m_cancel) m_cancel->store(true);
  joinWorker();  // the worker posts to this object: it must end before the object does
}

void BackgroundJob::request(Work work, Done done) {
  if (m_running) {
    m_pending.emplace(std::move(work), std::move(done));
    if (m_cancelOnRequest && m_cancel) m_cancel->store(true);
    return;
  }
  start(std::move(work), std::move(done));
}

void BackgroundJob::cancel() {
  m_pending.reset();
  if (m_cancel) m_cancel->store(true);
}

void BackgroundJob::start(Work work, Done done) {
  joinWorker();
  m_running = true;
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  m_done = std::move(done);
  m_result.reset();
  m_failure = nullptr;
  m_worker = std::thread([this, work = std::move(work), cancelFlag = m_cancel] {
    const Progress progress = [this](double fraction) {
      // By name, so the fraction travels inside Qt's own event rather than a functor of ours.
      QMetaObject::invokeMethod(this, "progressed", Qt::QueuedConnection, Q_ARG(double, fraction));
    };
    try {
      m_result = work(*cancelFlag, progress);
    } catch (...) {
      m_failure = std::current_exception();  // rethrown on the GUI thread, as a direct call would
    }
    QMetaObject::invokeMethod(this, "finished", Qt::QueuedConnection);
  });
  Q_EMIT busyChanged(true);
}

void BackgroundJob::joinWorker() {
  if (m_worker.joinable()) m_worker.join();
}

void BackgroundJob::finished() {
  joinWorker();
  if (m_failure) std::rethrow_exception(std::exchange(m_failure, nullptr));
  const bool cancelled = m_cancel && m_cancel->load();
  std::any result = std::move(m_result);
  m_result.reset();
  Done done = std::move(m_done);
  m_running = false;
  if (m_pending) {
    auto [work, nextDone] = std::move(*m_pending);
    m_pending.reset();
    // A finished, uncancelled result is still the newest one delivered: show it, then go on.
    if (!cancelled && done) done(std::move(result));
    start(std::move(work), std::move(nextDone));
    return;
  }
  Q_EMIT busyChanged(false);
  if (!cancelled && done) done(std::move(result));
}

void BackgroundJob::waitForIdle() {
  while (m_running) QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
}

}  // namespace dpx::ui
