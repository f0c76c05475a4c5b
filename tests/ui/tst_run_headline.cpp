// The Privacy tab's headline: of the analyses of the run (DP-SGD on its sampler), the smallest ε
// among the upper bounds whose assumptions hold (never a lower bound or an estimate), the exact PLD bracket's upper end
// when it is the current knobs' (and ignored when it is of other knobs), the attack bound it implies (Kairouz, Oh &
// Viswanath 2015's (ε, δ) region, or the exact trade-off curve), and every analysis that does not apply with its
// failing assumption. Also shown in the window, above the table.
#include <QDir>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <cmath>

#include "compute/run_headline.h"
#include "main_window.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

AnalyticsSnapshot analyticsOf(const Params& p) {
  return computeAnalytics(p, accounting::Conversion::kImproved, false, false, false);
}

}  // namespace

class TestRunHeadline : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void smallestApplicableUpperBound() {
    const Params p;
    const AnalyticsSnapshot s = analyticsOf(p);
    const std::optional<RunHeadline> h = runHeadline(s, nullptr);
    QVERIFY(h);
    QVERIFY(!h->exact);
    int upper = 0;
    for (const AccountantSummary& row : s.accountants) {
      if (!analysesTheRun(row.id)) continue;
      if (!row.violations.empty() || row.bound != accounting::BoundKind::kUpper || !row.epsilon) continue;
      ++upper;
      QVERIFY2(h->epsilon <= row.epsilon->epsilon, row.id.c_str());
    }
    QCOMPARE(h->applicable, upper);
    QVERIFY(upper >= 1);
    QCOMPARE(h->sampler, std::string("poisson"));
    QCOMPARE(h->delta, p.delta);
    QVERIFY(std::abs(h->tprAtFpr - maxTprAtFpr(h->epsilon, h->delta, kHeadlineFpr)) < 1e-15);
  }

  void attackBoundIsTheEpsilonDeltaRegion() {
    QCOMPARE(maxTprAtFpr(0.0, 0.0, 0.01), 0.01);  // perfect privacy: no better than guessing
    QVERIFY(std::abs(maxTprAtFpr(1.0, 1e-5, 0.01) - (std::exp(1.0) * 0.01 + 1e-5)) < 1e-15);
    QCOMPARE(maxTprAtFpr(50.0, 1e-5, 0.01), 1.0);  // no protection left
    // Near FPR 1 the complement side binds: TPR ≤ 1 − e^−ε (1 − δ − FPR).
    QVERIFY(std::abs(maxTprAtFpr(1.0, 0.0, 0.9) - (1.0 - std::exp(-1.0) * 0.1)) < 1e-15);
  }

  void currentExactBracketWinsAndStaleOneIsIgnored() {
    const Params p;
    const AnalyticsSnapshot s = analyticsOf(p);
    const std::atomic<bool> cancel{false};
    std::optional<PldSnapshot> pld = computePoissonPld(p, false, cancel, [](double) {});
    QVERIFY(pld && pld->error.empty() && pld->epsilon);
    const std::optional<RunHeadline> h = runHeadline(s, &*pld);
    QVERIFY(h);
    QVERIFY(h->exact);  // the exact accountant is tighter than every analytic bound at these knobs
    QCOMPARE(h->epsilon, pld->epsilon->epsilonUpper.value_or(pld->epsilon->epsilon));
    QVERIFY(h->tprExact);
    QVERIFY(h->tprAtFpr <= maxTprAtFpr(h->epsilon, h->delta, kHeadlineFpr) + 1e-12);  // the curve is tighter
    Params other = p;
    other.sigma *= 2;
    const AnalyticsSnapshot moved = analyticsOf(other);
    const std::optional<RunHeadline> stale = runHeadline(moved, &*pld);  // the bracket is of the old σ
    QVERIFY(stale && !stale->exact);
  }

  void analysesThatDoNotApplyAreListed() {
    Params p;
    p.sampling = Sampling::kShuffle;  // Poisson analyses do not bound shuffled batches
    const AnalyticsSnapshot s = analyticsOf(p);
    const std::optional<RunHeadline> h = runHeadline(s, nullptr);
    int violated = 0;
    for (const AccountantSummary& row : s.accountants) violated += analysesTheRun(row.id) && !row.violations.empty();
    QVERIFY(violated > 0);
    QVERIFY(h);  // a fixed-order bound still holds for shuffled batches
    QCOMPARE(h->sampler, std::string("shuffle"));
    QCOMPARE(static_cast<int>(h->notApplying.size()), violated);
    QVERIFY2(QString::fromStdString(h->notApplying.front()).contains(QStringLiteral(" — ")),
             h->notApplying.front().c_str());
    for (const AccountantSummary& row : s.accountants) {
      if (row.id == h->accountantId) QVERIFY(row.violations.empty());
    }
  }

  // Balls-in-bins batches: the Poisson analyses do not apply; random allocation does, and at these
  // knobs it is the tightest upper bound (the fixed-order bound, q = 1, is far looser).
  void ballsInBinsBatchesTakeRandomAllocation() {
    Params p;
    p.sampling = Sampling::kBallsInBins;
    p.n = 2560;  // t = 10 steps per epoch: a quick composition
    p.K = 100;   // 10 epochs
    const AnalyticsSnapshot s = analyticsOf(p);
    const std::atomic<bool> cancel{false};
    std::optional<PldSnapshot> pld = computePld(p, false, cancel, [](double) {});
    QVERIFY(pld && pld->randomAllocation.epsilon);
    const std::optional<RunHeadline> h = runHeadline(s, &*pld);
    QVERIFY(h);
    QCOMPARE(h->accountantId, pld->randomAllocation.id);
    QCOMPARE(h->epsilon, *pld->randomAllocation.epsilon->epsilonUpper);
    QCOMPARE(h->sampler, std::string("balls-in-bins"));
    bool poissonListed = false;
    for (const std::string& line : h->notApplying) poissonListed = poissonListed || line.rfind("pld — ", 0) == 0;
    QVERIFY(poissonListed);
    const std::optional<RunHeadline> without = runHeadline(s, nullptr);  // before the sampler stage
    QVERIFY(without && without->epsilon > h->epsilon);
  }

  void windowShowsTheHeadlineAboveTheTable() {
    QSettings settings(QDir::temp().filePath(QStringLiteral("tst_run_headline.ini")), QSettings::IniFormat);
    settings.clear();
    MainWindow window(&settings);
    window.show();
    QSignalSpy pld(&window, &MainWindow::pldApplied);
    QVERIFY(pld.wait(120000));
    const QString text = window.headline()->text();
    QVERIFY2(text.contains(QStringLiteral("This run: ε ≤")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("pld")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("at most")), qPrintable(text));
    // Balls-in-bins batches: once the sampler stage is in, random allocation is the headline.
    Params p = window.model()->params();
    p.sampling = Sampling::kBallsInBins;
    p.n = 2560;
    p.K = 100;
    window.model()->setAll(p, QStringLiteral("balls-in-bins"));
    // The default run's sampler stage may still land first: wait for this run's.
    QTRY_VERIFY_WITH_TIMEOUT(window.headline()->text().contains(QStringLiteral("random-allocation")), 120000);
    const QString allocated = window.headline()->text();
    QVERIFY2(allocated.contains(QStringLiteral("balls-in-bins")), qPrintable(allocated));
    QVERIFY2(allocated.contains(QStringLiteral("that applies")) || allocated.contains(QStringLiteral("that apply")),
             qPrintable(allocated));
  }
};

QTEST_MAIN(TestRunHeadline)
#include "tst_run_headline.moc"
