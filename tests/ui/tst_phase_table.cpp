// The phase table, offscreen: the sample DpEvents file of DP-SGD on MNIST (q = 256/60000,
// σ = 1.1, 14063 steps) loads into one row and the ε shown — exact bracket and moments accountant
// — is the real `dpx epsilon --events`'s; a two-phase file gives two rows and RDP ≥ PLD upper ≥
// PLD lower; rows are added, removed and filled from the knobs; a file with random allocation (alone
// or after a Poisson warm-up) loads as allocation rows and shows the CLI's exact ε, RDP saying why
// it has none; a row switched to the other kind takes the knobs' run of that kind; a bad cell, an
// unsupported event and a truncated file are reported with the row, the place in the document or
// the byte; File → Open DP events… fills the table of the main window.
#include <QComboBox>
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
    QCOMPARE(panel.table()->item(0, 1)->text(), QStringLiteral("0.004266666666666667"));
    QCOMPARE(panel.table()->item(0, 3)->text(), QStringLiteral("14063"));
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
    panel.table()->item(1, 2)->setText(QStringLiteral("abc"));
    QVERIFY(!panel.result().has_value());
    QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("row 2, σ: 'abc' is not a number")),
             qPrintable(panel.statusLabel()->text()));
    panel.table()->item(1, 2)->setText(QStringLiteral("0"));
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
  }

  void randomAllocationRowsShowTheCliEpsilon() {
    ParameterModel model;
    PhaseTablePanel panel(&model);
    QVERIFY(waitForResult(panel));
    for (const char* name : {"random_allocation.json", "warmup_then_allocation.json"}) {
      QSignalSpy spy(&panel, &PhaseTablePanel::computed);
      QString error;
      QVERIFY2(panel.loadEventsFile(eventsFile(name), &error), qPrintable(error));
      QVERIFY(spy.wait(60000));
      const auto& r = panel.result();
      QVERIFY2(r && r->pldUpper && r->pldLower, qPrintable(panel.pldLabel()->text()));
      const QJsonObject pld = dpxEpsilon(accounting::accountantOf<accounting::PldAccountant>(), eventsFile(name));
      QVERIFY(!pld.isEmpty());
      QCOMPARE(formatNumber(*r->pldUpper), formatNumber(pld.value(QStringLiteral("epsilon_upper")).toDouble()));
      QVERIFY2(panel.rdpLabel()->text().contains(QStringLiteral("no Rényi DP bound")),
               qPrintable(panel.rdpLabel()->text()));
    }
    // The second file: a Poisson row, then an allocation row (σ = 2, k = 1 of t = 50, 2 epochs).
    QCOMPARE(panel.table()->rowCount(), 2);
    const auto phases = panel.phases();
    QVERIFY(phases.isOk());
    QCOMPARE(std::get<accounting::RandomAllocationPhase>(phases->at(1)),
             (accounting::RandomAllocationPhase{2.0, 50, 1, 2}));
    QVERIFY(!panel.table()->item(1, 1)->flags().testFlag(Qt::ItemIsEditable));  // no q for an allocation
    QCOMPARE(panel.table()->item(1, 4)->text(), QStringLiteral("50"));
    // Switched to Poisson, the row takes the knobs' q and K and keeps its σ.
    auto* kind = qobject_cast<QComboBox*>(panel.table()->cellWidget(1, 0));
    QVERIFY(kind);
    kind->setCurrentIndex(0);
    QVERIFY(waitForResult(panel));
    const auto converted = std::get<accounting::GaussianPhase>(panel.phases()->at(1));
    QCOMPARE(converted, (accounting::GaussianPhase{model.params().q(), 2.0, model.params().K}));
    QVERIFY(panel.result()->rdpEpsilon.has_value());
    // An allocation cell that is not whole: the row and the field.
    kind->setCurrentIndex(1);
    QVERIFY(waitForResult(panel));
    panel.table()->item(1, 5)->setText(QStringLiteral("1.5"));
    QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("row 2, k: 1.5 must be a whole number")),
             qPrintable(panel.statusLabel()->text()));
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
