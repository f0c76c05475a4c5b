#include "compute/background_job.h"

#include <QCoreApplication>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace dpx::ui {

BackgroundJob::BackgroundJob(bool cancelRunningOnRequest, QObject* parent)
    : QObject(parent), m_cancelOnRequest(cancelRunningOnRequest) {
  connect(&m_watcher, &QFutureWatcher<std::any>::finished, this, &BackgroundJob::finished);
}

BackgroundJob::~BackgroundJob() {
  m_pending.reset();
  if (m_cancel) m_cancel->store(true);
  m_watcher.waitForFinished();  // the worker posts progress to this object: outlive it
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
  m_running = true;
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  m_done = std::move(done);
  auto cancelFlag = m_cancel;
  Progress progress = [this](double f) {
    QMetaObject::invokeMethod(
        this, [this, f] { Q_EMIT progressed(f); }, Qt::QueuedConnection);
  };
  m_watcher.setFuture(
      QtConcurrent::run([work = std::move(work), cancelFlag, progress] { return work(*cancelFlag, progress); }));
  Q_EMIT busyChanged(true);
}

void BackgroundJob::finished() {
  const bool cancelled = m_cancel && m_cancel->load();
  std::any result;
  if (!cancelled && m_watcher.future().isValid()) result = m_watcher.future().result();
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
  while (m_running) {
    m_watcher.waitForFinished();
    QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
  }
}

}  // namespace dpx::ui
