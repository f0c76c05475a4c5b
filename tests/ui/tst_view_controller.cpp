// The views' path from a change to the screen (debounce → job → drop stale → apply) and the
// Privacy tab's controllers built on it: changes inside a debounce start one computation; a
// result a newer request cancelled, or one older than the screen, is never applied; a
// cancelled request's result never arrives; every result on screen carries the knobs of the
// last change; a hidden tab computes only the headline ε; results tagged with knobs and data are
// current until either moves, say what moved, and a report says which of its sections ran with
// other knobs.
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <thread>
#include <vector>

#include "common/format.h"
#include "report.h"
#include "session/privacy_views.h"
#include "session/session.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

// Work that returns `value` after `sleepMs`, or nothing once cancelled — unless it is work that
// does not look at its cancel flag (as a result computed in one step cannot), whose result then
// arrives and must be dropped by the controller.
BackgroundJob::Work valueAfter(int value, int sleepMs, bool honoursCancel = true) {
  return [value, sleepMs, honoursCancel](const std::atomic<bool>& cancel, const BackgroundJob::Progress&) -> std::any {
    for (int slept = 0; slept < sleepMs; slept += 5) {
      if (honoursCancel && cancel) return {};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return value;
  };
}

bool waitFor(const std::function<bool()>& done, int ms = 20000) { return QTest::qWaitFor(done, ms); }

}  // namespace

