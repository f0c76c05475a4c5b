// Sessions and A/B pinning, offscreen: a session saved after a training run and a pin opens in a
// new window with the same knobs, trainer settings, view, pinned ghosts and saved runs (a round
// trip that failed before: there were no sessions); a malformed file is refused with the byte,
// line and column or the JSON path of the field; pinning draws A's curves as ghosts and an A/B
// table of the knobs that differ and every ε.
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "charts/chart_panel.h"
#include "charts/explorer_charts.h"
#include "main_window.h"
#include "pin_comparison.h"
#include "presets.h"
#include "session/session_file.h"
#include "trainer_panel.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

bool waitForAnalytics(MainWindow& w) {
  return QTest::qWaitFor(
      [&] {
        const auto s = w.lastAnalytics();
        return s && !s->draft && s->params == w.model()->params();
      },
      20000);
}

int pinnedCurves(const ChartPanel* chart) {
  int count = 0;
  for (const QString& id : chart->curveIds()) count += id.startsWith(ExplorerCharts::pinnedCurvePrefix()) ? 1 : 0;
  return count;
}

QString rowText(const std::vector<QStringList>& rows) {
  QStringList lines;
  for (const QStringList& r : rows) lines << r.join(QStringLiteral(" | "));
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

class TestSessionFile : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

  std::unique_ptr<QSettings> freshSettings(const QString& name) {
    auto settings = std::make_unique<QSettings>(m_dir.filePath(name), QSettings::IniFormat);
    settings->clear();
    return settings;
  }

 private Q_SLOTS:
  // Pin A, move σ: A's curves stay as ghosts, the A/B table shows σ and every ε with B/A; unpin
  // removes both.
  void pinningDrawsGhostsAndAnABTable() {
    auto settings = freshSettings(QStringLiteral("pin.ini"));
    MainWindow w(settings.get());
    w.show();
    QVERIFY(waitForAnalytics(w));
    const double sigmaA = w.model()->params().sigma;
    w.findChild<QCheckBox*>(QStringLiteral("pinToggle"))->setChecked(true);
    QVERIFY(w.pinned());
    QVERIFY(pinnedCurves(w.charts()->epsilon()) > 3);
    QVERIFY(pinnedCurves(w.charts()->rdp()) > 1);
    w.model()->setKnob(Knob::kSigma, 2 * sigmaA);
    QVERIFY(waitForAnalytics(w));
    QVERIFY(pinnedCurves(w.charts()->epsilon()) > 3);  // a redraw of B keeps A
    const std::vector<QStringList> rows = w.pinComparison()->rowsText();
    QVERIFY2(rows.front().at(0).startsWith(QStringLiteral("σ")) && rows.front().at(3) == QStringLiteral("2"),
             qPrintable(rowText(rows)));
    bool rdpRow = false;
    for (const QStringList& r : rows) {
      if (!r.at(0).contains(QStringLiteral("rdp"))) continue;
      rdpRow = true;
      QVERIFY2(r.at(3).toDouble() < 1.0, qPrintable(rowText(rows)));  // more noise, smaller ε
    }
    QVERIFY(rdpRow);
    w.findChild<QCheckBox*>(QStringLiteral("pinToggle"))->setChecked(false);
    QCOMPARE(pinnedCurves(w.charts()->epsilon()), 0);
    QVERIFY(!w.pinComparison()->isVisibleTo(&w));
  }

  // Train, pin, change the view, save; a new window opens the session as it was.
  void sessionRoundTrip() {
    const QString path = m_dir.filePath(QStringLiteral("round.dpxsession"));
    SessionFile saved;
    QStringList accuracies;
    {
      auto settings = freshSettings(QStringLiteral("a.ini"));
      MainWindow w(settings.get());
      w.show();
      w.tabs()->setCurrentIndex(MainWindow::kTrainingTab);
      QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n == 1438; }, 10000));
      w.model()->setKnob(Knob::kK, 300);
      TrainerPanel* t = w.trainerPanel();
      t->start();
      QTRY_VERIFY_WITH_TIMEOUT(!t->controller()->running() && !t->controller()->results().empty(), 60000);
      for (int r = 0; r < t->resultsTable()->rowCount(); ++r) accuracies << t->resultsTable()->item(r, 1)->text();
      w.tabs()->setCurrentIndex(MainWindow::kPrivacyTab);
      QVERIFY(waitForAnalytics(w));
      w.pinConfiguration(w.model()->params());
      w.model()->setKnob(Knob::kSigma, 2.5);
      w.findChild<QCheckBox*>(QStringLiteral("epochsToggle"))->setChecked(true);
      w.findChild<QCheckBox*>(QStringLiteral("rocToggle"))->setChecked(true);
      QVERIFY(waitForAnalytics(w));
      QVERIFY(w.saveSession(path));
      saved = w.currentSession();
      QVERIFY(!saved.runs.empty());
    }
    auto settings = freshSettings(QStringLiteral("b.ini"));
    MainWindow w(settings.get());
    w.show();
    QVERIFY(waitForAnalytics(w));
    const Params before = w.model()->params();
    QVERIFY(w.openSession(path));
    QVERIFY(sameParams(w.model()->params(), saved.state.params));
    QVERIFY(w.model()->trainer() == saved.state.trainer);
    QVERIFY(w.model()->epochsAxis());
    QVERIFY(w.charts()->rocView());
    QVERIFY(w.pinned() && sameParams(w.pinned()->params, *saved.pinned));
    QVERIFY(waitForAnalytics(w));
    QVERIFY(pinnedCurves(w.charts()->epsilon()) > 3);
    QCOMPARE(w.currentSession().view, saved.view);
    // The saved runs: their rows (greyed) and curves, and what they ran with.
    TrainerPanel* t = w.trainerPanel();
    QCOMPARE(t->resultsTable()->rowCount(), static_cast<int>(saved.runs.size()));
    QStringList reopened;
    for (int r = 0; r < t->resultsTable()->rowCount(); ++r) reopened << t->resultsTable()->item(r, 1)->text();
    QCOMPARE(reopened, accuracies);
    QVERIFY2(t->statusLabel()->text().contains(QStringLiteral("σ = 1.1 (now 2.5)")),
             qPrintable(t->statusLabel()->text()));
    QVERIFY(!t->accuracyChart()->curveIds().isEmpty());
    // Opening is one undo step for the knobs.
    w.model()->undoStack()->undo();
    QVERIFY(sameParams(w.model()->params(), before));
  }

  // Serialising and parsing give back the same session, doubles bit for bit.
  void serializationIsExact() {
    SessionFile s;
    s.state.params.sigma = 1.0 / 3.0;
    s.state.params.delta = 1e-7;
    s.state.trainer.source = QStringLiteral("builtin:breast-cancer");
    s.state.trainer.nFromData = true;
    s.view.tab = 2;
    s.view.rocView = true;
    s.view.conversion = accounting::Conversion::kClassic;
    s.pinned = Params{};
    s.pinned->eta = 0.1 + 0.2;
    SavedRun run;
    run.mechanism = QStringLiteral("dp-sgd");
    run.data = QStringLiteral("builtin:digits");
    run.epsilon = 0.7071067811865476;
    run.delta = 1e-5;
    run.testAccuracy = 0.912;
    run.trainAccuracy = 0.95;
    run.sigmaUsed = 1.234;
    run.etaUsed = 0.45;
    run.clipNormUsed = 1;
    run.stepsUsed = 675;
    run.history.push_back({1, 22, 0.5, 0.49, 1.7, 0.3, 0.01});
    run.history.push_back({2, 44, 0.6, 0.58, 1.2, std::nullopt, 0.02});
    s.runs.push_back(run);
    const Result<SessionFile> back = parseSession(serializeSession(s), QStringLiteral("s"), ModelState{});
    QVERIFY2(back.isOk(), back.status().message().c_str());
    QVERIFY(sameParams(back->state.params, s.state.params));
    QCOMPARE(back->state.trainer.source, s.state.trainer.source);
    QVERIFY(back->state.trainer.nFromData);
    QCOMPARE(back->view, s.view);
    QVERIFY(sameParams(*back->pinned, *s.pinned));
    QCOMPARE(back->runs.size(), std::size_t{1});
    const SavedRun& r = back->runs.front();
    QCOMPARE(r.epsilon, run.epsilon);
    QCOMPARE(r.stepsUsed, run.stepsUsed);
    QCOMPARE(r.history.size(), std::size_t{2});
    QCOMPARE(r.history[0].epsilonSpent, std::optional<double>(0.3));
    QVERIFY(!r.history[1].epsilonSpent);
    QCOMPARE(r.history[1].testAccuracy, 0.58);
  }

  // The fuzzer's seed sessions are sessions: each opens, and writes back unchanged.
  void seedSessionsParse() {
    const QDir seeds(QStringLiteral(DPX_TEST_DATA_DIR "/fuzz/session"));
    const QStringList files = seeds.entryList({QStringLiteral("*.dpxsession")}, QDir::Files);
    QVERIFY(files.size() >= 2);
    for (const QString& name : files) {
      const Result<SessionFile> parsed = loadSessionFile(seeds.filePath(name), ModelState{});
      QVERIFY2(parsed.isOk(), parsed.status().message().c_str());
      const QByteArray written = serializeSession(*parsed);
      const Result<SessionFile> reread = parseSession(written, name, ModelState{});
      QVERIFY2(reread.isOk(), reread.status().message().c_str());
      QCOMPARE(serializeSession(*reread), written);
    }
  }

  // A broken file says where: the byte, line and column of bad JSON, the path of a bad field.
  void malformedSessionsAreRefusedWithWhere() {
    SessionFile s;
    SavedRun run;
    run.mechanism = QStringLiteral("dp-sgd");
    run.data = QStringLiteral("builtin:digits");
    run.history.push_back({1, 22, 0.5, 0.49, 1.7, 0.3, 0.01});
    s.runs.push_back(run);
    const QByteArray good = serializeSession(s);
    QVERIFY(parseSession(good, QStringLiteral("f"), ModelState{}).isOk());
    const struct {
      QByteArray text;
      const char* expected;
    } cases[] = {
        {good.left(good.size() / 2), "line "},
        {QByteArray("{\n  \"format\": \"dpexplorer-session\",\n  \"version\": 1,\n  \"state\": {,\n}"), "line 4"},
        {QByteArray(good).replace("\"test_accuracy\": 0.49", "\"test_accuracy\": \"high\""),
         "runs[0].history[0].test_accuracy: expected a number"},
        {QByteArray(good).replace("\"mechanism\": \"dp-sgd\"", "\"mechanism\": \"dp-sgx\""),
         "runs[0].mechanism: \"dp-sgx\" is not a mechanism"},
        {QByteArray(good).replace("\"n_from_data\"", "\"n_from_dat\""), "n_from_dat: unknown key"},
        {QByteArray(good).replace("\"version\": 1", "\"version\": 7"), "version: 7 is newer"},
        {QByteArray(good).replace("dpexplorer-session", "dpexplorer-preset"), "not a DP Explorer session"},
        {QByteArray(good).replace("\"sigma\": 1.1", "\"sigma\": -1"), "state: params.sigma"},
        {QByteArray(), "empty"},
    };
    for (const auto& c : cases) {
      const Result<SessionFile> parsed = parseSession(c.text, QStringLiteral("f.dpxsession"), ModelState{});
      QVERIFY2(!parsed.isOk(), c.expected);
      const QString message = QString::fromStdString(parsed.status().message());
      QVERIFY2(message.startsWith(QStringLiteral("f.dpxsession")), qPrintable(message));
      QVERIFY2(message.contains(QLatin1String(c.expected)),
               qPrintable(message + QStringLiteral("  [expected: ") + QLatin1String(c.expected) + QLatin1Char(']')));
    }
  }
};

QTEST_MAIN(TestSessionFile)
#include "tst_session_file.moc"
