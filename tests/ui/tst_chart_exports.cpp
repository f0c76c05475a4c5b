// Exports with context, offscreen: an exported chart is a full picture with a caption of its
// knobs and command; a CSV opens with `# ` lines of the knobs and the command; Edit → Copy as dpx
// command puts on the clipboard a command that recomputes the headline ε; the Training tab's
// audit ROC exports to PNG and CSV with the audit's own knobs and data, and says so once the
// knobs move on.
#include <QAction>
#include <QClipboard>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "accounting/registry.h"
#include "audit_panel.h"
#include "auditor_tab.h"
#include "charts/chart_panel.h"
#include "charts/explorer_charts.h"
#include "cli_util.h"
#include "common/format.h"
#include "main_window.h"
#include "pixel_util.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

QStringList fileLines(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

// Share of the columns of `area` with at least one drawn (not near-white) pixel.
double inkedColumns(const QImage& image, const QRect& area) {
  int inked = 0;
  for (int x = area.left(); x <= area.right(); ++x) {
    for (int y = area.top(); y <= area.bottom(); ++y) {
      const QColor c = image.pixelColor(x, y);
      if (c.red() < 200 || c.green() < 200 || c.blue() < 200) {
        ++inked;
        break;
      }
    }
  }
  return double(inked) / area.width();
}

}  // namespace

