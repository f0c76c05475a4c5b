#include "configuration_check_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QListWidget>
#include <QResizeEvent>
#include <QShowEvent>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>
#include <any>
#include <utility>

#include "compute/analytics.h"
#include "training/mechanism.h"

namespace dpx::ui {

using core::accounting::CheckOptions;
using core::accounting::Finding;
using core::accounting::Severity;

namespace {

// The checks the trainer's settings ask for: one per ticked private mechanism, or the default
// accountants (rdp, pld) when none is ticked.
std::vector<std::pair<QString, CheckOptions>> checksFor(const ModelState& state, core::accounting::BatchAverage average,
                                                        core::accounting::Conversion conversion) {
  CheckOptions base;
  base.batchAverage = average;
  base.epsilon.conversion = conversion;
  base.calibrated = state.trainer.calibrate;
  base.targetEpsilon = state.trainer.targetEpsilon;
  // Calibrating without a typed target follows the table's ε (the trainer's default target).
  if (base.calibrated && !base.targetEpsilon) base.targetEpsilon = tableEpsilon(state.params, conversion);
  base.calibrated = base.calibrated && base.targetEpsilon.has_value();
  std::vector<std::pair<QString, CheckOptions>> checks;
  for (const QString& id : state.trainer.mechanisms) {
    const auto mechanism = core::training::parseMechanism(id.toStdString());
    if (!mechanism || !core::training::isPrivate(*mechanism)) continue;
    CheckOptions options = base;
    options.reported = id.toStdString();
    checks.emplace_back(QString::fromUtf8(core::training::mechanismName(*mechanism).data()), std::move(options));
  }
  if (checks.empty()) checks.emplace_back(QString(), base);
  return checks;
}

void merge(std::vector<ModelFinding>& into, const Finding& finding, const QString& mechanism) {
  auto it = std::find_if(into.begin(), into.end(), [&](const ModelFinding& f) { return f.finding == finding; });
  if (it == into.end()) it = into.insert(into.end(), ModelFinding{finding, {}});
  if (!mechanism.isEmpty()) it->mechanisms << mechanism;
}

QString rowText(const Finding& f) {
  return QString::fromUtf8(core::accounting::severityName(f.severity).data()) + QStringLiteral(": ") +
         QString::fromStdString(f.knob) + QStringLiteral(": ") + QString::fromStdString(f.message);
}

}  // namespace

ModelCheck checkModelState(const ModelState& state, core::accounting::BatchAverage average,
                           core::accounting::Conversion conversion) {
  ModelCheck out;
  for (const auto& [mechanism, options] : checksFor(state, average, conversion)) {
    const core::Result<core::accounting::ConfigurationCheck> check =
        core::accounting::checkConfiguration(state.params, options);
    if (!check) {
      out.error = QString::fromStdString(check.status().message());
      continue;
    }
    for (const Finding& f : check->findings) merge(out.findings, f, mechanism);
  }
  std::stable_partition(out.findings.begin(), out.findings.end(),
                        [](const ModelFinding& f) { return f.finding.severity == Severity::kError; });
  return out;
}

ConfigurationCheckView::ConfigurationCheckView(ParameterModel* model, QWidget* parent)
    : QGroupBox(QStringLiteral("Configuration check"), parent),
      m_model(model),
      m_view(ViewController::Freshness::kNeverBackwards, [this] { start(); }) {
  setObjectName(QStringLiteral("configurationCheck"));
  m_errorIcon = style()->standardIcon(QStyle::SP_MessageBoxCritical);
  m_warningIcon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
  m_okIcon = style()->standardIcon(QStyle::SP_DialogApplyButton);
  setToolTip(
      QStringLiteral("Mismatches between how the run is done and what its reported ε assumes: sampler, "
                     "neighbouring relation, batch averaging, δ against 1/n, and an implausible ε."));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  m_list = new QListWidget(this);
  m_list->setWordWrap(true);
  m_list->setResizeMode(QListView::Adjust);
  m_list->setSelectionMode(QAbstractItemView::NoSelection);
  m_list->setFocusPolicy(Qt::NoFocus);
  m_list->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
  m_list->setSpacing(1);
  layout->addWidget(m_list);
  connect(model, &ParameterModel::paramsChanged, this, &ConfigurationCheckView::request);
  connect(model, &ParameterModel::trainerChanged, this, &ConfigurationCheckView::request);
  connect(model, &ParameterModel::viewChanged, this, &ConfigurationCheckView::request);
  connect(model, &ParameterModel::batchAverageChanged, this, &ConfigurationCheckView::request);
  request();
}

void ConfigurationCheckView::request() {
  m_view.schedule(m_model->lastEditDragged() ? kDragDebounceMs : kEditDebounceMs);
}

// The knobs the charts show: the last valid ones while the current combination is invalid.
void ConfigurationCheckView::start() {
  ModelState state = m_model->state();
  state.params = m_model->lastValid();
  const core::accounting::BatchAverage average = m_model->batchAverage();
  const core::accounting::Conversion conversion = m_model->conversion();
  m_view.run(
      [state, average, conversion](const std::atomic<bool>&, const BackgroundJob::Progress&) -> std::any {
        return checkModelState(state, average, conversion);
      },
      [this](std::any&& result) {
        if (auto* check = std::any_cast<ModelCheck>(&result)) show(std::move(*check));
      });
}

void ConfigurationCheckView::show(ModelCheck check) {
  QElapsedTimer timer;
  timer.start();
  m_last = std::move(check);
  m_list->clear();
  int errors = 0;
  for (const ModelFinding& f : m_last.findings) {
    const bool error = f.finding.severity == Severity::kError;
    errors += error ? 1 : 0;
    auto* item = new QListWidgetItem(
        error ? m_errorIcon : m_warningIcon,
        QString::fromStdString(f.finding.knob) + QStringLiteral(" — ") + QString::fromStdString(f.finding.message));
    item->setToolTip(rowText(f.finding) + (f.mechanisms.isEmpty() ? QString()
                                                                  : QStringLiteral("\n\nFound for: ") +
                                                                        f.mechanisms.join(QStringLiteral(", "))));
    m_list->addItem(item);
  }
  if (m_last.findings.empty()) {
    m_list->addItem(new QListWidgetItem(m_okIcon, m_last.error.isEmpty()
                                                      ? QStringLiteral("No mismatches")
                                                      : QStringLiteral("Not checked: ") + m_last.error));
  }
  const int warnings = static_cast<int>(m_last.findings.size()) - errors;
  QStringList counts;
  if (errors > 0) counts << QStringLiteral("%1 error%2").arg(errors).arg(errors == 1 ? "" : "s");
  if (warnings > 0) counts << QStringLiteral("%1 warning%2").arg(warnings).arg(warnings == 1 ? "" : "s");
  setTitle(QStringLiteral("Configuration check") +
           (counts.isEmpty() ? QString() : QStringLiteral(" — ") + counts.join(QStringLiteral(", "))));
  if (isVisible()) fitRows();  // a hidden list is laid out when shown (showEvent)
  m_fillMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  Q_EMIT checkShown();
}

// At least the first two findings in full without scrolling (the splitter gives way to the
// minimum), at most kMaxListHeight: more scroll.
void ConfigurationCheckView::fitRows() {
  constexpr int kMaxListHeight = 190;
  m_list->doItemsLayout();
  int height = 2 * m_list->frameWidth();
  for (int row = 0; row < std::min(m_list->count(), 2); ++row)
    height += m_list->visualItemRect(m_list->item(row)).height() + 2 * m_list->spacing();
  m_list->setMinimumHeight(std::min(height, kMaxListHeight));
}

void ConfigurationCheckView::showEvent(QShowEvent* event) {
  QGroupBox::showEvent(event);
  fitRows();
}

void ConfigurationCheckView::resizeEvent(QResizeEvent* event) {
  QGroupBox::resizeEvent(event);
  if (isVisible() && event->size().width() != event->oldSize().width()) fitRows();  // wrapped rows change height
}

QStringList ConfigurationCheckView::rowsText() const {
  QStringList rows;
  for (const ModelFinding& f : m_last.findings) rows << rowText(f.finding);
  if (rows.isEmpty()) rows << QStringLiteral("No mismatches");
  return rows;
}

}  // namespace dpx::ui
