// The parallel loop and arena of core/common/parallel.h: every index and every element of a range
// exactly once, nested loops, exceptions back in the caller, the arena's result — on oneTBB and
// on plain threads (tst_parallel_plain_threads, the runtime of every test in a ThreadSanitizer
// build). And twoLanes: both lanes at the same time on two cores, loops inside them complete, an
// exception from either back in the caller.
#include <sched.h>

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
// ran at the same time. Each lane also runs a loop, which must complete.
struct LaneReport {
  bool together = false;
  std::thread::id lane[2];
  int loopSums[2] = {0, 0};
};

LaneReport runTwoLanes() {
  LaneReport report;
  std::mutex mutex;
  std::condition_variable cv;
  bool secondStarted = false;
  auto loopSum = [] {
    std::atomic<int> sum{0};
    parallelFor(0, 64, [&](int i) { sum += i; });
    return sum.load();
  };
  twoLanes(
      [&] {
        report.lane[0] = std::this_thread::get_id();
        std::unique_lock lock(mutex);
        report.together = cv.wait_for(lock, std::chrono::seconds(5), [&] { return secondStarted; });
        lock.unlock();
        report.loopSums[0] = loopSum();
      },
      [&] {
        report.lane[1] = std::this_thread::get_id();
        {
          const std::lock_guard lock(mutex);
          secondStarted = true;
        }
        cv.notify_all();
        report.loopSums[1] = loopSum();
      });
  return report;
}

}  // namespace

class TestParallel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void twoLanesRunSideBySide() {
    const LaneReport report = runTwoLanes();
    if (twoCoresAllowed()) {
      QVERIFY(report.together);
      QVERIFY(report.lane[1] != report.lane[0]);
    }
    QCOMPARE(report.loopSums[0], 63 * 64 / 2);
    QCOMPARE(report.loopSums[1], 63 * 64 / 2);
    // An exception from either lane reaches the caller (oneTBB cancels the other if it has not
    // started yet).
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
      QVERIFY(ran.load() >= 1);
    }
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
