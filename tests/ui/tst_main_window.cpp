// The explorer window, offscreen: every knob moves the series it should, invalid input shows
// the message and keeps the charts finite, undo restores values, presets set every knob,
// exports write files, the trainer panel trains DP-SGD on digits and its accuracy series grows.
#include <cmath>

#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include "accountant_table.h"
#include "calibrate_panel.h"
#include "charts/chart_panel.h"
#include "charts/explorer_charts.h"
#include "knob_widget.h"
#include "main_window.h"
#include "parameter_panel.h"
#include "presets.h"
#include "trainer_panel.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

// Waits for the analytic charts to be replaced after an edit.
bool waitAnalytics(MainWindow& w, QSignalSpy& spy, int timeoutMs = 10000) {
  if (!spy.isEmpty()) {
    spy.clear();
  }
  const bool got = spy.wait(timeoutMs);
  w.analyticsJob()->waitForIdle();
  QCoreApplication::processEvents();
  return got;
}

QVector<QPointF> points(ChartPanel* chart, const char* id) { return chart->curvePoints(QLatin1String(id)); }

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_settings;

 private Q_SLOTS:
  void init() {
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("test.ini")), QSettings::IniFormat);
    m_settings->clear();
  }

  void opensAndDrawsEveryAccountant() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!spy.isEmpty() || spy.wait(10000));
    for (const char* id : {"rdp", "gdp", "sgld", "cyclic", "outpert", "sgmcmc"}) {
      const QVector<QPointF> p = points(w.charts()->epsilon(), id);
      QVERIFY2(p.size() > 100, id);
      for (const QPointF& q : p) QVERIFY(std::isfinite(q.x()) && std::isfinite(q.y()));
    }
    QVERIFY(w.charts()->rdp()->curveIds().contains(QStringLiteral("rdp")));
    QVERIFY(w.charts()->tradeoff()->curveIds().contains(QStringLiteral("tradeoff:gdp")));
    QVERIFY(w.accountantTable()->rowCount() >= 7);
    QVERIFY(w.lastAnalytics()->computeMilliseconds < 1000);
  }

  void eachKnobMovesItsSeries_data() {
    QTest::addColumn<int>("knob");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("chart");
    QTest::addColumn<QString>("curve");
    QTest::addColumn<bool>("greyedFlips");
    QTest::newRow("n moves rdp") << int(Knob::kN) << 30000.0 << "epsilon" << "rdp" << false;
    QTest::newRow("m moves rdp") << int(Knob::kM) << 512.0 << "epsilon" << "rdp" << false;
    QTest::newRow("K moves rdp") << int(Knob::kK) << 1000.0 << "epsilon" << "rdp" << false;
    QTest::newRow("σ moves rdp") << int(Knob::kSigma) << 2.0 << "epsilon" << "rdp" << false;
    QTest::newRow("η moves sgld") << int(Knob::kEta) << 0.3 << "epsilon" << "sgld" << false;
    QTest::newRow("δ moves rdp") << int(Knob::kDelta) << 1e-8 << "epsilon" << "rdp" << false;
    QTest::newRow("L moves sgmcmc") << int(Knob::kL) << 3.0 << "epsilon" << "sgmcmc" << false;
    QTest::newRow("λ moves sgld") << int(Knob::kLambda) << 0.5 << "epsilon" << "sgld" << false;
    QTest::newRow("β greys sgld (η ≥ 1/β)") << int(Knob::kBeta) << 50.0 << "epsilon" << "sgld" << true;
    QTest::newRow("w moves cyclic") << int(Knob::kW) << 0.5 << "epsilon" << "cyclic" << false;
    QTest::newRow("M greys cyclic (η > 1/(M+w))") << int(Knob::kCurvatureM) << 50.0 << "epsilon" << "cyclic" << true;
    QTest::newRow("D moves the bounded-domain cyclic bound") << int(Knob::kD) << 1.0 << "epsilon" << "cyclic:bounded-domain" << false;
    QTest::newRow("α moves the RDP marker") << int(Knob::kAlpha) << 32.0 << "rdp" << "" << false;
  }
  void eachKnobMovesItsSeries() {
    QFETCH(int, knob);
    QFETCH(double, value);
    QFETCH(QString, chart);
    QFETCH(QString, curve);
    QFETCH(bool, greyedFlips);
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    w.analyticsJob()->waitForIdle();
    ChartPanel* panel = chart == QLatin1String("rdp") ? w.charts()->rdp() : w.charts()->epsilon();
    const QVector<QPointF> before = panel->curvePoints(curve);
    const bool greyBefore = panel->curveGreyed(curve);
    const auto markerBefore = panel->marker();
    // Through the widget, as a user would: type into the knob's entry and press Enter.
    KnobWidget* widget = w.parameterPanel()->knobWidget(static_cast<Knob>(knob));
    widget->entry()->setFocus();
    widget->entry()->setText(QString::number(value, 'g', 10));
    QTest::keyClick(widget->entry(), Qt::Key_Return);
    QVERIFY(waitAnalytics(w, spy));
    QCOMPARE(knobValue(w.model()->params(), static_cast<Knob>(knob)), value);
    if (curve.isEmpty()) {
      QVERIFY(panel->marker() != markerBefore);
      QCOMPARE(*panel->marker(), value);
    } else if (greyedFlips) {
      QVERIFY(panel->curveGreyed(curve) != greyBefore);
    } else {
      QVERIFY2(panel->curvePoints(curve) != before, qPrintable(curve));
    }
  }

  void keyboardStepsTheSlider() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    QSlider* slider = w.parameterPanel()->knobWidget(Knob::kSigma)->slider();
    const double before = w.model()->params().sigma;
    slider->setFocus();
    QTest::keyClick(slider, Qt::Key_PageUp);
    QVERIFY(w.model()->params().sigma > before);
    QTest::keyClick(slider, Qt::Key_Home);
    QCOMPARE(w.model()->params().sigma, knobInfo(Knob::kSigma).min);
    QCOMPARE(w.model()->undoStack()->count(), 2);
  }

  // Results arriving in quick succession (a drag) are drawn as drafts; once they settle, the
  // charts are smooth again. A lone change is smooth at once.
  void streamingChangesDrawDraftsThenSettleSmooth() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    QTest::qWait(400);
    w.model()->setKnob(Knob::kSigma, 1.2);
    QVERIFY(waitAnalytics(w, spy));
    QVERIFY(!w.charts()->epsilon()->draftDrawing());
    QElapsedTimer between;
    between.start();
    w.model()->setKnob(Knob::kSigma, 1.3);
    QVERIFY(waitAnalytics(w, spy));
    if (between.elapsed() > 100) QSKIP("this build computes too slowly for two results to count as streaming (sanitizers)");
    for (ChartPanel* chart : w.charts()->all()) QVERIFY(chart->draftDrawing());
    QTRY_VERIFY_WITH_TIMEOUT(!w.charts()->epsilon()->draftDrawing(), 2000);
    for (ChartPanel* chart : w.charts()->all()) QVERIFY(!chart->draftDrawing());
  }

  void invalidInputShowsTheMessageAndKeepsChartsFinite() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    w.analyticsJob()->waitForIdle();
    const QVector<QPointF> before = points(w.charts()->epsilon(), "rdp");
    KnobWidget* m = w.parameterPanel()->knobWidget(Knob::kM);
    m->entry()->setFocus();
    m->entry()->setText(QStringLiteral("70000"));
    QTest::keyClick(m->entry(), Qt::Key_Return);
    QCoreApplication::processEvents();
    QLabel* message = w.parameterPanel()->messageLabel();
    QVERIFY(message->isVisibleTo(&w));
    QVERIFY(message->text().contains(QStringLiteral("exceeds n")));
    QVERIFY(w.charts()->epsilon()->message().contains(QStringLiteral("last valid")));
    QTest::qWait(200);
    QCOMPARE(points(w.charts()->epsilon(), "rdp"), before);  // last valid state kept
    // Garbage in a typed entry is refused on the spot, nothing changes.
    KnobWidget* sigma = w.parameterPanel()->knobWidget(Knob::kSigma);
    sigma->entry()->setFocus();
    sigma->entry()->setText(QStringLiteral("abc"));
    QTest::keyClick(sigma->entry(), Qt::Key_Return);
    QCOMPARE(w.model()->params().sigma, Params{}.sigma);
    // Undo restores the valid value and the charts come back.
    w.model()->undoStack()->undo();
    QVERIFY(w.model()->isValid());
    QVERIFY(!message->isVisibleTo(&w));
    QVERIFY(w.charts()->epsilon()->message().isEmpty());
  }

  void undoRestoresValues() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    w.model()->setKnob(Knob::kSigma, 3.0);
    w.model()->setKnob(Knob::kDelta, 1e-7);
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->params().delta, 1e-5);
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->params().sigma, 1.1);
    QVERIFY(waitAnalytics(w, spy));
    QCOMPARE(w.lastAnalytics()->params.sigma, 1.1);
  }

  void presetsSetEveryKnob() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    const std::vector<Preset> presets = builtinPresets();
    QVERIFY(presets.size() >= 8);
    for (const Preset& p : presets) {
      QVERIFY(w.loadPreset(p));
      for (const KnobInfo& info : knobInfos()) {
        QCOMPARE(knobValue(w.model()->params(), info.knob), knobValue(p.params, info.knob));
      }
      QCOMPARE(w.model()->params().schedule, p.params.schedule);
    }
    // A saved preset loads back, and lands in the injected QSettings' recent files.
    const QString path = m_dir.filePath(QStringLiteral("mine.json"));
    QVERIFY(w.savePresetFile(path, QStringLiteral("mine")));
    w.model()->setKnob(Knob::kSigma, 7.0);
    QVERIFY(w.loadPresetFile(path));
    QCOMPARE(w.model()->params().sigma, presets.back().params.sigma);
    QVERIFY(w.recentFiles().contains(path));
    QVERIFY(m_settings->value(QStringLiteral("recentFiles")).toStringList().contains(path));
    // A broken file is refused with the reason, nothing changes.
    QFile broken(m_dir.filePath(QStringLiteral("broken.json")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("{\"format\": \"dpexplorer-preset\", \"version\": 1, \"name\": \"x\", \"params\": {\"sigma\": -1}}");
    broken.close();
    const double sigma = w.model()->params().sigma;
    QVERIFY(!w.loadPresetFile(broken.fileName()));
    QCOMPARE(w.model()->params().sigma, sigma);
  }

  void exportsWriteFiles() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    QSignalSpy pld(&w, &MainWindow::pldApplied);
    w.resize(1400, 900);
    w.show();
    QVERIFY(spy.wait(10000));
    QVERIFY(pld.wait(30000));
    for (const QString& name : {QStringLiteral("e.png"), QStringLiteral("e.svg")}) {
      const QString path = m_dir.filePath(name);
      QVERIFY(w.exportChart(w.charts()->epsilon(), path));
      QVERIFY(QFile(path).size() > 2000);
    }
    const QString csv = m_dir.filePath(QStringLiteral("curves.csv"));
    const QString json = m_dir.filePath(QStringLiteral("curves.json"));
    QVERIFY(w.exportCurves(csv));
    QVERIFY(w.exportCurves(json));
    QVERIFY(QFile(csv).size() > 10000);
    QVERIFY(QFile(json).size() > 10000);
    const QString html = m_dir.filePath(QStringLiteral("report.html"));
    const QString pdf = m_dir.filePath(QStringLiteral("report.pdf"));
    QVERIFY(w.exportReport(html));
    QVERIFY(w.exportReport(pdf));
    QFile report(html);
    QVERIFY(report.open(QIODevice::ReadOnly));
    const QByteArray text = report.readAll();
    QVERIFY(text.contains("sgld"));
    QVERIFY(text.contains("data:image/png;base64"));
    QVERIFY(text.contains("pld"));
    QVERIFY(QFile(pdf).size() > 5000);
    QVERIFY(w.lastPld()->epsilon.has_value());
    QVERIFY(w.charts()->epsilon()->curveIds().contains(QStringLiteral("pld")));
    QVERIFY(w.charts()->tradeoff()->curveIds().contains(QStringLiteral("tradeoff:pld")));
  }

  void calibrationAppliesSigma() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(spy.wait(10000));
    CalibratePanel* c = w.calibratePanel();
    QSignalSpy done(c, &CalibratePanel::calibrated);
    c->calibrate();
    QVERIFY(done.wait(60000));
    auto* apply = c->table()->findChild<QPushButton*>(QStringLiteral("apply_rdp"));
    QVERIFY(apply);
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(waitAnalytics(w, spy));
    double rdp = -1;
    for (const auto& row : w.lastAnalytics()->accountants) {
      if (row.id == "rdp") rdp = row.epsilon->epsilon;
    }
    QVERIFY(rdp <= 1.0 && rdp > 0.99);
  }

  void trainerPanelTrainsDigits() {
    MainWindow w(m_settings.get());
    w.show();
    TrainerPanel* t = w.trainerPanel();
    t->setSource(QStringLiteral("builtin:digits"));
    for (auto m : dpx::core::training::allMechanisms()) t->mechanismBox(m)->setChecked(m == dpx::core::training::Mechanism::kDpSgd);
    t->epochsBox()->setValue(3);
    QSignalSpy finished(t, &TrainerPanel::trainingFinished);
    QTest::mouseClick(t->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(60000));
    const QVector<QPointF> acc = t->accuracyChart()->curvePoints(QStringLiteral("dp-sgd:test"));
    QCOMPARE(acc.size(), 3);
    QVERIFY(acc.back().y() > 0.5);
    QCOMPARE(t->epsilonChart()->curvePoints(QStringLiteral("dp-sgd")).size(), 3);
    QVERIFY(t->epsilonChart()->curvePoints(QStringLiteral("dp-sgd")).back().y() <= 3.0);  // target ε mode
    QCOMPARE(t->resultsTable()->rowCount(), 1);
  }

  void settingsRememberTheWindow() {
    {
      MainWindow w(m_settings.get());
      w.resize(1700, 1200);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      w.close();
    }
    QVERIFY(m_settings->contains(QStringLiteral("window/geometry")));
    MainWindow again(m_settings.get());
    QCOMPARE(again.size(), QSize(1700, 1200));
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
