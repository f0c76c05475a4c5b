// The Frontier tab's goal-seek group: inputs, the answer in words, the marks on the chart.
#include "goal_seek_box.h"

#include <QHBoxLayout>
#include <QTextDocument>
#include <QVBoxLayout>
#include <algorithm>

#include "common/format.h"

namespace dpx::ui {

using namespace core::training;

const QString GoalSeekBox::kReachCurve = QStringLiteral("goal-seek:reach");
const QString GoalSeekBox::kBestCurve = QStringLiteral("goal-seek:best");
const QString GoalSeekBox::kGoalLineCurve = QStringLiteral("goal-seek:accuracy");

namespace {

QString number(double v, int digits = 4) { return QString::fromStdString(core::formatNumber(v, digits)); }

// Where the frontier chart draws a point (its reported ε, as the series' own markers).
QPointF drawnAt(const FrontierPoint& p, bool byEpsilon, SeedStatistic statistic) {
  return {byEpsilon ? p.epsilon.value_or(p.targetEpsilon) : p.epochs, pointAccuracy(p, statistic)};
}

}  // namespace

GoalSeekBox::GoalSeekBox(Session* session, ChartPanel* chart, QWidget* parent)
    : QGroupBox(QStringLiteral("Goal-seek"), parent), m_session(session), m_chart(chart) {
  setObjectName(QStringLiteral("goalSeekBox"));
  m_accuracy = new QDoubleSpinBox(this);
  m_accuracy->setObjectName(QStringLiteral("goalAccuracy"));
  m_accuracy->setRange(0.1, 100.0);
  m_accuracy->setDecimals(1);
  m_accuracy->setSingleStep(1.0);
  m_accuracy->setValue(90.0);
  m_accuracy->setSuffix(QStringLiteral(" %"));
  m_accuracy->setToolTip(
      QStringLiteral("The test accuracy you need: the answer is the smallest target ε of the frontier that reaches "
                     "it, between the last target that misses it and the first that reaches it"));
  m_epsilon = new QDoubleSpinBox(this);
  m_epsilon->setObjectName(QStringLiteral("goalEpsilon"));
  m_epsilon->setRange(0.001, 1000.0);
  m_epsilon->setDecimals(3);
  m_epsilon->setValue(1.0);
  m_epsilon->setToolTip(
      QStringLiteral("The ε you may spend: the answer is the most accurate point whose reported ε is within it, "
                     "with its σ, epochs, batch and η"));
  m_statistic = new QComboBox(this);
  m_statistic->setObjectName(QStringLiteral("goalStatistic"));
  m_statistic->addItem(QStringLiteral("mean over seeds"), static_cast<int>(SeedStatistic::kMean));
  m_statistic->addItem(QStringLiteral("worst seed"), static_cast<int>(SeedStatistic::kWorstSeed));
  m_statistic->setToolTip(
      QStringLiteral("Mean: the frontier's line. Worst seed: the lower end of its band, so every seed met the goal "
                     "(the conservative reading)"));
  m_answer = new QLabel(QStringLiteral("Compute a frontier to answer from it."), this);
  m_answer->setObjectName(QStringLiteral("goalAnswer"));
  m_answer->setWordWrap(true);
  m_answer->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* inputs = new QHBoxLayout();
  inputs->addWidget(new QLabel(QStringLiteral("accuracy ≥"), this));
  inputs->addWidget(m_accuracy);
  inputs->addSpacing(12);
  inputs->addWidget(new QLabel(QStringLiteral("ε ≤"), this));
  inputs->addWidget(m_epsilon);
  inputs->addSpacing(12);
  inputs->addWidget(m_statistic);
  inputs->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  layout->addLayout(inputs);
  layout->addWidget(m_answer);

  connect(m_accuracy, &QDoubleSpinBox::valueChanged, this, [this] { answer(); });
  connect(m_epsilon, &QDoubleSpinBox::valueChanged, this, [this] { answer(); });
  // Typed or stepped by the user (not by a new frontier's centre): keep it for later frontiers.
  connect(m_epsilon, &QDoubleSpinBox::editingFinished, this, [this] { m_epsilonEdited = true; });
  connect(m_statistic, &QComboBox::currentIndexChanged, this, [this] { answer(); });
  // The answer stays, but says when the knobs or data have moved on since its frontier.
  connect(m_session->model(), &ParameterModel::paramsChanged, this, [this] { answer(); });
  connect(m_session->model(), &ParameterModel::trainerChanged, this, [this] { answer(); });
}

QString GoalSeekBox::answerText() const {
  QTextDocument doc;
  doc.setHtml(m_answer->text());
  return doc.toPlainText();
}

void GoalSeekBox::setFrontier(std::vector<GoalSeries> series, bool byEpsilon, double centerEpsilon,
                              const ResultTag& tag) {
  m_series = std::move(series);
  m_byEpsilon = byEpsilon;
  m_tag = tag;
  if (!m_epsilonEdited && centerEpsilon > 0.0) {
    const QSignalBlocker block(m_epsilon);
    m_epsilon->setValue(centerEpsilon);
  }
  answer();
}

void GoalSeekBox::clearFrontier(const QString& why) {
  m_series.clear();
  m_tag.reset();
  removeMarks();
  m_answer->setText(why.toHtmlEscaped());
  Q_EMIT answered();
}

void GoalSeekBox::removeMarks() {
  for (const QString& id : {kReachCurve, kBestCurve, kGoalLineCurve}) m_chart->removeCurve(id);
}

void GoalSeekBox::answer() {
  if (!m_tag) return;
  const double accuracy = m_accuracy->value() / 100.0;
  const double budget = m_epsilon->value();
  const auto statistic = static_cast<SeedStatistic>(m_statistic->currentData().toInt());
  QStringList lines;
  QVector<QPointF> reached;
  QVector<QPointF> best;
  if (m_byEpsilon) {
    for (const GoalSeries& s : m_series) {
      const core::Result<SmallestEpsilon> a = smallestEpsilonFor(s, accuracy, statistic);
      if (!a) {
        lines << QString::fromStdString(a.status().message()).toHtmlEscaped();
        continue;
      }
      lines << QString::fromStdString(describe(*a, accuracy, statistic)).toHtmlEscaped();
      if (a->first) reached.push_back(drawnAt(*a->first, true, statistic));
    }
  } else {
    lines << QStringLiteral(
                 "Accuracy ≥ %1 %: this frontier varies the epochs at one ε, so it has no smallest ε "
                 "(switch to accuracy against ε).")
                 .arg(number(100 * accuracy, 3));
  }
  const core::Result<std::vector<BestConfiguration>> bests = bestConfigurationFor(m_series, budget, statistic);
  if (bests) {
    for (const BestConfiguration& b : *bests) {
      lines << QString::fromStdString(describe(b, budget, statistic)).toHtmlEscaped();
      if (b.point) best.push_back(drawnAt(*b.point, m_byEpsilon, statistic));
    }
  }
  QString text = lines.join(QStringLiteral("<br>"));
  if (!m_session->isCurrent(*m_tag)) {
    text = QStringLiteral(
               "<span style='color:#8d6e63'>From the frontier of the earlier knobs (%1): press Compute "
               "for the current ones.</span><br>")
               .arg(m_session->whatChanged(*m_tag).toHtmlEscaped()) +
           text;
  }
  m_answer->setText(text);

  CurveStyle ring;
  ring.scatter = true;
  ring.width = 16.0;
  ring.color = QColor(255, 179, 0, 150);
  ring.tooltip = QStringLiteral("goal-seek: the first point of each series reaching the accuracy");
  // An empty mark would still take a legend entry: a mark with nothing to ring is removed.
  auto draw = [this](const QString& id, const QString& label, const QVector<QPointF>& points, const CurveStyle& style) {
    points.isEmpty() ? m_chart->removeCurve(id) : m_chart->setCurve(id, label, points, style);
  };
  draw(kReachCurve, QStringLiteral("reaches %1 %").arg(number(100 * accuracy, 3)), reached, ring);
  CurveStyle square = ring;
  square.color = QColor(0, 137, 123, 150);
  square.tooltip = QStringLiteral("goal-seek: the most accurate point of each series within the ε budget");
  draw(kBestCurve, QStringLiteral("best at ε ≤ %1").arg(number(budget, 3)), best, square);
  QVector<QPointF> goalLine;
  double lo = 0.0;
  double hi = 0.0;
  for (const GoalSeries& s : m_series) {
    for (const FrontierPoint& p : s.points) {
      if (!p.ok()) continue;
      const double x = drawnAt(p, m_byEpsilon, statistic).x();
      lo = lo > 0.0 ? std::min(lo, x) : x;
      hi = std::max(hi, x);
    }
  }
  if (m_byEpsilon && hi > 0.0) goalLine = {{lo, accuracy}, {hi, accuracy}};
  CurveStyle line;
  line.color = QColor(255, 143, 0);
  line.pen = Qt::DotLine;
  line.width = 1.5;
  line.inLegend = false;
  line.tooltip = QStringLiteral("goal-seek: the accuracy asked for");
  draw(kGoalLineCurve, QStringLiteral("accuracy goal"), goalLine, line);
  m_chart->refreshAxes();
  Q_EMIT answered();
}

}  // namespace dpx::ui
