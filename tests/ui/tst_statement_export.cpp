// File → Export privacy statement and the copy-configuration actions: computed on a background
// job, written atomically, errors in the status bar; and the main window's File menu has them.
#include <QAction>
#include <QClipboard>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMainWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "accounting/handoff_snippets.h"
#include "accounting/privacy_statement.h"
#include "accounting/registry.h"
#include "main_window.h"
#include "statement_export.h"

using namespace dpx;
using core::accounting::HandoffTarget;

namespace {

core::Params run() {
  core::Params p;
  p.sigma = 1.37;
  p.m = 123;
  p.K = 4567;
  return p;
}

}  // namespace

class TestStatementExport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void exportsTheStatementOfTheKnobs() {
    QTemporaryDir dir;
    QMainWindow window;
    ui::StatementExport exporter(&window, run, [] { return core::accounting::Conversion::kClassic; });
    QSignalSpy done(&exporter, &ui::StatementExport::finished);
    const QString path = dir.filePath(QStringLiteral("statement.json"));
    exporter.exportTo(path);
    QVERIFY(done.wait(30000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(o.value(QStringLiteral("format")).toString(), QStringLiteral("dpexplorer-privacy-statement"));
    QVERIFY(o.value(QStringLiteral("run")).toObject().value(QStringLiteral("sigma")).toDouble() == 1.37);
    QCOMPARE(o.value(QStringLiteral("options")).toObject().value(QStringLiteral("conversion")).toString(),
             QStringLiteral("classic"));
    QCOMPARE(o.value(QStringLiteral("accountants")).toArray().size(),
             static_cast<qsizetype>(core::accounting::allAccountants().size()));
    QVERIFY(window.statusBar()->currentMessage().contains(path));
  }

  void unwritablePathIsReported() {
    QMainWindow window;
    ui::StatementExport exporter(&window, run, [] { return core::accounting::Conversion::kImproved; });
    QSignalSpy done(&exporter, &ui::StatementExport::finished);
    const QString path = QStringLiteral("/nonexistent-directory/statement.json");
    exporter.exportTo(path);
    QVERIFY(done.wait(30000));
    QVERIFY(!done.at(0).at(0).toBool());
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("Could not write")));
    QVERIFY(window.statusBar()->currentMessage().contains(path));
  }

  void copiesEachSnippet_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("mustContain");
    QTest::newRow("opacus") << static_cast<int>(HandoffTarget::kOpacus) << "NOISE_MULTIPLIER = 1.37";
    QTest::newRow("jax-privacy") << static_cast<int>(HandoffTarget::kJaxPrivacy) << "train_steps=4567";
  }

  void copiesEachSnippet() {
    QFETCH(int, target);
    QFETCH(QString, mustContain);
    QMainWindow window;
    ui::StatementExport exporter(&window, run, [] { return core::accounting::Conversion::kImproved; });
    QSignalSpy done(&exporter, &ui::StatementExport::finished);
    QGuiApplication::clipboard()->clear();
    exporter.copySnippet(static_cast<HandoffTarget>(target));
    QVERIFY(done.wait(30000));
    QVERIFY(done.at(0).at(0).toBool());
    QVERIFY2(QGuiApplication::clipboard()->text().contains(mustContain),
             qPrintable(QGuiApplication::clipboard()->text()));
  }

  // The main window's File menu offers the export and both copies, for its current knobs.
  void mainWindowHasTheActions() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    ui::MainWindow window(&settings);
    for (const char* name :
         {"exportPrivacyStatementAction", "copyOpacusConfigurationAction", "copyJaxPrivacyConfigurationAction"}) {
      QVERIFY2(window.findChild<QAction*>(QLatin1String(name)), name);
    }
    auto* exporter = window.findChild<ui::StatementExport*>(QStringLiteral("statementExport"));
    QVERIFY(exporter);
    QSignalSpy done(exporter, &ui::StatementExport::finished);
    window.findChild<QAction*>(QStringLiteral("copyOpacusConfigurationAction"))->trigger();
    QVERIFY(done.wait(30000));
    const QString sigma = QString::fromStdString(core::accounting::pythonFloat(window.model()->lastValid().sigma));
    QVERIFY(QGuiApplication::clipboard()->text().contains(QStringLiteral("NOISE_MULTIPLIER = ") + sigma));
  }
};

QTEST_MAIN(TestStatementExport)
#include "tst_statement_export.moc"
