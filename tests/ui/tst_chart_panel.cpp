// Chart panels: sanitised, decimated, replace()-updated curves; log axes with a floor; exports.
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <limits>

#include "charts/chart_panel.h"
#include "pixel_util.h"

using dpx::ui::ChartPanel;
using dpx::ui::CurveStyle;

class TestChartPanel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sanitizeDropsNonFiniteAndFloorsLogAxes() {
    const double inf = std::numeric_limits<double>::infinity();
    const QVector<QPointF> raw{{1, 2}, {2, std::nan("")}, {inf, 1}, {3, 0}, {-1, 5}, {4, 1e-30}};
    const QVector<QPointF> linear = dpx::ui::sanitizePoints(raw, false, false, 1e-7);
    QCOMPARE(linear.size(), 4);
    const QVector<QPointF> logs = dpx::ui::sanitizePoints(raw, true, true, 1e-7);
    QCOMPARE(logs.size(), 3);  // x = −1 has no place on a log axis
    for (const QPointF& p : logs) QVERIFY(p.y() >= 1e-7);
  }

  void decimationKeepsEndsAndExtremes() {
    QVector<QPointF> points;
    for (int i = 0; i < 100000; ++i) points.push_back({double(i), std::sin(i / 1000.0) + (i == 54321 ? 10.0 : 0.0)});
    const QVector<QPointF> d = dpx::ui::decimatePoints(points, 2000);
    QVERIFY(d.size() <= 2000);
    QCOMPARE(d.front(), points.front());
    QCOMPARE(d.back(), points.back());
    bool spike = false;
    for (const QPointF& p : d) spike |= p.y() > 5.0;
    QVERIFY(spike);
  }

  // Every dropped point lies within the tolerance of the segment of kept points around it; the
  // ends are kept; a straight run collapses to its ends, and a kink above the tolerance stays.
  void simplifiedLinesStayWithinTheTolerance() {
    const auto identity = [](const QPointF& p) { return p; };
    QVector<QPointF> wave;
    for (int i = 0; i <= 2000; ++i) wave.push_back({i * 0.5, 40.0 * std::sin(i / 90.0) + 3.0 * std::sin(i / 7.0)});
    for (const double tolerance : {0.05, 0.1, 0.5, 2.0}) {
      const QVector<QPointF> kept = dpx::ui::simplifyPolyline(wave, identity, tolerance);
      QCOMPARE(kept.front(), wave.front());
      QCOMPARE(kept.back(), wave.back());
      QVERIFY(kept.size() < wave.size() / 2);
      qsizetype segment = 0;
      for (const QPointF& p : wave) {
        while (segment + 1 < kept.size() && kept[segment + 1].x() < p.x()) ++segment;
        const QPointF a = kept[segment];
        const QPointF b = kept[std::min(segment + 1, kept.size() - 1)];
        const QPointF d = b - a;
        const QPointF v = p - a;
        const double length = std::hypot(d.x(), d.y());
        const double distance =
            length > 0.0 ? std::fabs(d.x() * v.y() - d.y() * v.x()) / length : std::hypot(v.x(), v.y());
        QVERIFY2(
            distance <= tolerance * (1.0 + 1e-9),
            qPrintable(QStringLiteral("x = %1 is %2 px off at tolerance %3").arg(p.x()).arg(distance).arg(tolerance)));
      }
    }
    QVector<QPointF> line;
    for (int i = 0; i < 500; ++i) line.push_back({double(i), 3.0 * i + 1.0});
    QCOMPARE(dpx::ui::simplifyPolyline(line, identity, 0.1).size(), 2);
    line[250].ry() += 0.5;  // 0.16 from the line: a kink above the tolerance is kept, with its neighbours
    const QVector<QPointF> kinked = dpx::ui::simplifyPolyline(line, identity, 0.1);
    QVERIFY(kinked.contains(line[250]));
    QVERIFY(kinked.size() <= 5);
  }

  // A line is simplified for the plot it is drawn in; a chart enlarged well beyond it draws the
  // line again at its new size, with more of its points.
  void enlargedChartRedrawsItsLines() {
    ChartPanel panel(QStringLiteral("t"), QStringLiteral("x"), QStringLiteral("y"));
    panel.resize(400, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVector<QPointF> wave;
    for (int i = 0; i <= 3000; ++i) wave.push_back({i / 3000.0, std::sin(i / 40.0) + 0.3 * std::sin(i / 9.0)});
    panel.setCurve(QStringLiteral("w"), QStringLiteral("w"), wave, CurveStyle{});
    panel.refreshAxes();
    const int small = panel.drawnPointCount(QStringLiteral("w"));
    QVERIFY(small > 2 && small < wave.size());
    panel.resize(1600, 1200);
    QTRY_VERIFY(panel.drawnPointCount(QStringLiteral("w")) > small);
    QCOMPARE(panel.curvePoints(QStringLiteral("w")).size(), wave.size());
  }

  void curvesUpdateInPlaceAndExport() {
    ChartPanel panel(QStringLiteral("t"), QStringLiteral("x"), QStringLiteral("y"));
    panel.resize(800, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVector<QPointF> points;
    for (int i = 1; i <= 50000; ++i) points.push_back({double(i), 1.0 / i});
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a"), points, CurveStyle{});
    panel.setLogAxis(Qt::Horizontal, true);
    panel.setLogAxis(Qt::Vertical, true);
    panel.refreshAxes();
    QCOMPARE(panel.curvePoints(QStringLiteral("a")).size(), 50000);
    QVERIFY(panel.drawnPointCount(QStringLiteral("a")) <= 2 * 800 * 2);
    // 1/K is a straight line on log-log axes: its two ends draw it. With its points marked, every
    // point is drawn.
    QCOMPARE(panel.drawnPointCount(QStringLiteral("a")), 2);
    CurveStyle marked;
    marked.markers = true;
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a"), points.mid(0, 10), marked);
    QCOMPARE(panel.curveIds().size(), 1);
    QCOMPARE(panel.drawnPointCount(QStringLiteral("a")), 10);
    CurveStyle greyed;
    greyed.greyed = true;
    greyed.tooltip = QStringLiteral("η ≥ 1/β");
    panel.setCurve(QStringLiteral("b"), QStringLiteral("b"), points.mid(0, 10), greyed);
    QVERIFY(panel.curveGreyed(QStringLiteral("b")));
    panel.removeCurvesExcept({QStringLiteral("b")});
    QCOMPARE(panel.curveIds(), QStringList{QStringLiteral("b")});

    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("c.png"));
    const QString svg = dir.filePath(QStringLiteral("c.svg"));
    QVERIFY(panel.exportPng(png));
    QVERIFY(panel.exportSvg(svg));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1200, 800));
    QVERIFY(dpx::test::distinctColors(image) >= 8);
    QVERIFY(dpx::test::inkShare(image) > 0.01);
    QString why;
    QVERIFY2(dpx::test::svgHasShapes(svg, 10, &why), qPrintable(why));
    QVERIFY(panel.curvesCsv().startsWith(QStringLiteral("curve,x,y\n")));
    QCOMPARE(panel.curvesCsv().count(QLatin1Char('\n')), 11);
    QCOMPARE(panel.curvesJson().value(QStringLiteral("curves")).toArray().size(), 1);
  }
};

QTEST_MAIN(TestChartPanel)
#include "tst_chart_panel.moc"
