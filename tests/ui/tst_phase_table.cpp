// The phase table, offscreen: the sample DpEvents file of DP-SGD on MNIST (q = 256/60000,
// σ = 1.1, 14063 steps) loads into one row and the ε shown — exact bracket and moments accountant
// — is the real `dpx epsilon --events`'s; a two-phase file gives two rows and RDP ≥ PLD upper ≥
// PLD lower; rows are added, removed and filled from the knobs; a bad cell, an unsupported event
// and a truncated file are reported with the row, the place in the document or the byte; File →
// Open DP events… fills the table of the main window.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "main_window.h"
#include "phase_table_panel.h"
#include "session/parameter_model.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

QString eventsFile(const char* name) { return QStringLiteral(DPX_TEST_DATA_DIR "/events/") + QLatin1String(name); }

QString idOf(const accounting::Accountant& a) { return QString::fromStdString(std::string(a.id())); }

// `dpx epsilon --json --accountant ID --events FILE` through the real binary.
QJsonObject dpxEpsilon(const accounting::Accountant& a, const QString& file) {
  QProcess p;
  p.start(QStringLiteral(DPX_DPX_BINARY), {QStringLiteral("epsilon"), QStringLiteral("--json"),
                                           QStringLiteral("--accountant"), idOf(a), QStringLiteral("--events"), file});
  if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
  return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

// The shown value of a number as the label prints it.
QString shown(double v) { return QString::fromStdString(formatNumber(v, 6)); }

bool waitForResult(PhaseTablePanel& panel) {
  QSignalSpy spy(&panel, &PhaseTablePanel::computed);
  return spy.wait(30000);
}

}  // namespace

class TestPhaseTable : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void sampleFileShowsTheCliEpsilon() {
    ParameterModel model;
    PhaseTablePanel panel(&model);
    panel.show();
    QVERIFY(waitForResult(panel));  // the knobs' run
    QString error;
    QSignalSpy spy(&panel, &PhaseTablePanel::computed);
    QVERIFY2(panel.loadEventsFile(eventsFile("dpsgd_mnist.json"), &error), qPrintable(error));
    QVERIFY(spy.wait(30000));
    QCOMPARE(panel.table()->rowCount(), 1);
    QCOMPARE(panel.table()->item(0, 0)->text(), QStringLiteral("0.004266666666666667"));
    QCOMPARE(panel.table()->item(0, 2)->text(), QStringLiteral("14063"));
    const auto& r = panel.result();
    QVERIFY(r && r->pldUpper && r->pldLower && r->rdpEpsilon);
    QCOMPARE(r->delta, 1e-5);

