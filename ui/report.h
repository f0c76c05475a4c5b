// The audit report: one self-contained HTML document (or PDF, printed from the same HTML with
// QPdfWriter) with the run's parameters, every accountant's assumptions, violations and values,
// the charts as embedded images, and the training and membership-inference results when present.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "compute/analytics.h"
#include "compute/slow_analytics.h"
#include "training/trainer.h"

namespace dpx::ui {

struct ReportChart {
  QString title;
  QByteArray png;
};

struct ReportInputs {
  core::Params params;
  core::accounting::Conversion conversion = core::accounting::Conversion::kImproved;
  std::shared_ptr<const AnalyticsSnapshot> analytics;
  std::shared_ptr<const PldSnapshot> pld;
  std::vector<ReportChart> charts;
  std::vector<core::training::TrainingResult> training;
  QString trainingData;
  QString auditHtml;  // a prepared section, empty when no audit ran
  // Non-empty when the training or the audit ran with other knobs or data than the report's
  // accountants: what changed (Session::whatChanged), said above the section.
  QString trainingChanged;
  QString auditChanged;
};

QString buildReportHtml(const ReportInputs& inputs);
bool writeReportPdf(const QString& html, const QString& path);

}  // namespace dpx::ui
