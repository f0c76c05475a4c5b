#include "report.h"

#include <QDateTime>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextDocument>

#include "accounting/pld_accountant.h"
#include "accounting/registry.h"
#include "common/format.h"

namespace dpx::ui {

namespace {

QString n(double v, int digits = 6) { return QString::fromStdString(core::formatNumber(v, digits)); }
QString esc(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

QString boundName(core::accounting::BoundKind kind) {
  return QString::fromLatin1(core::accounting::boundKindName(kind).data());
}

// The document's head and its opening paragraph (when, at which δ, with which conversion).
QString reportHead(const ReportInputs& in) {
  QString html = QStringLiteral(
      "<!DOCTYPE html><html><head><meta charset='utf-8'><title>DP Explorer audit report</title>"
      "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
      "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #bbb;padding:3px 6px;"
      "vertical-align:top}th{background:#eee}.bad{color:#b71c1c}.grey{color:#777}"
      "img{max-width:100%;border:1px solid #ddd}</style></head><body>");
  html += QStringLiteral(
              "<h1>DP Explorer — audit report</h1><p>Generated %1. Every ε is at δ = %2; RDP accountants "
              "convert with the <b>%3</b> conversion.</p>")
              .arg(QDateTime::currentDateTime().toString(Qt::ISODate), n(in.params.delta),
                   QString::fromLatin1(core::accounting::conversionName(in.conversion).data()));
  return html;
}

// "The run": every knob with its meaning, then schedule, sampling and epochs.
QString runSection(const core::Params& params) {
  QString html = QStringLiteral("<h2>The run</h2><table><tr><th>knob</th><th>value</th><th>meaning</th></tr>");
  for (const core::KnobInfo& k : core::knobInfos()) {
    html += QStringLiteral("<tr><td>%1 (%2)</td><td>%3</td><td>%4</td></tr>")
                .arg(QString::fromUtf8(k.symbol), QString::fromLatin1(k.key), n(core::knobValue(params, k.knob)),
                     QString::fromUtf8(k.title));
  }
  html += QStringLiteral("<tr><td>schedule</td><td>%1</td><td></td></tr>")
              .arg(QString::fromLatin1(core::scheduleName(params.schedule).data()));
  html += QStringLiteral("<tr><td>sampling</td><td>%1</td><td>unset: each accountant's own</td></tr>")
              .arg(params.sampling ? QString::fromLatin1(core::samplingName(*params.sampling).data())
                                   : QStringLiteral("unset"));
  html += QStringLiteral("<tr><td>epochs</td><td>%1</td><td>K·m/n</td></tr></table>").arg(n(params.epochs(), 5));
  return html;
}

// One accountant's row; greyed when its assumptions fail for this run.
QString accountantRow(const AccountantSummary& s) {
  QString eps = s.epsilon ? n(s.epsilon->epsilon) : QStringLiteral("— (%1)").arg(esc(s.error));
  if (s.epsilon && s.epsilon->epsilonLower && s.epsilon->epsilonUpper) {
    eps += QStringLiteral("<br>bracket [%1, %2]").arg(n(*s.epsilon->epsilonLower), n(*s.epsilon->epsilonUpper));
  }
  QStringList native;
  for (const auto& v : s.native) native << QStringLiteral("%1 = %2").arg(esc(v.key), n(v.value, 5));
  if (s.epsilon) {
    for (const auto& v : s.epsilon->native) native << QStringLiteral("%1 = %2").arg(esc(v.key), n(v.value, 5));
  }
  QStringList assumed;
  for (const std::string& a : s.assumptions) assumed << esc(a);
  QStringList violated;
  for (const auto& v : s.violations) violated << QStringLiteral("<b>%1</b>: %2").arg(esc(v.assumption), esc(v.reason));
  return QStringLiteral(
             "<tr class='%8'><td><b>%1</b><br>%2<br><i>%3</i></td><td>%4</td><td>%5</td><td>%6</td>"
             "<td>%7</td><td>%9</td><td class='bad'>%10</td></tr>")
      .arg(esc(s.id), esc(s.name), esc(s.citation), eps, s.epsilon ? boundName(s.epsilon->bound) : boundName(s.bound),
           s.epsilon && s.epsilon->alpha ? n(*s.epsilon->alpha, 4) : QStringLiteral("—"),
           native.join(QStringLiteral("<br>")), violated.isEmpty() ? QString() : QStringLiteral("grey"),
           assumed.join(QStringLiteral("<br>")),
           violated.isEmpty() ? QStringLiteral("none") : violated.join(QStringLiteral("<br>")));
}

// The exact pld bracket as an accountant row of its own (the analytics snapshot does not hold it).
AccountantSummary pldSummary(const PldSnapshot& pld) {
  AccountantSummary s;
  const core::accounting::AccountantInfo& info =
      core::accounting::accountantOf<core::accounting::PldAccountant>().info();
  s.id = info.id;
  s.name = info.name;
  s.citation = "Koskela et al. 2020; Doroshenko et al. 2022; Google dp_accounting";
  s.epsilon = pld.epsilon;
  s.error = pld.error;
  s.assumptions = {"Poisson sampling, add/remove neighbours, all iterates released"};
  return s;
}

QString accountantsSection(const ReportInputs& in) {
  QString html = QStringLiteral(
      "<h2>Accountants</h2><table><tr><th>accountant</th><th>ε</th><th>kind</th><th>α*</th>"
      "<th>native parameters</th><th>assumptions</th><th>violated for this run</th></tr>");
  if (in.analytics) {
    for (const AccountantSummary& s : in.analytics->accountants) html += accountantRow(s);
  }
  if (in.pld) html += accountantRow(pldSummary(*in.pld));
  html += QStringLiteral(
      "</table><p class='grey'>Kinds: <i>upper</i> — a proven bound; <i>estimate</i> — an "
      "approximation that can fall below the truth (the CLT); the pld bracket holds the exact ε. "
      "Greyed rows: the theorem's assumptions fail for this run, its number does not certify it.</p>");
  return html;
}

QString chartsSection(const std::vector<ReportChart>& charts) {
  QString html;
  for (const ReportChart& c : charts) {
    html += QStringLiteral("<h3>%1</h3><img src='data:image/png;base64,%2'>")
                .arg(c.title.toHtmlEscaped(), QString::fromLatin1(c.png.toBase64()));
  }
  return html;
}

// A section computed with other knobs or data than the accountants above.
QString staleNote(const QString& changed) {
  return QStringLiteral(
             "<p class='bad'><b>Not the knobs above:</b> this section ran with %1. Its numbers are that run's; "
             "rerun it to report these knobs.</p>")
      .arg(changed.toHtmlEscaped());
}

// The trained mechanisms, one row each; empty when nothing was trained.
QString trainingSection(const ReportInputs& in) {
  if (in.training.empty()) return {};
  QString html = QStringLiteral(
                     "<h2>Training</h2><p>%1</p><table><tr><th>mechanism</th><th>accountant</th><th>ε</th>"
                     "<th>σ</th><th>η</th><th>steps</th><th>test accuracy</th><th>violations</th></tr>")
                     .arg(in.trainingData.toHtmlEscaped());
  if (!in.trainingChanged.isEmpty())
    html.insert(html.indexOf(QStringLiteral("<table>")), staleNote(in.trainingChanged));
  for (const auto& r : in.training) {
    QStringList v;
    for (const std::string& s : r.run.violations) v << esc(s);
    html += QStringLiteral(
                "<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td>%7 %</td>"
                "<td class='bad'>%8</td></tr>")
                .arg(QString::fromLatin1(core::training::mechanismId(r.run.mechanism).data()), esc(r.run.accountant),
                     r.epsilon ? n(*r.epsilon) : QStringLiteral("not private"), n(r.run.sigma), n(r.run.eta),
                     QString::number(r.stepsDone), n(100 * r.finalTestAccuracy, 4), v.join(QStringLiteral("<br>")));
  }
  html += QStringLiteral("</table>");
  return html;
}

}  // namespace

QString buildReportHtml(const ReportInputs& in) {
  QString html = reportHead(in);
  html += runSection(in.params);
  html += accountantsSection(in);
  html += chartsSection(in.charts);
  html += trainingSection(in);
  if (!in.auditHtml.isEmpty() && !in.auditChanged.isEmpty()) {
    QString audit = in.auditHtml;
    const qsizetype heading = audit.indexOf(QStringLiteral("</h2>"));
    audit.insert(heading < 0 ? 0 : heading + 5, staleNote(in.auditChanged));
    html += audit;
  } else {
    html += in.auditHtml;
  }
  html += QStringLiteral("</body></html>");
  return html;
}

bool writeReportPdf(const QString& html, const QString& path) {
  QPdfWriter writer(path);
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setResolution(110);
  writer.setTitle(QStringLiteral("DP Explorer audit report"));
  QTextDocument document;
  document.setHtml(html);
  document.setPageSize(QSizeF(writer.width(), writer.height()));
  document.print(&writer);
  return true;
}

}  // namespace dpx::ui