    const QJsonObject pld =
        dpxEpsilon(accounting::accountantOf<accounting::PldAccountant>(), eventsFile("dpsgd_mnist.json"));
    const QJsonObject rdp =
        dpxEpsilon(accounting::accountantOf<accounting::RdpAccountant>(), eventsFile("dpsgd_mnist.json"));
    QVERIFY(!pld.isEmpty() && !rdp.isEmpty());
    // The CLI prints 10 significant digits: the panel's numbers agree to them.
    QCOMPARE(formatNumber(*r->pldUpper), formatNumber(pld.value(QStringLiteral("epsilon_upper")).toDouble()));
    QCOMPARE(formatNumber(*r->pldLower), formatNumber(pld.value(QStringLiteral("epsilon_lower")).toDouble()));
    QCOMPARE(formatNumber(*r->rdpEpsilon), formatNumber(rdp.value(QStringLiteral("epsilon")).toDouble()));
    QCOMPARE(*r->rdpAlpha, rdp.value(QStringLiteral("alpha")).toDouble());
    // And the labels show them.
    QVERIFY2(panel.pldLabel()->text().contains(shown(pld.value(QStringLiteral("epsilon_upper")).toDouble())),
             qPrintable(panel.pldLabel()->text()));
    QVERIFY(panel.pldLabel()->text().contains(shown(pld.value(QStringLiteral("epsilon_lower")).toDouble())));
    QVERIFY2(panel.rdpLabel()->text().contains(shown(rdp.value(QStringLiteral("epsilon")).toDouble())),
             qPrintable(panel.rdpLabel()->text()));
  }

  void twoPhasesAreOrderedAndEditable() {
    ParameterModel model;
    PhaseTablePanel panel(&model);
    QVERIFY(waitForResult(panel));
    QSignalSpy spy(&panel, &PhaseTablePanel::computed);
    QString error;
    QVERIFY(panel.loadEventsFile(eventsFile("two_phases.json"), &error));
    QVERIFY(spy.wait(30000));
    QCOMPARE(panel.table()->rowCount(), 2);
    const auto two = *panel.result();
    QVERIFY(*two.rdpEpsilon >= *two.pldUpper);
    QVERIFY(*two.pldUpper >= *two.pldLower);
    // Removing the second phase lowers ε below the two-phase run's.
    panel.table()->selectRow(1);
    panel.removeSelectedRows();
    QVERIFY(waitForResult(panel));
    QCOMPARE(panel.table()->rowCount(), 1);
    QVERIFY(*panel.result()->pldUpper < *two.pldLower);
    // Adding a row copies the last one: twice the steps of that phase, more ε.
    const double one = *panel.result()->rdpEpsilon;
    panel.addRow();
    QVERIFY(waitForResult(panel));
    QCOMPARE(panel.table()->rowCount(), 2);
    QVERIFY(*panel.result()->rdpEpsilon > one);
    // A cell that is not a number: the row and the column in the message, no numbers shown.
    panel.table()->item(1, 1)->setText(QStringLiteral("abc"));
    QVERIFY(!panel.result().has_value());
    QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("row 2, σ: 'abc' is not a number")),
             qPrintable(panel.statusLabel()->text()));
    panel.table()->item(1, 1)->setText(QStringLiteral("0"));
    QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("phase 2: noise_multiplier = 0")),
             qPrintable(panel.statusLabel()->text()));
    // From the knobs: one phase q = m/n, σ, K.
    panel.fromKnobs();
    QVERIFY(waitForResult(panel));
    QCOMPARE(panel.table()->rowCount(), 1);
    QCOMPARE(std::get<accounting::GaussianPhase>(panel.phases()->front()).steps, model.params().K);
    // δ follows the knobs.
    Params p = model.params();
    p.delta = 1e-7;
    model.setAll(p, QStringLiteral("δ"));
    QVERIFY(waitForResult(panel));
    QCOMPARE(panel.result()->delta, 1e-7);
  }

  void badFilesAreReported() {
    ParameterModel model;
    PhaseTablePanel panel(&model);
    QVERIFY(waitForResult(panel));
    QString error;
    QVERIFY(!panel.loadEventsFile(eventsFile("unsupported_sampling.json"), &error));
    QVERIFY2(error.contains(QStringLiteral("events[2].event: SampledWithoutReplacementDpEvent is not supported")),
             qPrintable(error));
    QCOMPARE(panel.table()->rowCount(), 1);  // unchanged
    QVERIFY(!panel.loadEventsFile(eventsFile("truncated.json"), &error));
    QVERIFY2(error.contains(QStringLiteral("at byte 300 (line 10, column 45)")), qPrintable(error));
    QCOMPARE(panel.statusLabel()->text(), error);
    QVERIFY(!panel.loadEventsFile(eventsFile("random_allocation.json"), &error));
    QVERIFY2(error.contains(QStringLiteral("phase 1 (random allocation")), qPrintable(error));
  }

  void mainWindowOpensDpEvents() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    MainWindow window(&settings);
    PhaseTablePanel* panel = window.phaseTablePanel();
    QVERIFY(panel);
    QSignalSpy spy(panel, &PhaseTablePanel::computed);
    QVERIFY(window.openDpEvents(eventsFile("two_phases.json")));
    QVERIFY(spy.wait(30000));
    QCOMPARE(panel->table()->rowCount(), 2);
    QVERIFY(!window.openDpEvents(eventsFile("truncated.json")));
    QCOMPARE(panel->table()->rowCount(), 2);
  }
};

QTEST_MAIN(TestPhaseTable)
#include "tst_phase_table.moc"
