// The explorer window, offscreen: every knob moves the series it should, invalid input shows
// the message and keeps the charts finite, undo restores values, presets set every knob,
// exports write files, the trainer panel trains DP-SGD on digits and its accuracy series grows.
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <cmath>

#include "accountant_table.h"
#include "calibrate_panel.h"
#include "charts/chart_legend.h"
#include "charts/chart_panel.h"
#include "charts/explorer_charts.h"
#include "compute/analytics.h"
#include "knob_widget.h"
#include "main_window.h"
#include "parameter_panel.h"
#include "pixel_util.h"
#include "presets.h"
#include "test_util.h"
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

// Appends "pld" and "stepsize" to `order` as those views arrive on screen.
void recordSlowViewOrder(MainWindow& w, QStringList& order) {
  QObject::connect(&w, &MainWindow::pldApplied, &w, [&order] { order << QStringLiteral("pld"); });
  QObject::connect(&w, &MainWindow::stepsizeApplied, &w, [&order] { order << QStringLiteral("stepsize"); });
}

// Shows the window, waits for its first analytics and lets the draft window pass, so the next
// change counts as a lone one.
bool showAndSettle(MainWindow& w) {
  QSignalSpy spy(&w, &MainWindow::analyticsApplied);
  w.show();
  if (!spy.wait(10000)) return false;
  w.analyticsJob()->waitForIdle();
  QTest::qWait(400);
  return true;
}

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
  }

  void eachKnobMovesItsSeries_data() {
    QTest::addColumn<int>("knob");
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("chart");
    QTest::addColumn<QString>("curve");
    QTest::addColumn<bool>("greyedFlips");
    QTest::newRow("n moves rdp") << int(Knob::kN) << 30000.0 << "epsilon"
                                 << "rdp" << false;
    QTest::newRow("m moves rdp") << int(Knob::kM) << 512.0 << "epsilon"
                                 << "rdp" << false;
    QTest::newRow("K moves rdp") << int(Knob::kK) << 1000.0 << "epsilon"
                                 << "rdp" << false;
    QTest::newRow("σ moves rdp") << int(Knob::kSigma) << 2.0 << "epsilon"
                                 << "rdp" << false;
    QTest::newRow("η moves sgld") << int(Knob::kEta) << 0.3 << "epsilon"
                                  << "sgld" << false;
    QTest::newRow("δ moves rdp") << int(Knob::kDelta) << 1e-8 << "epsilon"
                                 << "rdp" << false;
    QTest::newRow("L moves sgmcmc") << int(Knob::kL) << 3.0 << "epsilon"
                                    << "sgmcmc" << false;
    QTest::newRow("λ moves sgld") << int(Knob::kLambda) << 0.5 << "epsilon"
                                  << "sgld" << false;
    QTest::newRow("β greys sgld (η ≥ 1/β)") << int(Knob::kBeta) << 50.0 << "epsilon"
                                            << "sgld" << true;
    QTest::newRow("w moves cyclic") << int(Knob::kW) << 0.5 << "epsilon"
                                    << "cyclic" << false;
    QTest::newRow("M greys cyclic (η > 1/(M+w))") << int(Knob::kCurvatureM) << 50.0 << "epsilon"
                                                  << "cyclic" << true;
    QTest::newRow("D moves the bounded-domain cyclic bound") << int(Knob::kD) << 1.0 << "epsilon"
                                                             << "cyclic:bounded-domain" << false;
    QTest::newRow("α moves the RDP marker") << int(Knob::kAlpha) << 32.0 << "rdp"
                                            << "" << false;
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

  // Changes in quick succession (a drag) are drawn as drafts; once they settle, the charts are
  // smooth again. A lone change is smooth at once. Whether a change streams is decided when it is
  // made, so this holds on a slow (sanitizer) build too.
  void streamingChangesDrawDraftsThenSettleSmooth() {
    MainWindow w(m_settings.get());
    QVERIFY(showAndSettle(w));
    std::vector<std::pair<double, qsizetype>> applied;  // σ shown, how many charts draw drafts
    connect(&w, &MainWindow::analyticsApplied, &w, [&] {
      const QList<ChartPanel*> charts = w.charts()->all();
      applied.emplace_back(
          w.lastAnalytics()->params.sigma,
          std::count_if(charts.begin(), charts.end(), [](ChartPanel* c) { return c->draftDrawing(); }));
    });
    w.model()->setKnob(Knob::kSigma, 1.2);
    QTRY_VERIFY_WITH_TIMEOUT(!applied.empty() && applied.back().first == 1.2, 10000);
    QVERIFY2(applied.back().second == 0, "a lone change is drawn smooth");
    QTest::qWait(400);
    applied.clear();
    w.model()->setKnob(Knob::kSigma, 1.3);
    w.model()->setKnob(Knob::kSigma, 1.4);
    QTRY_VERIFY_WITH_TIMEOUT(!applied.empty() && applied.back().first == 1.4, 10000);
    QVERIFY2(applied.back().second == w.charts()->all().size(),
             "the second of two quick changes is drawn as a draft, on every chart");
    QTRY_VERIFY_WITH_TIMEOUT(!w.charts()->epsilon()->draftDrawing(), 2000);
    for (ChartPanel* chart : w.charts()->all()) QVERIFY(!chart->draftDrawing());
  }

  // A drag of a held slider computes drafts; a draft is coarse only in its curves' x grid: the
  // table it shows is the settled table, and once the values rest the full curves replace it
  // (and the charts turn smooth). Quick changes that are no drag keep their full curves.
  void draftsAreCoarseCurvesAndTheSettledViewIsFull() {
    MainWindow w(m_settings.get());
    QVERIFY(showAndSettle(w));
    std::vector<std::shared_ptr<const AnalyticsSnapshot>> shown;
    connect(&w, &MainWindow::analyticsApplied, &w, [&] { shown.push_back(w.lastAnalytics()); });
    w.model()->setKnob(Knob::kSigma, 1.2);
    w.model()->setKnob(Knob::kSigma, 1.25);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.empty() && shown.back()->params.sigma == 1.25, 10000);
    for (const auto& s : shown) QVERIFY2(!s->draft, "quick changes without a drag keep their full curves");
    QTest::qWait(400);
    shown.clear();
    const int drag = w.model()->beginDrag();
    w.model()->setKnob(Knob::kSigma, 1.3, drag);
    w.model()->setKnob(Knob::kSigma, 1.4, drag);
    QTRY_VERIFY_WITH_TIMEOUT(!shown.empty() && shown.back()->params.sigma == 1.4 && !shown.back()->draft, 10000);
    QVERIFY(!w.charts()->epsilon()->draftDrawing());
    const auto draft = std::find_if(shown.begin(), shown.end(), [](const auto& s) { return s->draft; });
    QVERIFY2(draft != shown.end(), "the second of two quick changes of a drag is computed as a draft");
    const AnalyticsSnapshot& coarse = **draft;
    const AnalyticsSnapshot& full = *shown.back();
    QCOMPARE(coarse.params.sigma, 1.4);
    QCOMPARE(coarse.accountants.size(), full.accountants.size());
    for (std::size_t i = 0; i < full.accountants.size(); ++i) {
      QCOMPARE(coarse.accountants[i].id, full.accountants[i].id);
      QCOMPARE(coarse.accountants[i].epsilon.has_value(), full.accountants[i].epsilon.has_value());
      if (full.accountants[i].epsilon) {
        QCOMPARE(coarse.accountants[i].epsilon->epsilon, full.accountants[i].epsilon->epsilon);  // exact, not close
      }
    }
    const auto curve = [](const AnalyticsSnapshot& s, const std::string& id) {
      return *std::find_if(s.epsilonCurves.begin(), s.epsilonCurves.end(),
                           [&](const PlotCurve& c) { return c.id == id; });
    };
    for (const std::string id : {"rdp", "heuristic-last-iterate"}) {
      const PlotCurve a = curve(coarse, id);
      const PlotCurve b = curve(full, id);
      QVERIFY2(a.x.size() < b.x.size(), id.c_str());
      // Every draft point is a value of the settled curve where their K meet.
      for (std::size_t j = 0; j < a.x.size(); ++j) {
        const auto at = std::find(b.x.begin(), b.x.end(), a.x[j]);
        if (at != b.x.end()) QCOMPARE(a.y[j], b.y[static_cast<std::size_t>(at - b.x.begin())]);
      }
    }
    // The RDP chart: a subset of the orders, each value the settled one.
    const auto rdpCurve = [](const AnalyticsSnapshot& s) {
      return *std::find_if(s.rdpCurves.begin(), s.rdpCurves.end(), [](const PlotCurve& c) { return c.id == "rdp"; });
    };
    const PlotCurve coarseRdp = rdpCurve(coarse);
    const PlotCurve fullRdp = rdpCurve(full);
    QVERIFY(coarseRdp.x.size() * 4 < fullRdp.x.size());
    QCOMPARE(coarseRdp.x.back(), fullRdp.x.back());
    for (std::size_t j = 0; j < coarseRdp.x.size(); ++j) {
      const auto at = std::find(fullRdp.x.begin(), fullRdp.x.end(), coarseRdp.x[j]);
      QVERIFY(at != fullRdp.x.end());
      QCOMPARE(coarseRdp.y[j], fullRdp.y[static_cast<std::size_t>(at - fullRdp.x.begin())]);
    }
    QCOMPARE(points(w.charts()->rdp(), "rdp").size(), qsizetype(fullRdp.x.size()));
    QVERIFY(points(w.charts()->epsilon(), "rdp").size() >= kEpsilonCurvePoints * 3 / 4);
    QVERIFY(points(w.charts()->tradeoff(), "fed:rdp").size() == kTradeoffPoints);
  }

  // What is on screen, not only the series data: after a knob moves through its slider, the
  // pixels of the rdp curve (its colour, inside the plot area) move the way ε moves. The ε axis
  // is fixed so a position on screen is a value.
  void sliderMovesTheDrawnCurveTheRightWay_data() {
    QTest::addColumn<int>("knob");
    QTest::addColumn<int>("pageSteps");
    QTest::addColumn<int>("direction");  // +1: ε rises, so the curve moves up (smaller rows)
    QTest::newRow("σ up: rdp ε falls, curve moves down") << int(Knob::kSigma) << 3 << -1;
    QTest::newRow("σ down: rdp ε rises, curve moves up") << int(Knob::kSigma) << -3 << +1;
    QTest::newRow("n up: rdp ε falls") << int(Knob::kN) << 3 << -1;
    QTest::newRow("δ down: rdp ε rises") << int(Knob::kDelta) << -4 << +1;
    QTest::newRow("m up: rdp ε rises") << int(Knob::kM) << 3 << +1;
  }
  void sliderMovesTheDrawnCurveTheRightWay() {
    QFETCH(int, knob);
    QFETCH(int, pageSteps);
    QFETCH(int, direction);
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.resize(1500, 950);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!spy.isEmpty() || spy.wait(10000));
    ChartPanel* chart = w.charts()->epsilon();
    chart->setFixedRange(Qt::Vertical, std::make_pair(1e-3, 1e4));
    chart->refreshAxes();
    w.analyticsJob()->waitForIdle();
    QTRY_VERIFY_WITH_TIMEOUT(!chart->draftDrawing(), 2000);
    const QColor rdp = QColor::fromRgb(accountantColor("rdp"));
    const QImage before = chart->grabView();
    QVERIFY2(dpx::test::findColor(before, chart->plotRect(), rdp, 10).count > 50, "the rdp curve is drawn");
    QSlider* slider = w.parameterPanel()->knobWidget(static_cast<Knob>(knob))->slider();
    slider->setFocus();
    for (int i = 0; i < std::abs(pageSteps); ++i)
      QTest::keyClick(slider, pageSteps > 0 ? Qt::Key_PageUp : Qt::Key_PageDown);
    QTRY_VERIFY_WITH_TIMEOUT(w.lastAnalytics()->params.sigma == w.model()->params().sigma &&
                                 w.lastAnalytics()->params.n == w.model()->params().n &&
                                 w.lastAnalytics()->params.m == w.model()->params().m &&
                                 w.lastAnalytics()->params.delta == w.model()->params().delta,
                             10000);
    QTRY_VERIFY_WITH_TIMEOUT(!chart->draftDrawing(), 2000);
    QCoreApplication::processEvents();
    const std::optional<double> moved =
        dpx::test::medianColumnShift(before, chart->grabView(), chart->plotRect(), rdp, 10);
    if (qEnvironmentVariableIsSet("DPX_DEBUG_PIXELS")) {
      before.save(QStringLiteral("/tmp/before_%1.png").arg(knob));
      chart->grabView().save(QStringLiteral("/tmp/after_%1.png").arg(knob));
      qInfo() << w.model()->params().delta << w.model()->params().m << w.model()->params().sigma;
    }
    QVERIFY2(moved, "the rdp curve is drawn in enough columns before and after");
    QVERIFY2(direction > 0 ? *moved < -2.0 : *moved > 2.0,
             qPrintable(QStringLiteral("the rdp curve moved by a median %1 px per column").arg(*moved)));
  }

  // A drag through the real slider: press on the handle, move, release — the value follows and
  // the whole drag is one undo step, which undo reverts.
  void sliderDragIsOneUndoStep() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!spy.isEmpty() || spy.wait(10000));
    QSlider* slider = w.parameterPanel()->knobWidget(Knob::kSigma)->slider();
    QVERIFY(QTest::qWaitForWindowExposed(slider->window()));
    const double before = w.model()->params().sigma;
    const int steps = w.model()->undoStack()->count();
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    option.subControls = QStyle::SC_SliderGroove | QStyle::SC_SliderHandle;
    const QRect handle = slider->style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider);
    QPoint at = handle.center();
    QTest::mousePress(slider, Qt::LeftButton, Qt::NoModifier, at);
    QVERIFY(slider->isSliderDown());
    for (int i = 0; i < 12; ++i) {
      at += QPoint(6, 0);
      QMouseEvent move(QEvent::MouseMove, at, slider->mapToGlobal(at), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
      QCoreApplication::sendEvent(slider, &move);
    }
    QTest::mouseRelease(slider, Qt::LeftButton, Qt::NoModifier, at);
    QVERIFY(!slider->isSliderDown());
    QVERIFY2(w.model()->params().sigma > before * 1.05,
             qPrintable(QStringLiteral("σ %1 → %2").arg(before).arg(w.model()->params().sigma)));
    QCOMPARE(w.model()->undoStack()->count(), steps + 1);
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->params().sigma, before);
  }

  // α in every view: the table's α column, the trade-off curves f_α of the RDP accountants
  // (dotted, grouped with their f_{ε,δ}), and the "fixed α" toggle of the ε chart.
  void alphaReachesEveryView() {
    MainWindow w(m_settings.get());
    QSignalSpy spy(&w, &MainWindow::analyticsApplied);
    w.show();
    QVERIFY(!spy.isEmpty() || spy.wait(10000));
    w.analyticsJob()->waitForIdle();
    QCoreApplication::processEvents();
    const auto rdpRow = [&]() -> const AccountantSummary* {
      for (const AccountantSummary& row : w.lastAnalytics()->accountants) {
        if (row.id == "rdp") return &row;
      }
      return nullptr;
    };
    QVERIFY(rdpRow() && rdpRow()->rdpAtAlpha && rdpRow()->epsilonAtAlpha);
    // At one order the conversion can only be worse than at the best one.
    QVERIFY(rdpRow()->epsilonAtAlpha->epsilon >= rdpRow()->epsilon->epsilon);
    QVERIFY(w.accountantTable()->horizontalHeaderItem(4)->text().contains(QStringLiteral("α = 8")));
    for (const char* id : {"renyi:rdp", "renyi:sgld", "renyi:cyclic", "renyi:outpert", "renyi:sgmcmc"}) {
      QVERIFY2(w.charts()->tradeoff()->curveIds().contains(QLatin1String(id)), id);
    }
    QVERIFY(!w.charts()->tradeoff()->curveIds().contains(QStringLiteral("renyi:gdp")));  // not an RDP analysis
    // f_α lies below the envelope f_{ε,δ} of the same accountant nowhere above 1 − x.
    const QVector<QPointF> slice = w.charts()->tradeoff()->curvePoints(QStringLiteral("renyi:rdp"));
    QVERIFY(slice.size() > 100);
    for (const QPointF& p : slice) QVERIFY(p.y() >= 0.0 && p.y() <= 1.0 - p.x() + 1e-12);
    // The α knob moves f_α and the table column.
    const double before = rdpRow()->epsilonAtAlpha->epsilon;
    w.model()->setKnob(Knob::kAlpha, 32.0);
    QVERIFY(waitAnalytics(w, spy));
    QVERIFY(rdpRow()->epsilonAtAlpha->epsilon != before);
    QVERIFY(w.charts()->tradeoff()->curvePoints(QStringLiteral("renyi:rdp")) != slice);
    // Fixed α: the RDP accountants' ε curves convert at α alone, never below the optimum.
    const QVector<QPointF> optimal = points(w.charts()->epsilon(), "rdp");
    auto* toggle = w.findChild<QCheckBox*>(QStringLiteral("fixedAlphaToggle"));
    QVERIFY(toggle);
    toggle->click();
    QVERIFY(waitAnalytics(w, spy));
    QVERIFY(w.lastAnalytics()->fixedAlpha);
    const QVector<QPointF> fixed = points(w.charts()->epsilon(), "rdp");
    QCOMPARE(fixed.size(), optimal.size());
    bool someWorse = false;
    for (qsizetype i = 0; i < fixed.size(); ++i) {
      QVERIFY(fixed[i].y() >= optimal[i].y() * (1 - 1e-12));
      someWorse = someWorse || fixed[i].y() > optimal[i].y() * 1.01;
    }
    QVERIFY(someWorse);
  }

  // The step-size chart draws the η that meet a target for sgld and cyclic too, over
  // [ε/20, 20ε] around the calibration target. It is computed after the exact view's Poisson
  // bracket, which would otherwise share the two cores with it.
  void stepsizeChartCoversEveryEtaDependentAnalysis() {
    MainWindow w(m_settings.get());
    QStringList order;
    recordSlowViewOrder(w, order);
    QSignalSpy stepsize(&w, &MainWindow::stepsizeApplied);
    w.show();
    QVERIFY(stepsize.wait(120000));
    QCOMPARE(order, QStringList({QStringLiteral("pld"), QStringLiteral("stepsize")}));
    ChartPanel* chart = w.charts()->stepsize();
    for (const char* id :
         {"exact_fixed", "exact_decreasing", "li_fixed", "li_decreasing", "wang", "sgld", "cyclic", "current"}) {
      QVERIFY2(chart->curveIds().contains(QLatin1String(id)), id);
    }
    const double target = w.calibratePanel()->targetEpsilon();
    const QVector<QPointF> exact = chart->curvePoints(QStringLiteral("exact_fixed"));
    QVERIFY(!exact.isEmpty());
    DPX_COMPARE_REL(exact.front().x(), target / 20.0, 1e-9);
    DPX_COMPARE_REL(exact.back().x(), target * 20.0, 1e-9);
    QVERIFY(chart->marker() && *chart->marker() == target);
  }

  // Turning the exact view off while it computes lets the step-size job that waits for it go.
  void stepsizeStartsWhenTheExactViewIsTurnedOff() {
    MainWindow w(m_settings.get());
    QStringList order;
    recordSlowViewOrder(w, order);
    QSignalSpy stepsize(&w, &MainWindow::stepsizeApplied);
    w.show();
    auto* exact = w.findChild<QCheckBox*>(QStringLiteral("exactToggle"));
    QVERIFY(exact);
    QTRY_VERIFY_WITH_TIMEOUT(w.pldJob()->busy(), 10000);
    QVERIFY(!w.stepsizeJob()->busy());  // it waits for the exact view
    exact->setChecked(false);
    QVERIFY(stepsize.wait(120000));
    QCOMPARE(order, QStringList({QStringLiteral("stepsize")}));
    QVERIFY(!w.lastPld());
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

  // Every knob field shows its whole value after any preset, at both window sizes users have
  // (before: "0.2" for η = 0.25, "1." for σ = 1.3, "351" for K = 3 516).
  void knobFieldsShowTheirWholeValue() {
    for (const QSize size : {QSize(1600, 1000), QSize(1366, 768)}) {
      MainWindow w(m_settings.get());
      w.resize(size);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      for (const Preset& preset : builtinPresets()) {
        QVERIFY(w.loadPreset(preset));
        // n released from data of another size: n's row then carries "what-if (data: 1438)".
        w.model()->setDataSize(w.model()->trainer().source, 1438);
        w.model()->setNFromData(false);
        QCoreApplication::processEvents();
        for (int k = 0; k <= static_cast<int>(Knob::kD); ++k) {
          QLineEdit* entry = w.parameterPanel()->knobWidget(static_cast<Knob>(k))->entry();
          const int needed = entry->fontMetrics().horizontalAdvance(entry->text()) + 8;
          // Shown means wide enough and inside the knobs' viewport (not cut at its right edge).
          QWidget* viewport = w.parameterPanel()->parentWidget();
          // Across only: a field scrolled out of view vertically is a scroll away, not cut.
          const int left = entry->mapTo(viewport, QPoint(0, 0)).x();
          const QRect shown = QRect(left, 0, entry->width(), 1).intersected(QRect(0, 0, viewport->width(), 1));
          QVERIFY2(shown.width() >= needed, qPrintable(QStringLiteral("%1 × %2, preset %3: '%4' needs %5 px, shows %6")
                                                           .arg(size.width())
                                                           .arg(size.height())
                                                           .arg(preset.id, entry->text())
                                                           .arg(needed)
                                                           .arg(shown.width())));
        }
      }
    }
  }

  // Every curve with a legend entry has it on screen, at both window sizes, with the most entries
  // the ε chart has: the exact bracket, the shuffle lower bound and a pinned configuration (before,
  // Qt's legend dropped the entries below its height: the red shuffle bound had none).
  void everyLegendEntryIsShown() {
    for (const QSize size : {QSize(1600, 1000), QSize(1366, 768)}) {
      MainWindow w(m_settings.get());
      w.resize(size);
      QSignalSpy pld(&w, &MainWindow::shuffleApplied);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QVERIFY(pld.wait(60000));
      w.pinConfiguration(w.model()->params());
      w.model()->setKnob(Knob::kSigma, 2.0);
      pld.clear();
      QVERIFY(pld.wait(60000));
      QTRY_VERIFY_WITH_TIMEOUT(!w.charts()->stepsize()->curveIds().isEmpty() && !w.stepsizeJob()->busy(), 60000);
      QCoreApplication::processEvents();
      for (ChartPanel* chart : w.charts()->all()) {
        QVERIFY(chart->legend());
        // Every curve with a legend entry (the pinned ghosts share one).
        QStringList expected;
        for (const QString& id : chart->curveIds()) {
          if (chart->inLegend(id)) expected << chart->curveLabel(id);
        }
        QVERIFY2(!expected.isEmpty(),
                 qPrintable(chart->title() + QStringLiteral(": ") + chart->curveIds().join(QLatin1Char(','))));
        QCOMPARE(chart->legend()->labels(), expected);
        // Every row reachable (the legend scrolls) and wide enough for its whole label.
        const int rows = static_cast<int>(expected.size());
        const int viewport = chart->legend()->viewport()->width();
        for (int r = 0; r < rows; ++r) {
          QToolButton* row = chart->legend()->row(r);
          QVERIFY2(row->sizeHint().width() <= viewport + 1,
                   qPrintable(QStringLiteral("%1 × %2, %3: '%4' needs %5 px, the legend has %6")
                                  .arg(size.width())
                                  .arg(size.height())
                                  .arg(chart->title(), row->text())
                                  .arg(row->sizeHint().width())
                                  .arg(viewport)));
          // Whole, or elided with the whole label in its tooltip.
          QVERIFY2(row->text() == expected[r] ||
                       (row->text().endsWith(QChar(0x2026)) && row->toolTip().startsWith(expected[r])),
                   qPrintable(row->text() + QStringLiteral(" / ") + expected[r]));
          chart->legend()->ensureWidgetVisible(row);
          const QRect inViewport(row->mapTo(chart->legend()->viewport(), QPoint(0, 0)), row->size());
          QVERIFY(chart->legend()->viewport()->rect().contains(inViewport));
        }
      }
    }
  }

  // The table groups its rows — upper bounds that apply, those whose assumptions fail, lower
  // bounds, estimates — and every row sits under the title of its kind.
  void accountantTableIsGrouped() {
    MainWindow w(m_settings.get());
    QSignalSpy shuffle(&w, &MainWindow::shuffleApplied);
    w.show();
    QVERIFY(shuffle.wait(60000));
    w.model()->setSampling(Sampling::kShuffle);  // Poisson analyses then do not apply
    shuffle.clear();
    QVERIFY(shuffle.wait(60000));
    AccountantTable* table = w.accountantTable();
    const QStringList titles = table->groupTitles();
    using Group = AccountantTable::Group;
    QVERIFY2(titles.size() >= 3, qPrintable(titles.join(QStringLiteral(" | "))));
    QString under;
    int rows = 0;
    for (int r = 0; r < table->rowCount(); ++r) {
      if (table->isGroupRow(r)) {
        under = table->item(r, 0)->text();
        continue;
      }
      ++rows;
      const QString kind = table->item(r, 2) ? table->item(r, 2)->text() : QString();
      const QString assumptions = table->item(r, 6) ? table->item(r, 6)->text() : QString();
      const QString name = table->item(r, 0)->text();
      if (kind == QLatin1String("estimate")) {
        QCOMPARE(under, AccountantTable::groupTitle(Group::kEstimate));
      } else if (kind == QLatin1String("lower bound")) {
        QCOMPARE(under, AccountantTable::groupTitle(Group::kLower));
      } else if (kind == QLatin1String("upper bound")) {
        const bool holds = assumptions == QLatin1String("all hold");
        QVERIFY2(under == AccountantTable::groupTitle(holds ? Group::kApplies : Group::kDoesNotApply),
                 qPrintable(name + QStringLiteral(" under ") + under + QStringLiteral(": ") + assumptions));
      }
    }
    QCOMPARE(static_cast<int>(table->rowsText().size()), rows);
    QVERIFY(titles.contains(AccountantTable::groupTitle(Group::kDoesNotApply)));
  }

  // A refused value keeps its text, marked, with the reason beside the field until it is fixed;
  // neither the reason nor the combination message moves a knob under the cursor.
  void refusedValuesSayWhyBesideTheField() {
    MainWindow w(m_settings.get());
    w.resize(1366, 768);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    KnobWidget* sigma = w.parameterPanel()->knobWidget(Knob::kSigma);
    KnobWidget* delta = w.parameterPanel()->knobWidget(Knob::kDelta);
    const QPoint deltaAt = delta->mapTo(&w, QPoint(0, 0));
    const double sigmaBefore = w.model()->params().sigma;
    const struct {
      const char* typed;
      const char* reason;
    } refused[] = {{"abc", "not a number"}, {"1e400", "beyond the largest number"}, {"1000", "sigma"}};
    for (const auto& r : refused) {
      sigma->entry()->setFocus();
      sigma->entry()->setText(QString::fromLatin1(r.typed));
      QTest::keyClick(sigma->entry(), Qt::Key_Return);
      QVERIFY2(sigma->reason().contains(QString::fromLatin1(r.reason)), qPrintable(sigma->reason()));
      QCOMPARE(sigma->entry()->text(), QString::fromLatin1(r.typed));
      QCOMPARE(w.model()->params().sigma, sigmaBefore);
      QVERIFY(w.model()->isValid());
      QCOMPARE(delta->mapTo(&w, QPoint(0, 0)), deltaAt);
    }
    sigma->entry()->setText(QStringLiteral("2"));
    QTest::keyClick(sigma->entry(), Qt::Key_Return);
    QVERIFY(sigma->reason().isEmpty());
    QCOMPARE(w.model()->params().sigma, 2.0);
    // An invalid combination: the message appears under the knobs, which stay where they were.
    KnobWidget* m = w.parameterPanel()->knobWidget(Knob::kM);
    m->entry()->setFocus();
    m->entry()->setText(QStringLiteral("70000"));
    QTest::keyClick(m->entry(), Qt::Key_Return);
    QCoreApplication::processEvents();
    QVERIFY(w.parameterPanel()->messageLabel()->isVisibleTo(&w));
    QCOMPARE(delta->mapTo(&w, QPoint(0, 0)), deltaAt);
    w.model()->undoStack()->undo();
    QCoreApplication::processEvents();
    QVERIFY(!w.parameterPanel()->messageLabel()->isVisibleTo(&w));
    QCOMPARE(delta->mapTo(&w, QPoint(0, 0)), deltaAt);
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
    // The exact bracket may land while the analytic curves are awaited: wait() counts only what
    // comes after it is called.
    QVERIFY(!pld.isEmpty() || pld.wait(30000));
    const QString pngPath = m_dir.filePath(QStringLiteral("e.png"));
    const QString svgPath = m_dir.filePath(QStringLiteral("e.svg"));
    QVERIFY(w.exportChart(w.charts()->epsilon(), pngPath));
    QVERIFY(w.exportChart(w.charts()->epsilon(), svgPath));
    // The PNG is a picture of the chart: 1200 wide, 800 of chart over its caption, many colours,
    // the rdp curve's colour in it.
    const QImage png(pngPath);
    QCOMPARE(png.width(), 1200);
    QVERIFY(png.height() > 800);
    QVERIFY(dpx::test::distinctColors(png) >= 16);
    QVERIFY(dpx::test::findColor(png, png.rect(), QColor::fromRgb(accountantColor("rdp")), 10).count > 100);
    QString why;
    QVERIFY2(dpx::test::svgHasShapes(svgPath, 20, &why), qPrintable(why));
    const QString csv = m_dir.filePath(QStringLiteral("curves.csv"));
    const QString json = m_dir.filePath(QStringLiteral("curves.json"));
    QVERIFY(w.exportCurves(csv));
    QVERIFY(w.exportCurves(json));
    // CSV: per chart, `# ` lines of context, then "curve,x,y" rows with finite numbers.
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.count(QStringLiteral("curve,x,y")), w.allCharts().size());
    int rdpRows = 0;
    for (const QString& line : lines) {
      if (!line.startsWith(QLatin1String("\"rdp\","))) continue;
      const QStringList cells = line.split(QLatin1Char(','));
      QCOMPARE(cells.size(), 3);
      QVERIFY(std::isfinite(cells[1].toDouble()) && std::isfinite(cells[2].toDouble()));
      ++rdpRows;
    }
    QVERIFY(rdpRows >= kEpsilonCurvePoints);
    // JSON: every chart, with the ε chart's rdp curve as computed.
    QFile jsonFile(json);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(jsonFile.readAll()).object();
    QCOMPARE(root.value(QStringLiteral("format")).toString(), QStringLiteral("dpexplorer-curves"));
    const QJsonArray charts = root.value(QStringLiteral("charts")).toArray();
    QCOMPARE(charts.size(), w.allCharts().size());
    const QJsonArray epsilonCurves = charts.at(0).toObject().value(QStringLiteral("curves")).toArray();
    bool rdpFound = false;
    for (const QJsonValue& c : epsilonCurves) {
      if (c.toObject().value(QStringLiteral("id")).toString() != QLatin1String("rdp")) continue;
      rdpFound = true;
      QCOMPARE(c.toObject().value(QStringLiteral("x")).toArray().size(), points(w.charts()->epsilon(), "rdp").size());
    }
    QVERIFY(rdpFound);
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
    QVERIFY(dpx::test::pdfHasPages(pdf, 1));
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
    w.tabs()->setCurrentIndex(MainWindow::kTrainingTab);  // loads the digits: n follows them
    QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n == 1438; }, 10000));
    for (auto m : dpx::core::training::allMechanisms())
      t->mechanismBox(m)->setChecked(m == dpx::core::training::Mechanism::kDpSgd);
    w.model()->setKnob(Knob::kM, 64);  // unit-norm rows learn at a large step
    w.model()->setKnob(Knob::kEta, 2.0);
    w.model()->setKnob(Knob::kK, static_cast<double>(*stepsForEpochs(3, 1438, 64)));
    t->targetEntry()->setText(QStringLiteral("3"));
    QTest::keyClick(t->targetEntry(), Qt::Key_Return);
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