class TestViewController : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void debounceCoalescesChanges() {
    int starts = 0;
    ViewController view(ViewController::Freshness::kNewestOnly, [&] { ++starts; });
    for (int i = 0; i < 5; ++i) view.schedule(80);
    QVERIFY(view.waiting());
    QVERIFY(waitFor([&] { return starts > 0; }));
    QTest::qWait(150);
    QCOMPARE(starts, 1);
    view.schedule(0);  // no wait: now
    QCOMPARE(starts, 2);
    view.schedule(50);
    view.cancel();  // the wait is dropped too
    QTest::qWait(120);
    QCOMPARE(starts, 2);
  }

  void newestOnlyAppliesTheLastRequestAlone() {
    std::vector<int> applied;
    ViewController view(ViewController::Freshness::kNewestOnly, [] {});
    const auto apply = [&](std::any&& r) {
      if (auto* v = std::any_cast<int>(&r)) applied.push_back(*v);
    };
    view.run(valueAfter(1, 200, /*honoursCancel=*/false), apply);
    view.run(valueAfter(2, 10), apply);  // cancels the first, whose value still comes back
    view.run(valueAfter(3, 10), apply);  // replaces the pending second
    view.waitForIdle();
    QVERIFY(waitFor([&] { return !applied.empty() && !view.busy(); }));
    QTest::qWait(50);
    QCOMPARE(applied, std::vector<int>{3});
  }

  void neverBackwardsShowsEveryNewerResult() {
    std::vector<int> applied;
    ViewController view(ViewController::Freshness::kNeverBackwards, [] {});
    const auto apply = [&](std::any&& r) {
      if (auto* v = std::any_cast<int>(&r)) applied.push_back(*v);
    };
    view.run(valueAfter(1, 100), apply);
    view.run(valueAfter(2, 10), apply);  // pending, replaced by the third
    view.run(valueAfter(3, 10), apply);
    QVERIFY(waitFor([&] { return applied.size() == 2 && !view.busy(); }));
    QCOMPARE(applied, (std::vector<int>{1, 3}));  // the running one ends, then the newest
  }

  void cancelledResultsNeverArrive() {
    std::vector<int> applied;
    ViewController view(ViewController::Freshness::kNeverBackwards, [] {});
    view.run(valueAfter(7, 60, /*honoursCancel=*/false), [&](std::any&& r) {
      if (auto* v = std::any_cast<int>(&r)) applied.push_back(*v);
    });
    view.cancel();
    QVERIFY(waitFor([&] { return !view.busy(); }));
    QTest::qWait(50);
    QVERIFY(applied.empty());
  }

  void privacyViewsDeliverResultsOfTheLastKnobs() {
    ParameterModel model;
    Session session(&model, std::make_shared<training::DatasetCache>());
    PrivacyViews views(&session);
    QSignalSpy analytics(&views, &PrivacyViews::analyticsReady);
    QSignalSpy exact(&views, &PrivacyViews::pldReady);
    QSignalSpy stepsize(&views, &PrivacyViews::stepsizeReady);
    views.refreshAll();
    for (const double sigma : {1.1, 1.3, 1.7, 2.3}) model.setKnob(Knob::kSigma, sigma, /*dragToken=*/1);
    QVERIFY(
        waitFor([&] { return views.lastStepsize() && !views.exact()->busy() && !views.stepsize()->busy(); }, 120000));
    QVERIFY(waitFor([&] { return !views.analytics()->busy(); }));
    QVERIFY(views.lastAnalytics());
    QCOMPARE(views.lastAnalytics()->params.sigma, 2.3);
    QVERIFY(views.lastPld());
    QCOMPARE(views.lastPld()->params.sigma, 2.3);  // the drag's earlier values were cancelled, not drawn
    QCOMPARE(exact.count(), 1);
    QVERIFY(analytics.count() >= 1);
    QCOMPARE(stepsize.count(), 1);                   // after the exact bracket, once
    QVERIFY(session.headlineEpsilon().has_value());  // the table's ε is the run's headline
  }

  void hiddenTabComputesOnlyTheHeadline() {
    ParameterModel model;
    Session session(&model, std::make_shared<training::DatasetCache>());
    PrivacyViews views(&session);
    views.setShown(false);
    QSignalSpy analytics(&views, &PrivacyViews::analyticsReady);
    QSignalSpy exact(&views, &PrivacyViews::pldReady);
    QSignalSpy headline(&session, &Session::headlineEpsilonChanged);
    model.setKnob(Knob::kSigma, 1.4);
    QVERIFY(waitFor([&] { return session.headlineEpsilon().has_value(); }));
    QTest::qWait(300);  // past the slow views' debounce
    QCOMPARE(analytics.count(), 0);
    QCOMPARE(exact.count(), 0);
    views.setShown(true);  // shown: brought up to date
    QVERIFY(waitFor([&] { return analytics.count() > 0 && exact.count() > 0; }, 120000));
    QCOMPARE(views.lastPld()->params.sigma, 1.4);
  }

  void exactOffClearsAndReleasesTheStepsizeChart() {
    ParameterModel model;
    Session session(&model, std::make_shared<training::DatasetCache>());
    PrivacyViews views(&session);
    QSignalSpy cleared(&views, &PrivacyViews::pldCleared);
    QSignalSpy stepsize(&views, &PrivacyViews::stepsizeReady);
    views.refreshAll();
    views.setExactEnabled(false);  // the bracket is cancelled; the step sizes need not wait for it
    QCOMPARE(cleared.count(), 1);
    QVERIFY(!views.lastPld());
    QVERIFY(waitFor([&] { return stepsize.count() == 1; }, 120000));
  }

  void tagsStayCurrentUntilKnobsOrDataMove() {
    ParameterModel model;
    Session session(&model, std::make_shared<training::DatasetCache>());
    QString error;
    const std::optional<TrainingRequest> request = session.trainingRequest(&error);
    QVERIFY2(request, qPrintable(error));
    const ResultTag trained = tagOf(*request);
    const ResultTag knobsOnly{model.params(), std::nullopt};
    QVERIFY(session.isCurrent(trained));
    QVERIFY(session.isCurrent(knobsOnly));
    session.setSeed(session.seed() + 1);  // another split of the data
    QVERIFY(!session.isCurrent(trained));
    QVERIFY(session.isCurrent(knobsOnly));
    session.setSeed(session.seed() - 1);
    QVERIFY(session.isCurrent(trained));
    QVERIFY(session.whatChanged(trained).isEmpty());
    const double sigma = model.params().sigma;
    model.setKnob(Knob::kSigma, sigma * 2);
    QVERIFY(!session.isCurrent(trained));
    QVERIFY(!session.isCurrent(knobsOnly));
    const QString changed = session.whatChanged(trained);
    QVERIFY2(changed.startsWith(QStringLiteral("σ = %1 (now %2)")
                                    .arg(QString::fromStdString(formatNumber(sigma, 4)),
                                         QString::fromStdString(formatNumber(2 * sigma, 4)))),
             qPrintable(changed));
    session.setSeed(session.seed() + 1);
    QVERIFY2(session.whatChanged(trained).endsWith(QStringLiteral("other data or split")),
             qPrintable(session.whatChanged(trained)));
    QVERIFY(!session.trainingTag());  // nothing trained yet
  }

  void reportSaysWhichSectionsRanWithOtherKnobs() {
    ReportInputs in;
    in.training.emplace_back();
    in.trainingChanged = QStringLiteral("σ = 1.1 (now 27.5)");
    in.auditHtml = QStringLiteral("<h2>Membership-inference audit</h2><pre>…</pre>");
    in.auditChanged = QStringLiteral("other data or split");
    const QString html = buildReportHtml(in);
    QVERIFY(html.contains(QStringLiteral("ran with σ = 1.1 (now 27.5)")));
    QVERIFY(html.indexOf(QStringLiteral("ran with other data or split")) >
            html.indexOf(QStringLiteral("Membership-inference audit")));
    in.trainingChanged.clear();
    in.auditChanged.clear();
    QVERIFY(!buildReportHtml(in).contains(QStringLiteral("Not the knobs above")));
  }
};

QTEST_MAIN(TestViewController)
#include "tst_view_controller.moc"
