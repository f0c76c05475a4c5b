// The parallel loop and arena of core/common/parallel.h: every index and every element of a range
// exactly once, nested loops, exceptions back in the caller, the arena's result — in the oneTBB
// build and in the plain-thread build that ThreadSanitizer checks.
#include <QTest>
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "common/parallel.h"

using dpx::core::inArena;
using dpx::core::parallelFor;

class TestParallel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
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

  void arenaReturnsTheResult() {
    QCOMPARE(inArena(2, [] { return 42; }), 42);
    QCOMPARE(dpx::core::effectiveThreads(3), 3);
    QVERIFY(dpx::core::effectiveThreads(0) >= 1);
  }
};

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
