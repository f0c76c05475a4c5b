// File → Import audit scores…: a generated score file is audited off the GUI thread against the
// current knobs' claim and drawn on the Auditor tab (the imported ROC, its band and the claimed
// curve), the verdict first in the summary; a malformed file gives a message box naming the line
// and the field; moving a knob marks the imported audit as checked against other knobs.
#include <QApplication>
#include <QElapsedTimer>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

#include "auditor_tab.h"
#include "charts/chart_panel.h"
#include "compute/background_job.h"
#include "main_window.h"
#include "membership_game.h"
#include "session/parameter_model.h"

using namespace dpx::core;
using namespace dpx::ui;

namespace {

// q = 1, K = 1, σ = 4: the Gaussian mechanism with μ = 0.25, ε ≈ 0.93 at δ = 1e−5 (cheap to compose).
Params strongClaim() {
  Params p;
  p.n = 1000;
  p.m = 1000;
  p.sigma = 4.0;
  p.K = 1;
  p.delta = 1e-5;
  return p;
}

void writeScores(const QString& path, int records, double mu, std::uint64_t seed) {
  const auto g = dpx::test::gaussianMembershipScores(records, mu, seed, dpx::test::Membership::kCoin, 3);
  std::ofstream out(path.toStdString());
  out << "score,member\n";
  out.precision(17);
  for (std::size_t i = 0; i < g.scores.size(); ++i) out << g.scores[i] << "," << int(g.members[i]) << "\n";
}

// Waits for the import's job and delivers its result.
void finishImport(MainWindow& w) {
  w.scoreAuditJob()->waitForIdle();
  QCoreApplication::processEvents();
}

}  // namespace

class TestImportScores : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("test.ini")), QSettings::IniFormat);
  }

  void importedScoresShowTheirVerdictOnTheAuditorTab() {
    MainWindow w(m_settings.get());
    w.model()->setAll(strongClaim(), QStringLiteral("test claim"));
    const QString path = m_dir.filePath(QStringLiteral("non_private.csv"));
    writeScores(path, 2000, 4.0, 21);
    QElapsedTimer clock;
    clock.start();
    w.importAuditScores(path);
    // The GUI thread is not blocked by the audit: the call returns before the work is done.
    QVERIFY2(clock.elapsed() < 50, qPrintable(QString::number(clock.elapsed())));
    finishImport(w);
    QCOMPARE(w.tabs()->currentIndex(), MainWindow::kAuditorTab);
    const QString summary = w.auditorTab()->summary()->text();
    QVERIFY2(summary.contains(QStringLiteral("Imported scores: contradicts the claimed ε = ")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("at 95 %")), qPrintable(summary));
    ChartPanel* plane = w.auditorTab()->plane();
    QVERIFY(!plane->curvePoints(QStringLiteral("audit:roc")).isEmpty());
    QVERIFY(!plane->curvePoints(QStringLiteral("audit:proven")).isEmpty());
    QVERIFY(!plane->curvePoints(QStringLiteral("audit:flagged")).isEmpty());
    // Edit → Copy as dpx command on the Auditor tab: the same audit from the command line.
    const QString command = w.currentTabCommand();
    QVERIFY2(command.contains(QStringLiteral("dpx audit --scores ") + path + QStringLiteral(" --n 1000 --m 1000")),
             qPrintable(command));
    QVERIFY2(command.contains(QStringLiteral("--sigma 4")), qPrintable(command));

    // Weakly separated scores against the same claim: consistent, nothing flagged.
    const QString dpLike = m_dir.filePath(QStringLiteral("dp_like.csv"));
    writeScores(dpLike, 2000, 0.1, 22);
    w.importAuditScores(dpLike);
    finishImport(w);
    const QString consistent = w.auditorTab()->summary()->text();
    QVERIFY2(consistent.contains(QStringLiteral("Imported scores: consistent with the claimed ε = ")),
             qPrintable(consistent));
    QVERIFY(plane->curvePoints(QStringLiteral("audit:flagged")).isEmpty());

    // Other knobs: the imported audit says it was checked against the knobs at import.
    Params other = strongClaim();
    other.sigma = 3.0;
    w.model()->setAll(other, QStringLiteral("other claim"));
    QCoreApplication::processEvents();
    QVERIFY2(w.auditorTab()->summary()->text().contains(QStringLiteral("checked against other knobs")),
             qPrintable(w.auditorTab()->summary()->text()));
  }

  void aMalformedFileNamesTheLineAndField() {
    MainWindow w(m_settings.get());
    w.model()->setAll(strongClaim(), QStringLiteral("test claim"));
    const QString path = m_dir.filePath(QStringLiteral("bad.csv"));
    {
      std::ofstream out(path.toStdString());
      out << "score,member\n1,1\n0,0\n2,1\n0.5,0\n-1,0\n3,2\n";
    }
    w.importAuditScores(path);
    finishImport(w);
    auto* box = w.findChild<QMessageBox*>(QStringLiteral("importScoresError"));
    QVERIFY(box);
    QVERIFY2(box->informativeText().contains(QStringLiteral("line 7: member must be 0 or 1, got '2'")),
             qPrintable(box->informativeText()));
    box->close();
    QCOMPARE(w.tabs()->currentIndex(), MainWindow::kPrivacyTab);
  }

 private:
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_settings;
};

QTEST_MAIN(TestImportScores)
#include "tst_import_scores.moc"
