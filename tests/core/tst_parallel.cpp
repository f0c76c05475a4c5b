// The parallel loop and arena of core/common/parallel.h: every index and every element of a range
// exactly once, nested loops, exceptions back in the caller, the arena's result — on oneTBB and
// on plain threads (tst_parallel_plain_threads, the runtime of a static dpx and of every test in
// a ThreadSanitizer build). And twoLanes: before the
// process enters oneTBB, on two plain threads at once with the loops inside run as one piece (and
// oneTBB never started), the second one kept for later splits; after, on oneTBB.
#include <sched.h>
#include <unistd.h>

#include <QTest>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/parallel.h"

using dpx::core::inArena;
using dpx::core::parallelFor;
using dpx::core::twoLanes;

namespace {

bool twoCoresAllowed() {
  cpu_set_t mask;
  return sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) >= 2;
}

// Runs twoLanes whose first lane waits (up to 5 s) until the second has started: true when they
// ran at the same time. Records each lane's thread and whether a loop inside stayed on it.
struct LaneReport {
  bool together = false;
  std::thread::id lane[2];
  pid_t secondLaneTid = 0;  // the kernel's id: a new thread may reuse an ended one's pthread_t
  bool loopsStayed[2] = {false, false};
};

LaneReport runTwoLanes() {
  LaneReport report;
  std::mutex mutex;
  std::condition_variable cv;
  bool secondStarted = false;
  auto loopStays = [] {
    const std::thread::id self = std::this_thread::get_id();
    std::atomic<bool> stayed{true};
    parallelFor(0, 64, [&](int) {
      if (std::this_thread::get_id() != self) stayed = false;
    });
    return stayed.load();
  };
  twoLanes(
      [&] {
        report.lane[0] = std::this_thread::get_id();
        std::unique_lock lock(mutex);
        report.together = cv.wait_for(lock, std::chrono::seconds(5), [&] { return secondStarted; });
        lock.unlock();
        report.loopsStayed[0] = loopStays();
      },
      [&] {
        report.lane[1] = std::this_thread::get_id();
        report.secondLaneTid = gettid();
        {
          const std::lock_guard lock(mutex);
          secondStarted = true;
        }
        cv.notify_all();
        report.loopsStayed[1] = loopStays();
      });
  return report;
}

}  // namespace

