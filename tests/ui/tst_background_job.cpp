// The GUI's background jobs: requests made while one runs collapse into one pending request (the
// newest), a job that cancels on request stops the running work and drops its result, results
// arrive on the GUI thread, and destruction waits for the worker. Threaded: run under TSan in CI.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>
#include <chrono>
#include <thread>

#include "compute/background_job.h"

using dpx::ui::BackgroundJob;

namespace {

// Work that sleeps in small slices until cancelled or done, and reports the thread it ran on.
BackgroundJob::Work sleeper(int value, int milliseconds, std::atomic<int>* started = nullptr) {
  return [value, milliseconds, started](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) {
    if (started) started->fetch_add(1);
    for (int t = 0; t < milliseconds; t += 5) {
      if (cancel.load()) return std::any();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      progress(static_cast<double>(t) / milliseconds);
    }
    return std::any(value);
  };
}

}  // namespace

class TestBackgroundJob : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void requestsWhileRunningCollapseToTheNewest() {
    BackgroundJob job(false);
    std::vector<int> delivered;
    std::atomic<int> started{0};
    auto done = [&](std::any&& r) {
      QCOMPARE(QThread::currentThread(), QCoreApplication::instance()->thread());
      if (auto* v = std::any_cast<int>(&r)) delivered.push_back(*v);
    };
    job.request(sleeper(1, 60, &started), done);
    for (int i = 2; i <= 10; ++i) job.request(sleeper(i, 10, &started), done);
    QTRY_VERIFY_WITH_TIMEOUT(!job.busy(), 5000);
    // The first ran to its end (this job does not cancel on request), then only the newest.
    QCOMPARE(delivered, (std::vector<int>{1, 10}));
    QCOMPARE(started.load(), 2);
  }

  void aNewerRequestCancelsTheRunningOne() {
    BackgroundJob job(true);
    std::vector<int> delivered;
    auto done = [&](std::any&& r) {
      if (auto* v = std::any_cast<int>(&r)) delivered.push_back(*v);
    };
    QElapsedTimer timer;
    timer.start();
    job.request(sleeper(1, 5000), done);
    QTest::qWait(20);
    job.request(sleeper(2, 10), done);
    QTRY_VERIFY_WITH_TIMEOUT(!job.busy(), 5000);
    QCOMPARE(delivered, std::vector<int>{2});  // the cancelled result is dropped
    QVERIFY2(timer.elapsed() < 2000, "the running work stopped at its next cancellation check");
  }

  void cancelDropsTheRunningAndThePending() {
    BackgroundJob job(false);
    QSignalSpy busy(&job, &BackgroundJob::busyChanged);
    int delivered = 0;
    job.request(sleeper(1, 5000), [&](std::any&&) { ++delivered; });
    job.request(sleeper(2, 10), [&](std::any&&) { ++delivered; });
    job.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!job.busy(), 5000);
    QTest::qWait(50);
    QCOMPARE(delivered, 0);
    QCOMPARE(busy.count(), 2);  // busy, then idle
  }

  void progressArrivesOnTheGuiThread() {
    BackgroundJob job(false);
    QSignalSpy progress(&job, &BackgroundJob::progressed);
    bool done = false;
    job.request(sleeper(7, 100), [&](std::any&&) { done = true; });
    QTRY_VERIFY_WITH_TIMEOUT(done, 5000);
    QVERIFY(progress.count() > 3);
    for (const QList<QVariant>& p : progress) QVERIFY(p.at(0).toDouble() >= 0.0 && p.at(0).toDouble() <= 1.0);
  }

  void destructionWaitsForTheWorker() {
    std::atomic<bool> finished{false};
    {
      BackgroundJob job(false);
      job.request(
          [&](const std::atomic<bool>& cancel, const BackgroundJob::Progress&) {
            for (int i = 0; i < 200 && !cancel.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
            finished = true;
            return std::any();
          },
          [](std::any&&) {});
      QTest::qWait(10);
    }  // cancels and waits: the worker must be done when the job is gone
    QVERIFY(finished.load());
  }
};

QTEST_MAIN(TestBackgroundJob)
#include "tst_background_job.moc"