class TestChartExports : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_settings;
  std::unique_ptr<MainWindow> m_window;

  MainWindow& window() { return *m_window; }

 private Q_SLOTS:
  void initTestCase() {
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("test.ini")), QSettings::IniFormat);
    m_window = std::make_unique<MainWindow>(m_settings.get());
    // A shorter run than the default keeps dpx's exact accountant quick.
    window().model()->setKnob(Knob::kK, 1000);
    window().resize(1400, 900);
    window().show();
    QVERIFY(window().waitForLessonViews(20000));
    QTRY_VERIFY_WITH_TIMEOUT(window().session()->headlineEpsilon().has_value(), 10000);
  }

  void cleanupTestCase() {
    m_window.reset();
    if (qEnvironmentVariableIsSet("DPX_KEEP_EXPORTS"))
      m_dir.setAutoRemove(false), qInfo("exports kept in %s", qPrintable(m_dir.path()));
  }

  void pngHasChartAcrossItsWidthAndACaption() {
    const QString path = m_dir.filePath(QStringLiteral("epsilon.png"));
    QVERIFY(window().exportChart(window().charts()->epsilon(), path));
    const QImage png(path);
    QCOMPARE(png.width(), 1200);
    QVERIFY(png.height() > 860);
    // Plot and legend fill the width; only the margins and the gap before the legend stay blank.
    QVERIFY(inkedColumns(png, QRect(0, 0, 1200, 800)) > 0.7);
    const QImage caption = png.copy(0, 800, 1200, png.height() - 800);
    QVERIFY(dpx::test::inkShare(caption) > 0.01);
    QVERIFY(inkedColumns(caption, caption.rect()) > 0.5);
  }

  void csvOpensWithKnobsAndCommand() {
    const QString path = m_dir.filePath(QStringLiteral("epsilon.csv"));
    QVERIFY(window().exportChart(window().charts()->epsilon(), path));
    const QStringList lines = fileLines(path);
    QStringList header;
    for (const QString& line : lines) {
      if (!line.startsWith(QLatin1String("# "))) break;
      header << line;
    }
    QVERIFY(header.size() >= 5);
    const QString text = header.join(QLatin1Char('\n'));
    for (const char* knob : {"n = 60000", "σ = 1.1", "K = 1000", "δ = 1e-05", "# dpx epsilon", "# dpx curve"}) {
      QVERIFY2(text.contains(QString::fromUtf8(knob)), knob);
    }
    QCOMPARE(lines.at(header.size()), QStringLiteral("curve,x,y"));
    // JSON carries the same context.
    const QJsonObject json = window().charts()->epsilon()->curvesJson();
    QVERIFY(json.value(QStringLiteral("context"))
                .toObject()
                .value(QStringLiteral("command"))
                .toString()
                .startsWith(QLatin1String("dpx epsilon")));
  }

  // The ε chart's caption recomputes what it draws: a `dpx curve` per density (closed forms,
  // root searches, exact compositions), each run in-process, gives every drawn curve's points.
  void epsilonChartCommandsRecomputeItsCurves() {
    ChartPanel* chart = window().charts()->epsilon();
    QTRY_VERIFY_WITH_TIMEOUT(chart->curveIds().contains(QStringLiteral("shuffle")), 60000);
    QVERIFY(window().waitForLessonViews(60000));
    const QStringList lines = chart->exportContext().command.split(QLatin1Char('\n'));
    QStringList curveLines = lines.filter(QRegularExpression(QStringLiteral("^dpx curve ")));
    QCOMPARE(curveLines.size(), 3);  // 300, 60 and 24 points
    QSet<QString> compared;
    for (const QString& line : curveLines) {
      QStringList words = dpx::test::shellWords(line);
      words.removeFirst();
      words << QStringLiteral("--json");
      QElapsedTimer timer;
      timer.start();
      const dpx::test::CliRun run = dpx::test::runDpx(words);
      QVERIFY2(run.code == 0, qPrintable(line + QLatin1Char('\n') + run.err));
      QVERIFY2(timer.elapsed() < 20000, qPrintable(line));
      const QJsonObject o = dpx::test::jsonOf(run);
      const QJsonArray xs = o.value(QStringLiteral("x")).toArray();
      for (const QJsonValue& c : o.value(QStringLiteral("curves")).toArray()) {
        const QString id = c.toObject().value(QStringLiteral("accountant")).toString();
        const QJsonArray ys = c.toObject().value(QStringLiteral("epsilon")).toArray();
        const QVector<QPointF> drawn = chart->curvePoints(id);
        QVERIFY2(!drawn.isEmpty(), qPrintable(id));
        int matched = 0;
        for (qsizetype i = 0; i < xs.size(); ++i) {
          for (const QPointF& p : drawn) {
            if (p.x() != xs.at(i).toDouble() || !ys.at(i).isDouble()) continue;
            DPX_COMPARE_REL(ys.at(i).toDouble(), p.y(), 1e-6);
            ++matched;
            break;
          }
        }
        QVERIFY2(matched >= std::min<qsizetype>(drawn.size(), xs.size()) / 2, qPrintable(id));
        compared.insert(id);
      }
    }
    for (const char* id : {"rdp", "gdp", "pld", "shuffle"}) QVERIFY2(compared.contains(QLatin1String(id)), id);
  }

  void copiedCommandRecomputesTheHeadline() {
    window().tabs()->setCurrentIndex(MainWindow::kPrivacyTab);
    auto* copy = window().findChild<QAction*>(QStringLiteral("copyCommandAction"));
    QVERIFY(copy);
    QGuiApplication::clipboard()->clear();
    copy->trigger();
    const QString command = QGuiApplication::clipboard()->text();
    QVERIFY(command.startsWith(QLatin1String("dpx epsilon ")));
    QStringList words = dpx::test::shellWords(command);
    words.removeFirst();
    words << QStringLiteral("--json");
    const dpx::test::CliRun run = dpx::test::runDpx(words);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const std::optional<double> headline = window().session()->headlineEpsilon();
    QVERIFY(headline);
    bool compared = false;
    const auto* table = accounting::findAccountant("rdp");  // the headline is the table's rdp row
    for (const QJsonValue& row : QJsonDocument::fromJson(run.out.toUtf8()).array()) {
      if (row.toObject().value(QStringLiteral("accountant")).toString().toStdString() != table->id()) continue;
      DPX_COMPARE_REL(row.toObject().value(QStringLiteral("epsilon")).toDouble(), *headline, 1e-9);
      compared = true;
    }
    QVERIFY(compared);
  }

  void auditRocExportsWithItsOwnKnobs() {
    AuditPanel* audit = window().auditPanel();
    QVERIFY(window().allCharts().contains(audit->chart()));
    window().tabs()->setCurrentIndex(MainWindow::kTrainingTab);
    audit->shadowBox()->setValue(1);
    QSignalSpy ready(audit, &AuditPanel::reportReady);
    audit->runAudit();
    QVERIFY(ready.wait(60000));
    const QString csv = m_dir.filePath(QStringLiteral("audit.csv"));
    const QString png = m_dir.filePath(QStringLiteral("audit.png"));
    QVERIFY(window().exportChart(audit->chart(), csv));
    QVERIFY(window().exportChart(audit->chart(), png));
    const QString text = fileLines(csv).join(QLatin1Char('\n'));
    QVERIFY(text.contains(QLatin1String("# data: builtin:digits")));
    QVERIFY(text.contains(QLatin1String("# dpx audit --data builtin:digits")));
    QVERIFY(text.contains(QLatin1String("--shadow-models 1")));
    QVERIFY(text.contains(QLatin1String("\ncurve,x,y\n")));
    const QImage image(png);
    QVERIFY(image.height() > 860);
    QVERIFY(dpx::test::inkShare(image.copy(0, 800, 1200, image.height() - 800)) > 0.01);
    QVERIFY(!window().currentTabCommand().isEmpty());
    // The knobs move on: the audit's caption keeps its own σ and says it is from before.
    const double sigma = audit->reportTag()->knobs.sigma;
    window().model()->setKnob(Knob::kSigma, 2.5);
    const QString context = audit->chart()->contextLines().join(QLatin1Char('\n'));
    QVERIFY2(context.contains(QLatin1String("before your change")), qPrintable(context));
    QVERIFY(context.contains(QStringLiteral("σ = %1").arg(QString::fromStdString(formatNumber(sigma)))));
    QVERIFY(context.contains(QStringLiteral("σ = %1 (now 2.5)").arg(QString::fromStdString(formatNumber(sigma, 4)))));
    // And on both trade-off planes the attack of the old model is greyed and says so: never drawn
    // against the new proven curve as if it were its audit.
    ChartPanel* plane = window().charts()->tradeoff();
    QTRY_VERIFY(plane->curveGreyed(QStringLiteral("audit")));
    QVERIFY(plane->curveLabel(QStringLiteral("audit")).contains(QLatin1String("other knobs")));
    window().tabs()->setCurrentIndex(MainWindow::kAuditorTab);
    ChartPanel* auditorPlane = window().auditorTab()->charts().front();
    QTRY_VERIFY_WITH_TIMEOUT(auditorPlane->curveGreyed(QStringLiteral("audit:roc")), 20000);
    QVERIFY(auditorPlane->curveLabel(QStringLiteral("audit:roc")).contains(QLatin1String("other knobs")));
  }
};

QTEST_MAIN(TestChartExports)
#include "tst_chart_exports.moc"
