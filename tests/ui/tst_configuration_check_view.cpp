// The Privacy tab's configuration check: a mismatch set through ParameterModel appears in the list
// with its icon and clears when undone; the batch-average control of the Advanced knobs reaches
// it; the list sits in the main window; and every shipped preset, applied as the GUI applies it,
// is checked against the accountants of its mechanisms.
#include <QComboBox>
#include <QDir>
#include <QListWidget>
#include <QMap>
#include <QSignalSpy>
#include <QTest>

#include "configuration_check_view.h"
#include "main_window.h"
#include "parameter_panel.h"
#include "presets.h"
#include "session/parameter_model.h"

using namespace dpx;
using namespace dpx::ui;

namespace {

bool showsKnob(const ConfigurationCheckView& view, const QString& severityAndKnob) {
  for (const QString& row : view.rowsText()) {
    if (row.startsWith(severityAndKnob + QStringLiteral(": "))) return true;
  }
  return false;
}

bool showsNoMismatch(const ConfigurationCheckView& view) {
  return view.rowsText() == QStringList{QStringLiteral("No mismatches")} && view.list()->count() == 1 &&
         view.list()->item(0)->text() == QStringLiteral("No mismatches");
}

QString describe(const ModelCheck& check) {
  QStringList rows;
  for (const ModelFinding& f : check.findings) {
    rows << QString::fromUtf8(core::accounting::severityName(f.finding.severity).data()) + QStringLiteral(" ") +
                QString::fromStdString(f.finding.knob) + QStringLiteral(" (") +
                f.mechanisms.join(QStringLiteral(", ")) + QStringLiteral("): ") +
                QString::fromStdString(f.finding.message);
  }
  if (!check.error.isEmpty()) rows << QStringLiteral("not checked: ") + check.error;
  return rows.join(QLatin1Char('\n'));
}

}  // namespace

class TestConfigurationCheckView : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void mismatchAppearsAndClears();
  void batchAverageControl();
  void mechanismsAreReported();
  void inTheMainWindow();
  void shippedPresetsAreConsistent_data();
  void shippedPresetsAreConsistent();
};

void TestConfigurationCheckView::mismatchAppearsAndClears() {
  ParameterModel model;
  ConfigurationCheckView view(&model);
  QTRY_VERIFY(showsNoMismatch(view));
  model.setSampling(core::Sampling::kShuffle);  // DP-SGD's Poisson accountants on shuffled batches
  QTRY_VERIFY2(showsKnob(view, QStringLiteral("error: sampling")), qPrintable(view.rowsText().join('\n')));
  QVERIFY(view.title().contains(QStringLiteral("error")));
  // The default trainer ticks DP-SGLD (sgld assumes fixed-size batches) and DP-SGD (Poisson).
  QCOMPARE(view.list()->count(), 2);
  const QListWidgetItem* item = view.list()->item(1);
  QVERIFY(!item->icon().isNull());
  QVERIFY2(item->text().contains(QStringLiteral("Chua et al. 2024")), qPrintable(item->text()));
  QVERIFY(item->toolTip().contains(QStringLiteral("Found for: DP-SGD")));
  qInfo("filling the list took %.3f ms of the GUI thread", view.lastFillMilliseconds());
  model.undoStack()->undo();
  QTRY_VERIFY(showsNoMismatch(view));
  QCOMPARE(view.title(), QStringLiteral("Configuration check"));
  model.setNeighbouring(core::Neighbouring::kReplaceOne);
  QTRY_VERIFY(showsKnob(view, QStringLiteral("error: neighbouring")));
  model.setNeighbouring(std::nullopt);
  model.setKnob(core::Knob::kDelta, 0.05);  // ≥ 1/n
  QTRY_VERIFY(showsKnob(view, QStringLiteral("error: delta")));
  model.undoStack()->undo();
  QTRY_VERIFY(showsNoMismatch(view));
}

