#include "charts/chart_legend.h"

#include <QPainter>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace dpx::ui {

namespace {

// The widest a row's text gets: four charts with their legends fit a 1366-pixel-wide screen.
constexpr int kMaxTextWidth = 170;

// A sample of the curve's line (or its point), as the chart draws it.
QIcon sampleIcon(const LegendEntry& e) {
  QPixmap pixmap(22, 12);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  QColor c = e.color;
  if (e.struck) c.setAlpha(90);
  if (e.dot) {
    painter.setPen(Qt::NoPen);
    painter.setBrush(c);
    painter.drawEllipse(QPointF(11, 6), 4, 4);
  } else {
    QPen line(c, 2.4, e.pen);
    line.setCapStyle(Qt::FlatCap);
    painter.setPen(line);
    painter.drawLine(QPointF(1, 6), QPointF(21, 6));
  }
  return QIcon(pixmap);
}

}  // namespace

ChartLegend::ChartLegend(QWidget* parent) : QScrollArea(parent) {
  setObjectName(QStringLiteral("chartLegend"));
  setFrameShape(QFrame::NoFrame);
  setWidgetResizable(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
  setBackgroundRole(QPalette::Base);
  m_inner = new QWidget(this);
  m_inner->setBackgroundRole(QPalette::Base);
  m_rows = new QVBoxLayout(m_inner);
  m_rows->setContentsMargins(0, 8, 2, 2);
  m_rows->setSpacing(0);
  m_rows->addStretch(1);
  setWidget(m_inner);
  setFixedWidth(90);
}

void ChartLegend::setEntries(std::vector<LegendEntry> entries) {
  if (entries == m_shown) return;
  m_shown = std::move(entries);
  QStringList ids;
  for (const LegendEntry& e : m_shown) ids << e.id;
  while (m_buttons.size() > m_shown.size()) {
    delete m_buttons.back();
    m_buttons.pop_back();
  }
  while (m_buttons.size() < m_shown.size()) {
    auto* button = new QToolButton(m_inner);
    button->setAutoRaise(true);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    button->setIconSize(QSize(22, 12));
    button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    const std::size_t index = m_buttons.size();
    connect(button, &QToolButton::clicked, this, [this, index] {
      if (index < m_shown.size()) Q_EMIT clicked(m_shown[index].id);
    });
    m_rows->insertWidget(static_cast<int>(index), button);
    m_buttons.push_back(button);
  }
  QFont font = this->font();
  font.setPointSizeF(8.0);
  int widest = 0;
  for (std::size_t i = 0; i < m_shown.size(); ++i) {
    const LegendEntry& e = m_shown[i];
    QToolButton* button = m_buttons[i];
    QFont f = font;
    f.setStrikeOut(e.struck);
    button->setFont(f);
    // A label longer than the legend may be is elided; the tooltip keeps it whole.
    button->setText(QFontMetrics(f).elidedText(e.label, Qt::ElideRight, kMaxTextWidth));
    button->setIcon(sampleIcon(e));
    button->setToolTip(e.tooltip.isEmpty() ? e.label : e.label + QLatin1Char('\n') + e.tooltip);
    button->setStyleSheet(e.struck ? QStringLiteral("QToolButton { color: #8c8c8c; padding: 0 2px; }")
                                   : QStringLiteral("QToolButton { padding: 0 2px; }"));
    widest = std::max(widest, button->sizeHint().width());
  }
  // As wide as the longest row, the chart keeps the rest. A label that only carries a new number
  // ("ε = 2.53") never narrows it: a new width lays the chart out again, most of a frame; it is
  // fitted anew when the entries themselves change.
  const int wanted = std::max(90, widest + 6 + verticalScrollBar()->sizeHint().width());
  const bool sameEntries = ids == m_widthFor;
  if (!sameEntries || wanted > width()) setFixedWidth(sameEntries ? std::max(wanted, width()) : wanted);
  m_widthFor = std::move(ids);
}

QStringList ChartLegend::labels() const {
  QStringList out;
  for (const LegendEntry& e : m_shown) out << e.label;
  return out;
}

QToolButton* ChartLegend::row(int index) const {
  return index >= 0 && index < static_cast<int>(m_buttons.size()) ? m_buttons[static_cast<std::size_t>(index)]
                                                                  : nullptr;
}

}  // namespace dpx::ui
