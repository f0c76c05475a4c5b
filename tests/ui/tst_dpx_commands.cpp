// The command an export carries recomputes what the GUI shows: for several knob sets the
// generated `dpx epsilon --accountant all` line, split as a shell splits it and run through the
// CLI in-process, gives every analytic accountant's ε exactly as computeAnalytics does (the
// accountant table and the ε chart's marked point), to 1e-9 relative; the RDP and training
// commands parse and run too.
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

#include "cli_util.h"
#include "compute/analytics.h"
#include "idx_images.h"
#include "io/dpx_command.h"
#include "test_util.h"
#include "training/mechanism.h"
#include "training/model_comparison.h"

using namespace dpx::core;
using namespace dpx::ui;
using dpx::test::runDpx;
using dpx::test::shellWords;

Q_DECLARE_METATYPE(dpx::core::AccountingView)

namespace {

// A command line as text → what dpx printed with --json.
dpx::test::CliRun runCommand(const QString& line) {
  QStringList words = shellWords(line);
  if (words.isEmpty() || words.takeFirst() != QLatin1String("dpx")) return {-1, {}, QStringLiteral("not a dpx line")};
  words << QStringLiteral("--json");
  return runDpx(words);
}

}  // namespace

class TestDpxCommands : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void epsilonCommandRecomputesTheTable_data() {
    QTest::addColumn<AccountingView>("view");
    AccountingView mnist;  // Abadi et al. 2016's MNIST run at 15 epochs
    mnist.params.K = 3516;
    QTest::newRow("MNIST, 15 epochs, improved conversion") << mnist;
    AccountingView classic;
    classic.params.n = 50000;
    classic.params.m = 500;
    classic.params.sigma = 0.7;
    classic.params.K = 1000;
    classic.params.delta = 1e-6;
    classic.params.eta = 0.05;
    classic.params.lambda = 0.01;
    classic.params.schedule = Schedule::kDecreasing;
    classic.conversion = accounting::Conversion::kClassic;
    QTest::newRow("classic conversion, decreasing steps") << classic;
    AccountingView slider;  // values a log slider leaves: no short decimal reads back as them
    slider.params.n = 12345;
    slider.params.m = 77;
    slider.params.sigma = 1.0 / 3.0 + 1.0;
    slider.params.K = 800;
    slider.params.delta = 1.0 / 70000.0;
    slider.params.alpha = 12.0 / 7.0 + 10.0;
    slider.params.w = 0.1;
    slider.params.sampling = Sampling::kUniform;
    slider.params.neighbouring = Neighbouring::kReplaceOne;
    slider.params.averaged = true;
    slider.fixedAlpha = true;
    QTest::newRow("slider values, fixed α, uniform sampling, replace-one") << slider;
  }

  void epsilonCommandRecomputesTheTable() {
    QFETCH(AccountingView, view);
    const AnalyticsSnapshot gui = computeAnalytics(view.params, view.conversion, false, view.fixedAlpha);
    const QString line = QString::fromStdString(shellCommandLine(epsilonArguments(view, "all")));
    const dpx::test::CliRun run = runCommand(line);
    QVERIFY2(run.code == 0, qPrintable(line + QLatin1Char('\n') + run.err));
    const QJsonArray rows = QJsonDocument::fromJson(run.out.toUtf8()).array();
    QVERIFY(!rows.isEmpty());
    int compared = 0;
    for (const AccountantSummary& row : gui.accountants) {
      // With α fixed, the table's RDP rows show the ε at the α knob alone.
      const std::optional<accounting::EpsilonResult>& shown =
          view.fixedAlpha && row.rdpAtAlpha ? row.epsilonAtAlpha : row.epsilon;
      if (!shown) continue;
      bool found = false;
      for (const QJsonValue& value : rows) {
        const QJsonObject o = value.toObject();
        if (o.value(QStringLiteral("accountant")).toString().toStdString() != row.id) continue;
        found = true;
        QVERIFY2(o.value(QStringLiteral("epsilon")).isDouble(), qPrintable(QString::fromStdString(row.id)));
        DPX_COMPARE_REL(o.value(QStringLiteral("epsilon")).toDouble(), shown->epsilon, 1e-9);
        ++compared;
      }
      QVERIFY2(found, qPrintable(QString::fromStdString(row.id)));
    }
    QVERIFY(compared >= 4);
  }

  // The RDP chart's commands give its curves' values on the default order grid.
  void rdpCommandRecomputesTheProfile() {
    AccountingView view;
    view.params.K = 500;
    view.params.sigma = 1.0 / 3.0 + 1.0;
    const AnalyticsSnapshot gui = computeAnalytics(view.params, view.conversion, false);
    QVERIFY(!gui.rdpCurves.empty());
    for (const PlotCurve& curve : gui.rdpCurves) {
      const QString line = QString::fromStdString(shellCommandLine(rdpArguments(view, curve.accountant)));
      const dpx::test::CliRun run = runCommand(line);
      QVERIFY2(run.code == 0, qPrintable(line + QLatin1Char('\n') + run.err));
      const QJsonObject o = dpx::test::jsonOf(run);
      const QJsonArray alphas = o.value(QStringLiteral("alphas")).toArray();
      const QJsonArray values = o.value(QStringLiteral("rdp")).toArray();
      QCOMPARE(static_cast<std::size_t>(values.size()), curve.y.size());
      for (std::size_t i = 0; i < curve.y.size(); i += 37) {
        QCOMPARE(alphas.at(static_cast<qsizetype>(i)).toDouble(), curve.x[i]);
        DPX_COMPARE_REL(values.at(static_cast<qsizetype>(i)).toDouble(), curve.y[i], 1e-9);
      }
    }
  }

  // A training command is accepted as written: the flags it writes are the ones dpx train reads.
  void trainCommandRuns() {
    training::TrainerConfig config;
    config.mechanism = training::Mechanism::kDpSgd;
    config.knobs.m = 64;
    config.knobs.sigma = 1.0 / 3.0 + 1.0;
    config.epochs = 1;
    config.seed = 3;
    training::DatasetKey data;
    data.source = "builtin:breast-cancer";
    data.splitSeed = 3;
    const QString line = QString::fromStdString(shellCommandLine(trainArguments(config, data)));
    QVERIFY(!line.contains(QLatin1String("--n ")));
    QVERIFY(!line.contains(QLatin1String("--K ")));
    const dpx::test::CliRun run = runCommand(line + QStringLiteral(" --quiet"));
    QVERIFY2(run.code == 0, qPrintable(line + QLatin1Char('\n') + run.err));
    const QJsonObject o = dpx::test::jsonOf(run);
    DPX_COMPARE_REL(o.value(QStringLiteral("sigma")).toDouble(), config.knobs.sigma, 1e-9);  // printed to 10 digits
    QCOMPARE(o.value(QStringLiteral("epochs")).toDouble(), 1.0);
  }

  // The models frontier's export: `dpx frontier --vary models` of the GUI's comparison trains the
  // same recipe on the same data to the same ε and accuracy (results do not depend on threads).
  void modelsFrontierCommandRecomputesTheComparison() {
    qputenv("DPX_NO_DATASET_CACHE", "1");
    QTemporaryDir dir;
    training::ModelComparisonRequest request;
    request.source =
        dpx::test::writeIdxImageSource(std::filesystem::path(dir.path().toStdString()), 2100, 400).string();
    request.recipes = {"linear-pixels"};
    request.epsilons = {2.0, 4.0};
    request.seed = 5;
    request.threads = 2;
    training::DatasetCache cache;
    const Result<training::ModelComparisonResult> gui = training::compareModels(request, cache, {});
    QVERIFY2(gui.isOk(), gui.status().message().c_str());
    const QString line = QString::fromStdString(shellCommandLine(comparisonArguments(request)));
    const dpx::test::CliRun run = runCommand(line + QStringLiteral(" --quiet"));
    QVERIFY2(run.code == 0, qPrintable(line + QLatin1Char('\n') + run.err));
    const QJsonObject o = dpx::test::jsonOf(run);
    QCOMPARE(o.value(QStringLiteral("vary")).toString(), QStringLiteral("models"));
    QCOMPARE(o.value(QStringLiteral("delta")).toDouble(), request.delta);
    const QJsonArray models = o.value(QStringLiteral("models")).toArray();
    QCOMPARE(models.size(), 1);
    const QJsonArray points = models.at(0).toObject().value(QStringLiteral("points")).toArray();
    const std::vector<training::FrontierPoint>& shown = gui->series.at(0).points;
    QCOMPARE(static_cast<std::size_t>(points.size()), shown.size());
    for (std::size_t i = 0; i < shown.size(); ++i) {
      QVERIFY2(shown[i].ok(), shown[i].error.c_str());
      const QJsonObject p = points.at(static_cast<qsizetype>(i)).toObject();
      QCOMPARE(p.value(QStringLiteral("target_epsilon")).toDouble(), request.epsilons[i]);
      DPX_COMPARE_REL(p.value(QStringLiteral("epsilon")).toDouble(), *shown[i].epsilon, 1e-9);
      DPX_COMPARE_REL(p.value(QStringLiteral("accuracy_mean")).toDouble(), shown[i].accuracyMean, 1e-9);
    }
  }

  void quotesWhatAShellWouldSplit() {
    training::DatasetKey data;
    data.source = "/tmp/my data/it's.csv";
    const std::string line = shellCommandLine(dataArguments(data));
    QCOMPARE(shellWords(QString::fromStdString(line)).at(2), QString::fromStdString(data.source));
  }
};

QTEST_GUILESS_MAIN(TestDpxCommands)
#include "tst_dpx_commands.moc"