class TestParallel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // First: before anything in this process enters oneTBB.
  void twoLanesBeforeOneTbbRunOnPlainThreads() {
    QVERIFY(!dpx::core::detail::oneTbbEntered.load());
    const LaneReport report = runTwoLanes();
    if (twoCoresAllowed()) {
      QVERIFY(report.together);
      QVERIFY(report.lane[0] == std::this_thread::get_id());
      QVERIFY(report.lane[1] != report.lane[0]);
    }
    // Both cores are busy with the lanes: a loop inside runs as one piece on its lane's thread,
    // and the process still has not entered oneTBB.
    QVERIFY(report.loopsStayed[0] && report.loopsStayed[1]);
    QVERIFY(!dpx::core::detail::inPlainLane);
    QVERIFY(!dpx::core::detail::oneTbbEntered.load());
    if (twoCoresAllowed()) {
      // The second lane's thread is kept for the process's next splits: right after a split, and
      // after it has stopped spinning and sleeps (beyond 2 ms).
      const LaneReport again = runTwoLanes();
      QVERIFY(again.together);
      QVERIFY(again.secondLaneTid == report.secondLaneTid);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const LaneReport later = runTwoLanes();
      QVERIFY(later.together);
      QVERIFY(later.secondLaneTid == report.secondLaneTid);
      // Two splits at once (one holds the kept thread, the other starts one of its own): each
      // first lane waits until both second lanes run.
      std::atomic<int> secondLanes{0};
      std::thread::id second[2];
      bool overlapped[2] = {false, false};
      auto split = [&](int k) {
        twoLanes(
            [&] {
              const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
              while (secondLanes.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
              overlapped[k] = secondLanes.load() == 2;
            },
            [&] {
              second[k] = std::this_thread::get_id();
              ++secondLanes;
            });
      };
      std::thread other(split, 1);
      split(0);
      other.join();
      QVERIFY(overlapped[0] && overlapped[1]);
      QVERIFY(second[0] != second[1]);
    }
    // An exception from either lane reaches the caller once both have ended.
    for (int thrower : {0, 1}) {
      std::atomic<int> ran{0};
      bool caught = false;
      try {
        twoLanes(
            [&] {
              ++ran;
              if (thrower == 0) throw std::runtime_error("first");
            },
            [&] {
              ++ran;
              if (thrower == 1) throw std::runtime_error("second");
            });
      } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == (thrower == 0 ? "first" : "second");
      }
      QVERIFY(caught);
      QCOMPARE(ran.load(), 2);
    }
    QVERIFY(!dpx::core::detail::oneTbbEntered.load());
  }

  void everyIndexExactlyOnce() {
    for (const int threads : {1, 2, 4}) {
      std::vector<std::atomic<int>> visits(1000);
      inArena(threads, [&] { parallelFor(0, 1000, [&](int i) { visits[static_cast<std::size_t>(i)]++; }); });
      for (const auto& v : visits) QCOMPARE(v.load(), 1);
    }
  }

  void offsetAndEmptyRanges() {
    std::vector<std::atomic<int>> visits(50);
    parallelFor(std::size_t{10}, std::size_t{50}, [&](std::size_t i) { visits[i]++; });
    for (std::size_t i = 0; i < visits.size(); ++i) QCOMPARE(visits[i].load(), i < 10 ? 0 : 1);
    std::atomic<int> calls{0};
    parallelFor(5, 5, [&](int) { calls++; });
    parallelFor(tbb::blocked_range<int>(3, 3), [&](const tbb::blocked_range<int>&) { calls++; });
    QCOMPARE(calls.load(), 0);
  }

  void rangePiecesCoverTheRangeOnce() {
    for (const std::size_t grain : {std::size_t{1}, std::size_t{7}, std::size_t{4096}}) {
      std::vector<std::atomic<int>> visits(10007);
      inArena(2, [&] {
        parallelFor(tbb::blocked_range<std::size_t>(0, visits.size(), grain), [&](const auto& piece) {
          QVERIFY(!piece.empty());
          for (std::size_t i = piece.begin(); i != piece.end(); ++i) visits[i]++;
        });
      });
      for (const auto& v : visits) QCOMPARE(v.load(), 1);
    }
  }

  void nestedLoopsComplete() {
    std::atomic<long> sum{0};
    inArena(2, [&] {
      parallelFor(0, 8, [&](int outer) { parallelFor(0, 100, [&](int inner) { sum += outer * 100 + inner; }); });
    });
    QCOMPARE(sum.load(), 799L * 800L / 2L);
  }

  void aTaskExceptionReachesTheCaller() {
    bool caught = false;
    try {
      parallelFor(0, 100, [](int i) {
        if (i == 37) throw std::runtime_error("task 37");
      });
    } catch (const std::runtime_error& e) {
      caught = QByteArray(e.what()) == "task 37";
    }
    QVERIFY(caught);
  }

  void twoLanesOnceOneTbbIsEnteredRunOnIt() {  // (in a ThreadSanitizer build, on plain threads still)
    parallelFor(0, 8, [](int) {});
    const bool oneTbb = dpx::core::parallelRuntime() == dpx::core::ParallelRuntime::oneTbb;
    QCOMPARE(dpx::core::detail::oneTbbEntered.load(), oneTbb);
    // Two pieces of one oneTBB loop (which may run them on one thread): loops inside are oneTBB's.
    std::atomic<int> ran{0};
    std::atomic<bool> plain{false};
    auto lane = [&] {
      ++ran;
      if (dpx::core::detail::inPlainLane) plain = true;
    };
    twoLanes(lane, lane);
    QCOMPARE(ran.load(), 2);
    QCOMPARE(plain.load(), !oneTbb);  // plain loops never enter oneTBB
  }

  void simplePartitionVisitsEveryIndexOnce() {
    std::vector<std::atomic<int>> visits(37);
    inArena(2, [&] {
      parallelFor(
          std::size_t{0}, visits.size(), [&](std::size_t i) { visits[i]++; }, tbb::simple_partitioner());
    });
    for (const auto& v : visits) QCOMPARE(v.load(), 1);
  }

  // The runtime is the one the executable was linked with: plain threads in tst_parallel_plain_threads
  // and in a ThreadSanitizer build, oneTBB otherwise.
  void runtimeIsTheLinkedOne() {
#if defined(DPX_TEST_EXPECTS_PLAIN_THREADS) || defined(__SANITIZE_THREAD__)
    QVERIFY(dpx::core::parallelRuntime() == dpx::core::ParallelRuntime::plainThreads);
#else
    QVERIFY(dpx::core::parallelRuntime() == dpx::core::ParallelRuntime::oneTbb);
#endif
  }

  void arenaReturnsTheResult() {
    QCOMPARE(inArena(2, [] { return 42; }), 42);
    QCOMPARE(dpx::core::effectiveThreads(3), 3);
    QVERIFY(dpx::core::effectiveThreads(0) >= 1);
  }
};

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
