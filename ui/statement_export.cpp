#include "statement_export.h"

#include <QAction>
#include <QClipboard>
#include <QFileDialog>
#include <QGuiApplication>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QStatusBar>
#include <memory>
#include <optional>
#include <utility>

#include "accounting/privacy_statement.h"

namespace dpx::ui {

using core::accounting::HandoffTarget;
using core::accounting::PrivacyStatement;

namespace {

// What the worker hands back: the statement and its JSON, or why there is none.
struct Computed {
  core::Status status;
  std::optional<PrivacyStatement> statement;
  std::string json;
};

QString snippetTitle(HandoffTarget target) {
  return target == HandoffTarget::kOpacus ? QStringLiteral("Opacus") : QStringLiteral("JAX-Privacy");
}

}  // namespace

StatementExport::StatementExport(QMainWindow* window, ParamsSource params, ConversionSource conversion)
    : QObject(window), m_window(window), m_params(std::move(params)), m_conversion(std::move(conversion)) {
  setObjectName(QStringLiteral("statementExport"));
}

void StatementExport::addActions(QMenu* menu) {
  QAction* exportAction = menu->addAction(QStringLiteral("Export privacy &statement…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(m_window, QStringLiteral("Export privacy statement"),
                                                      QStringLiteral("privacy-statement.json"),
                                                      QStringLiteral("Privacy statement (*.json)"));
    if (!path.isEmpty()) exportTo(path);
  });
  exportAction->setObjectName(QStringLiteral("exportPrivacyStatementAction"));
  exportAction->setStatusTip(
      QStringLiteral("Every accountant's verdict on the current knobs, as JSON that `dpx verify FILE` re-checks"));
  QAction* opacus = menu->addAction(QStringLiteral("Copy &Opacus configuration"), this,
                                    [this] { copySnippet(HandoffTarget::kOpacus); });
  opacus->setObjectName(QStringLiteral("copyOpacusConfigurationAction"));
  opacus->setStatusTip(QStringLiteral("The run as Opacus PrivacyEngine.make_private code, to the clipboard"));
  QAction* jax = menu->addAction(QStringLiteral("Copy &JAX-Privacy configuration"), this,
                                 [this] { copySnippet(HandoffTarget::kJaxPrivacy); });
  jax->setObjectName(QStringLiteral("copyJaxPrivacyConfigurationAction"));
  jax->setStatusTip(QStringLiteral("The run as a JAX-Privacy DPKerasConfig, to the clipboard"));
}

void StatementExport::compute(BackgroundJob& job, const QString& what, Deliver deliver) {
  const core::Params params = m_params();
  core::accounting::EpsilonOptions options;
  options.conversion = m_conversion();
  m_window->statusBar()->showMessage(QStringLiteral("Computing the privacy statement for %1…").arg(what));
  job.request(
      [params, options](const std::atomic<bool>& cancel, const BackgroundJob::Progress& progress) -> std::any {
        core::accounting::EpsilonOptions o = options;
        o.exact.cancel = &cancel;
        o.exact.progress = progress;
        auto out = std::make_shared<Computed>();
        core::Result<PrivacyStatement> s = core::accounting::makePrivacyStatement(params, o);
        if (!s) {
          out->status = s.status();
        } else {
          out->json = core::accounting::privacyStatementJson(*s) + "\n";
          out->statement = std::move(*s);
        }
        return std::shared_ptr<const Computed>(std::move(out));
      },
      [this, what, deliver = std::move(deliver)](std::any&& result) {
        auto* computed = std::any_cast<std::shared_ptr<const Computed>>(&result);
        if (!computed || !*computed) return report(false, QStringLiteral("The privacy statement was not computed"));
        if (!(*computed)->statement) {
          return report(false, QStringLiteral("No privacy statement for %1: %2")
                                   .arg(what, QString::fromStdString((*computed)->status.message())));
        }
        deliver((*computed)->json, *(*computed)->statement);
      });
}

void StatementExport::exportTo(const QString& path) {
  compute(m_exportJob, path, [this, path](const std::string& json, const PrivacyStatement&) {
    QSaveFile file(path);
    const QByteArray bytes = QByteArray::fromStdString(json);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
      return report(false, QStringLiteral("Could not write %1: %2").arg(path, file.errorString()));
    }
    report(true, QStringLiteral("Privacy statement written to %1 (check it with: dpx verify %1)").arg(path));
  });
}

void StatementExport::copySnippet(HandoffTarget target) {
  const QString title = snippetTitle(target);
  compute(m_copyJob, title, [this, target, title](const std::string&, const PrivacyStatement& statement) {
    QGuiApplication::clipboard()->setText(QString::fromStdString(handoffSnippet(target, statement)));
    report(true, QStringLiteral("%1 configuration copied to the clipboard").arg(title));
  });
}

void StatementExport::report(bool ok, const QString& message) {
  m_window->statusBar()->showMessage(message, ok ? 8000 : 0);
  m_window->statusBar()->setStyleSheet(ok ? QString() : QStringLiteral("color: #b71c1c;"));
  if (!ok) {
    // Non-blocking: the GUI thread never waits on a dialog it did not ask the user to answer.
    auto* box =
        new QMessageBox(QMessageBox::Warning, QStringLiteral("Privacy statement"), message, QMessageBox::Ok, m_window);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
  Q_EMIT finished(ok, message);
}

}  // namespace dpx::ui
