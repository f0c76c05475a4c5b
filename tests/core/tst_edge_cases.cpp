// The corners of the knob space every accountant must answer — a value or a Status saying why —
// within 5 s, never a hang, a crash or a non-finite number: the smallest δ (1e−15), a very large
// ε for δ(ε), q = 1 (one batch of all records), σ at its minimum with K = 10⁷, and both
// schedules. The 5 s contract is asserted in optimised builds on the process's CPU time, which
// other processes on a loaded machine do not inflate (wall time did: 15–29 s beside a TSan run);
// sanitizer builds (several times slower by design) check the answers only.
#include <time.h>

#include <QTest>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "accounting/registry.h"
#include "common/params.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

constexpr bool kTimed = !dpx::test::kSanitizedBuild;
constexpr double kDeadlineSeconds = 5.0;

// Every thread of this process: an accountant may spread its work over oneTBB's workers.
double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Corner {
  const char* name;
  std::function<void(Params&)> set;
};

std::vector<Corner> corners() {
  return {
      {"delta 1e-15", [](Params& p) { p.delta = 1e-15; }},
      {"q = 1", [](Params& p) { p.m = p.n; }},
      {"q = 1, delta 1e-15",
       [](Params& p) {
         p.m = p.n;
         p.delta = 1e-15;
       }},
      {"sigma 0.05, K 1e7",
       [](Params& p) {
         p.sigma = 0.05;
         p.K = 10'000'000;
       }},
      {"sigma 0.05, K 1e7, q = 1, delta 1e-15",
       [](Params& p) {
         p.n = 10;
         p.m = 10;
         p.sigma = 0.05;
         p.K = 10'000'000;
         p.delta = 1e-15;
       }},
      {"sigma 100, K 1e7, n 1e8",
       [](Params& p) {
         p.n = 100'000'000;
         p.sigma = 100;
         p.K = 10'000'000;
       }},
  };
}

}  // namespace

class TestEdgeCases : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyAccountantAnswersEveryCorner_data() {
    QTest::addColumn<QString>("accountant");
    QTest::addColumn<int>("corner");
    QTest::addColumn<bool>("decreasing");
    const std::vector<Corner> all = corners();
    for (const Accountant* a : allAccountants()) {
      for (std::size_t c = 0; c < all.size(); ++c) {
        for (bool decreasing : {false, true}) {
          QTest::newRow(qPrintable(QStringLiteral("%1 %2%3")
                                       .arg(QString::fromUtf8(a->id().data(), static_cast<int>(a->id().size())))
                                       .arg(QString::fromUtf8(all[c].name))
                                       .arg(decreasing ? QStringLiteral(" decreasing") : QString())))
              << QString::fromUtf8(a->id().data(), static_cast<int>(a->id().size())) << static_cast<int>(c)
              << decreasing;
        }
      }
    }
  }
  void everyAccountantAnswersEveryCorner() {
    QFETCH(QString, accountant);
    QFETCH(int, corner);
    QFETCH(bool, decreasing);
    const Accountant* a = findAccountant(accountant.toStdString());
    QVERIFY(a);
    Params p;
    corners()[static_cast<std::size_t>(corner)].set(p);
    if (decreasing) p.schedule = Schedule::kDecreasing;
    QVERIFY2(p.validate().isOk(), p.validate().message().c_str());
    auto timed = [&](const char* what, const std::function<void()>& call) {
      const double start = processCpuSeconds();
      call();
      const double seconds = processCpuSeconds() - start;
      if (kTimed) {
        QVERIFY2(seconds < kDeadlineSeconds, qPrintable(QStringLiteral("%1 took %2 s of CPU").arg(what).arg(seconds)));
      }
    };
    // Under sanitizers the exact accountants stop at a 20 % bracket: the corner's arithmetic is
    // the same, its refinements many times slower there.
    EpsilonOptions options;
    if (dpx::test::kSanitizedBuild) options.exact.accuracy = 0.2;
    timed("epsilon", [&] {
      const auto e = a->epsilon(p, options);
      if (e) QVERIFY(std::isfinite(e->epsilon) && e->epsilon >= 0.0);
      if (!e) QVERIFY(!e.status().message().empty());
    });
    for (double eps : {50.0, 1e6}) {
      timed("delta", [&] {
        const auto d = a->delta(p, eps, options);
        if (d) QVERIFY(*d >= 0.0 && *d <= 1.0);
        if (!d) QVERIFY(!d.status().message().empty());
      });
    }
  }
};

QTEST_APPLESS_MAIN(TestEdgeCases)
#include "tst_edge_cases.moc"
