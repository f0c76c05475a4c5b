// Chart panels: sanitised, decimated, replace()-updated curves; log axes with a floor; exports.
#include <QChartView>
#include <QClipboard>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
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
    QCOMPARE(image.width(), 1200);
    QVERIFY(image.height() > 800);  // the chart, then its caption
    QVERIFY(dpx::test::distinctColors(image) >= 8);
    QVERIFY(dpx::test::inkShare(image) > 0.01);
    QString why;
    QVERIFY2(dpx::test::svgHasShapes(svg, 10, &why), qPrintable(why));
    // `# ` lines of context, then the table as it always was.
    QStringList table = panel.curvesCsv().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY(table.first().startsWith(QLatin1String("# DP Explorer")));
    table.removeIf([](const QString& line) { return line.startsWith(QLatin1String("# ")); });
    QCOMPARE(table.first(), QStringLiteral("curve,x,y"));
    QCOMPARE(table.size(), 11);
    QCOMPARE(panel.curvesJson().value(QStringLiteral("curves")).toArray().size(), 1);
  }

  // A wide, short panel (as in the Privacy tab's grid) exports a full picture: the chart is laid
  // out for the image, so its drawing spans the width and most of the height; the caption below
  // wraps a long command instead of cutting it, and holds what the owner supplied.
  // Mid-drag the axes only grow; an export taken then fits them to the data it draws.
  void exportDuringADraftFitsTheAxes() {
    ChartPanel panel(QStringLiteral("t"), QStringLiteral("x"), QStringLiteral("y"));
    panel.resize(800, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const auto horizontal = [&panel] {
      const QList<QAbstractAxis*> axes = panel.findChild<QChartView*>()->chart()->axes(Qt::Horizontal);
      auto* axis = qobject_cast<QValueAxis*>(axes.value(0));
      return axis ? axis->max() : std::nan("");
    };
    QVector<QPointF> wide{{0, 0}, {1e6, 1}};
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a"), wide, CurveStyle{});
    panel.refreshAxes();
    QVERIFY(horizontal() >= 1e6);
    panel.setDraftDrawing(true);
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a"), QVector<QPointF>{{0, 0}, {1000, 1}}, CurveStyle{});
    panel.refreshAxes();
    QVERIFY(horizontal() >= 1e6);  // the draft's axes only grow
    const QImage image = panel.exportImage();
    QVERIFY(!image.isNull());
    QVERIFY2(horizontal() < 2000, qPrintable(QString::number(horizontal())));
    QVERIFY(panel.draftDrawing());
  }

  void exportFillsTheImageAndWrapsItsCaption() {
    ChartPanel panel(QStringLiteral("ε vs K"), QStringLiteral("K"), QStringLiteral("ε"));
    panel.resize(1000, 280);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVector<QPointF> points;
    for (int i = 1; i <= 200; ++i) points.push_back({double(i), std::sqrt(double(i))});
    CurveStyle style;
    style.color = QColor(200, 30, 30);
    panel.setCurve(QStringLiteral("a"), QStringLiteral("a long legend entry"), points, style);
    panel.refreshAxes();
    QString command = QStringLiteral("dpx epsilon --accountant all");
    panel.setExportContext([&command] {
      return dpx::ui::ExportContext{QStringLiteral("n = 60000 · m = 256 · σ = 1.1 · K = 3516 (15 epochs) · δ = 1e-05"),
                                    QStringLiteral("builtin:digits"), QString(), command};
    });
    const QImage shortCaption = panel.exportImage(QSize(1200, 800));
    for (int i = 0; i < 40; ++i) command += QStringLiteral(" --flag-%1 %2").arg(i).arg(1.0 / (i + 3), 0, 'g', 17);
    const QImage longCaption = panel.exportImage(QSize(1200, 800));
    QCOMPARE(longCaption.width(), 1200);
    QVERIFY(longCaption.height() > shortCaption.height() + 40);  // wrapped onto more lines, not clipped
    // The curve's colour spans most of the chart's width and height.
    const dpx::test::ColorPixels curve = dpx::test::findColor(longCaption, QRect(0, 0, 1200, 800), style.color, 30);
    QVERIFY(curve.count > 500);
    int left = 1200;
    int right = 0;
    for (int x = 0; x < 1200; ++x) {
      for (int y = 0; y < 800; ++y) {
        const QColor c = longCaption.pixelColor(x, y);
        if (std::abs(c.red() - 200) < 30 && c.green() < 80 && c.blue() < 80) {
          left = std::min(left, x);
          right = std::max(right, x);
          break;
        }
      }
    }
    QVERIFY2(right - left > 800, qPrintable(QStringLiteral("curve spans %1..%2").arg(left).arg(right)));
    // Drawn pixels across the chart region's width and in the caption's last lines.
    const QImage caption = longCaption.copy(0, 800, 1200, longCaption.height() - 800);
    QVERIFY(dpx::test::inkShare(caption) > 0.01);
    const QImage lastLines = longCaption.copy(0, longCaption.height() - 60, 1200, 60);
    QVERIFY(dpx::test::inkShare(lastLines) > 0.001);
    const QStringList lines = panel.contextLines();
    QVERIFY(lines.contains(QStringLiteral("data: builtin:digits")));
    QVERIFY(lines.last().startsWith(QLatin1String("dpx epsilon")));
    QVERIFY(panel.copyCommand());
    QCOMPARE(QGuiApplication::clipboard()->text(), command);
  }
};

QTEST_MAIN(TestChartPanel)
#include "tst_chart_panel.moc"
