// The legend of a chart with many curves, beside it: one compact row per legend entry (its line
// sample, its label — struck out and grey while the curve is hidden — and its tooltip), in a
// scroll area, so that no entry is ever dropped: Qt's own legend clips the entries that do not
// fit its height. The chart decides the entries and what a click does.
#pragma once

#include <QColor>
#include <QScrollArea>
#include <QStringList>
#include <vector>

QT_BEGIN_NAMESPACE
class QToolButton;
class QVBoxLayout;
QT_END_NAMESPACE

namespace dpx::ui {

struct LegendEntry {
  QString id;  // the curve's
  QString label;
  QString tooltip;
  QColor color;
  Qt::PenStyle pen = Qt::SolidLine;
  bool dot = false;     // a scatter: a point, not a line
  bool struck = false;  // the curve is hidden (a click shows it)
  bool operator==(const LegendEntry&) const = default;
};

class ChartLegend : public QScrollArea {
  Q_OBJECT
 public:
  explicit ChartLegend(QWidget* parent);
  // Rebuilds the rows when the entries changed (nothing happens when they did not).
  void setEntries(std::vector<LegendEntry> entries);
  // The rows' labels, in order (tests): every entry, reachable by scrolling.
  QStringList labels() const;
  QToolButton* row(int index) const;

 Q_SIGNALS:
  void clicked(const QString& id);

 private:
  QWidget* m_inner;
  QVBoxLayout* m_rows;
  std::vector<LegendEntry> m_shown;
  std::vector<QToolButton*> m_buttons;
  QStringList m_widthFor;  // the entries the width was fitted to
};

}  // namespace dpx::ui