void TestConfigurationCheckView::batchAverageControl() {
  ParameterModel model;
  ParameterPanel panel(&model);
  ConfigurationCheckView view(&model);
  QTRY_VERIFY(showsNoMismatch(view));
  auto* box = panel.findChild<QComboBox*>(QStringLiteral("batchAverageBox"));
  QVERIFY(box);
  const int realised = box->findData(static_cast<int>(core::accounting::BatchAverage::kRealised));
  box->setCurrentIndex(realised);
  Q_EMIT box->activated(realised);
  QCOMPARE(model.batchAverage(), core::accounting::BatchAverage::kRealised);
  QTRY_VERIFY2(showsKnob(view, QStringLiteral("error: batch-average")), qPrintable(view.rowsText().join('\n')));
  model.setBatchAverage(core::accounting::BatchAverage::kExpected);
  QTRY_VERIFY(showsNoMismatch(view));
  QCOMPARE(box->currentData().toInt(), static_cast<int>(core::accounting::BatchAverage::kExpected));
}

// The run is reported by the ticked mechanisms' accountants: DP-SGLD alone on Poisson batches is a
// mismatch for sgld, DP-SGD alone is not.
void TestConfigurationCheckView::mechanismsAreReported() {
  ModelState state;
  state.params.sampling = core::Sampling::kPoisson;
  state.trainer.mechanisms = {QStringLiteral("dp-sgd"), QStringLiteral("sgd")};
  QVERIFY2(checkModelState(state, {}, {}).findings.empty(), qPrintable(describe(checkModelState(state, {}, {}))));
  state.trainer.mechanisms = {QStringLiteral("dp-sgld")};
  const ModelCheck sgld = checkModelState(state, {}, {});
  QCOMPARE(sgld.findings.size(), std::size_t{1});
  QCOMPARE(sgld.findings.front().finding.knob, std::string("sampling"));
  QCOMPARE(sgld.findings.front().mechanisms.size(), 1);
  // No private mechanism ticked: the default Poisson accountants.
  state.trainer.mechanisms = {QStringLiteral("sgd")};
  state.params.sampling = core::Sampling::kShuffle;
  const ModelCheck none = checkModelState(state, {}, {});
  QCOMPARE(none.findings.size(), std::size_t{1});
  QVERIFY(none.findings.front().finding.message.find("rdp and pld") != std::string::npos);
  QVERIFY(none.findings.front().mechanisms.isEmpty());
}

void TestConfigurationCheckView::inTheMainWindow() {
  QSettings settings(QDir::temp().filePath(QStringLiteral("tst_configuration_check_view.ini")), QSettings::IniFormat);
  settings.clear();
  MainWindow window(&settings);
  auto* view = window.findChild<ConfigurationCheckView*>();
  QVERIFY(view);
  QTRY_VERIFY(showsNoMismatch(*view));
  window.model()->setSampling(core::Sampling::kCyclic);
  window.model()->setNeighbouring(core::Neighbouring::kReplaceOne);
  QTRY_VERIFY(showsKnob(*view, QStringLiteral("error: sampling")) &&
              showsKnob(*view, QStringLiteral("error: neighbouring")));
  // DPX_SCREENSHOT_DIR=… saves the window with the findings shown, to look at.
  if (const QString dir = qEnvironmentVariable("DPX_SCREENSHOT_DIR"); !dir.isEmpty()) {
    window.resize(1600, 1000);
    window.show();
    QTest::qWait(500);
    QVERIFY(window.grab().save(QDir(dir).filePath(QStringLiteral("configuration_check.png"))));
  }
  window.model()->setSampling(core::Sampling::kShuffle);
  QTRY_VERIFY(view->rowsText().join(QLatin1Char(' ')).contains(QStringLiteral("shuffled batches")));
  qInfo("filling the shown list took %.3f ms of the GUI thread", view->lastFillMilliseconds());
}

void TestConfigurationCheckView::shippedPresetsAreConsistent_data() {
  QTest::addColumn<Preset>("preset");
  const std::vector<Preset> presets = builtinPresets();
  QVERIFY(presets.size() >= 10);
  for (const Preset& p : presets) QTest::newRow(qPrintable(p.id)) << p;
}

void TestConfigurationCheckView::shippedPresetsAreConsistent() {
  QFETCH(Preset, preset);
  const ModelState state = stateFromPreset(preset, ModelState{});
  const ModelCheck check =
      checkModelState(state, core::accounting::BatchAverage::kExpected, core::accounting::Conversion::kImproved);
  QVERIFY2(check.error.isEmpty(), qPrintable(check.error));
  // Every preset ticks the mechanisms its source ran (or none), so loading it leaves no mismatch.
  QVERIFY2(check.findings.empty(), qPrintable(describe(check)));
}

QTEST_MAIN(TestConfigurationCheckView)
#include "tst_configuration_check_view.moc"
