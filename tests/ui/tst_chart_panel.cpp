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
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a"), points.mid(0, 10), CurveStyle{});
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
