// One set of knobs, offscreen: the trainer reads the explorer's knobs (a slider change reaches the
// run's m, η, K and σ), n follows the loaded data and can be released, presets apply their
// trainer part, undo covers the trainer's settings, runs show the values they used beside the
// knobs, live mode restarts training on digits and not on Fashion-MNIST, and the frontier view
// computes on digits.
#include <QElapsedTimer>
#include <QFile>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <cmath>

#include "accounting/registry.h"
#include "frontier_panel.h"
#include "knob_widget.h"
#include "main_window.h"
#include "parameter_panel.h"
#include "presets.h"
#include "test_util.h"
#include "trainer_panel.h"
#include "training/feature_extraction.h"

using namespace dpx::core;
using namespace dpx::core::training;
using namespace dpx::ui;

namespace {

constexpr std::int64_t kDigitsTrainingRecords = 1438;  // 1797 digits, 20 % held out

// Types a value into a knob's entry, as a user would.
void typeKnob(MainWindow& w, Knob knob, double value) {
  KnobWidget* widget = w.parameterPanel()->knobWidget(knob);
  widget->entry()->setFocus();
  widget->entry()->setText(QString::number(value, 'g', 12));
  QTest::keyClick(widget->entry(), Qt::Key_Return);
}

// Opens the training tab and waits until the digits are loaded and n follows them.
bool openTrainingTab(MainWindow& w) {
  w.tabs()->setCurrentIndex(MainWindow::kTrainingTab);
  return QTest::qWaitFor([&] { return w.model()->params().n == kDigitsTrainingRecords; }, 10000);
}

const Preset* findPreset(const std::vector<Preset>& presets, const QString& id) {
  for (const Preset& p : presets) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

}  // namespace

class TestTrainerPanel : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_settings;

 private Q_SLOTS:
  void init() {
    m_settings = std::make_unique<QSettings>(m_dir.filePath(QStringLiteral("test.ini")), QSettings::IniFormat);
    m_settings->clear();
  }

  // Loading the data binds n (K follows, so the epochs stay); undo releases it; the toggle binds
  // it again.
  void nFollowsTheDataAndCanBeReleased() {
    MainWindow w(m_settings.get());
    w.show();
    const Params before = w.model()->params();
    QCOMPARE(before.n, std::int64_t(60000));
    QVERIFY(openTrainingTab(w));
    const Params bound = w.model()->params();
    QCOMPARE(nominalEpochs(bound), nominalEpochs(before));  // 60 epochs before and after
    QCOMPARE(bound.K, *stepsForEpochs(60, kDigitsTrainingRecords, bound.m));
    KnobWidget* n = w.parameterPanel()->knobWidget(Knob::kN);
    QVERIFY(n->bindButton() && n->bindButton()->isChecked());
    QVERIFY(!n->slider()->isEnabled());
    QVERIFY(n->entry()->isReadOnly());
    // Undo: n is the what-if it was, released; the runs still use the data's n.
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->params().n, std::int64_t(60000));
    QVERIFY(!w.model()->trainer().nFromData);
    QVERIFY(!n->bindButton()->isChecked());
    QVERIFY(n->slider()->isEnabled());
    QTest::qWait(50);  // nothing binds it back behind the user's back
    QCOMPARE(w.model()->params().n, std::int64_t(60000));
    // The toggle binds it again, as one undo step.
    QTest::mouseClick(n->bindButton(), Qt::LeftButton);
    QCOMPARE(w.model()->params().n, kDigitsTrainingRecords);
    QVERIFY(w.model()->trainer().nFromData);
    // A what-if n: a run trains on the data's n and says so.
    QTest::mouseClick(n->bindButton(), Qt::LeftButton);
    typeKnob(w, Knob::kN, 50000);
    QCOMPARE(w.model()->params().n, std::int64_t(50000));
  }

  // The run's m, η, K and σ are the knobs: a change of a knob reaches the trainer's
  // configuration and the run trains it.
  void knobChangesReachTheTrainer() {
    MainWindow w(m_settings.get());
    w.show();
    QVERIFY(openTrainingTab(w));
    TrainerPanel* t = w.trainerPanel();
    t->calibrateBox()->setChecked(false);  // train at the σ knob
    typeKnob(w, Knob::kM, 64);
    typeKnob(w, Knob::kEta, 0.7);
    typeKnob(w, Knob::kSigma, 2.5);
    typeKnob(w, Knob::kK, 225);  // 10 epochs of 1438 records in batches of 64
    QString error;
    const std::optional<TrainingRequest> request = t->buildRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QCOMPARE(request->base.knobs.m, std::int64_t(64));
    QCOMPARE(request->base.knobs.eta, 0.7);
    QCOMPARE(request->base.knobs.sigma, 2.5);
    QCOMPARE(request->base.epochs, 10.0);
    QVERIFY(!request->base.targetEpsilon);
    for (Mechanism m : allMechanisms()) t->mechanismBox(m)->setChecked(m == Mechanism::kDpSgd);
    QSignalSpy finished(t, &TrainerPanel::trainingFinished);
    QTest::mouseClick(t->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(30000));
    QCOMPARE(t->controller()->results().size(), std::size_t(1));
    const TrainingResult& r = t->controller()->results().front();
    QCOMPARE(r.run.steps, std::int64_t(225));
    QCOMPARE(r.run.sigma, 2.5);
    QCOMPARE(r.run.eta, 0.7);
    QCOMPARE(r.run.accountantParams.m, std::int64_t(64));
    QCOMPARE(r.history.size(), std::size_t(10));
    // Calibrated to a typed target: σ changes, the table shows it beside the knob and says why.
    t->calibrateBox()->setChecked(true);
    t->targetEntry()->setFocus();
    t->targetEntry()->setText(QStringLiteral("2"));
    QTest::keyClick(t->targetEntry(), Qt::Key_Return);
    QCOMPARE(*w.model()->trainer().targetEpsilon, 2.0);
    QTest::mouseClick(t->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(30000));
    const TrainingResult& c = t->controller()->results().front();
    QVERIFY(*c.epsilon <= 2.0);
    QVERIFY(c.run.sigma != 2.5);
    QTableWidgetItem* sigma = t->resultsTable()->item(0, 3);
    QVERIFY2(sigma->text().contains(QStringLiteral("knob 2.5")), qPrintable(sigma->text()));
    QVERIFY2(sigma->toolTip().contains(QStringLiteral("calibrated")), qPrintable(sigma->toolTip()));
  }

  // A user's run-length accident, replayed: a tiny CSV (fewer records than the batch), then
  // Fashion-MNIST. The epochs stay the digits' (not multiplied by m/n of the tiny data), m is
  // capped at the tiny data's size with a message, no step of undo passes through an invalid
  // state, a file that fails to load or is too small disables Start with the reason, and a run
  // estimated over 10 s says how long it takes and how long is left.
  void runLengthsStaySafeAcrossDatasets() {
    MainWindow w(m_settings.get());
    w.show();
    TrainerPanel* t = w.trainerPanel();
    QVERIFY(openTrainingTab(w));
    const int firstUndo = w.model()->undoStack()->index();
    const double epochs = nominalEpochs(w.model()->params());
    const std::int64_t m = w.model()->params().m;
    QVERIFY(m > 20);
    const QString tiny = m_dir.filePath(QStringLiteral("tiny.csv"));
    {
      QFile f(tiny);
      QVERIFY(f.open(QIODevice::WriteOnly));
      for (int i = 0; i < 25; ++i)
        f.write(QStringLiteral("%1,%2,%3\n").arg(i * 0.1).arg(1.0 - i * 0.03).arg(i % 2).toUtf8());
    }
    QSignalSpy adjusted(w.model(), &ParameterModel::dataBindingAdjusted);
    t->setSource(tiny);
    t->ensureDataLoaded();
    QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n < 25; }, 10000));
    const Params onTiny = w.model()->params();
    QVERIFY2(onTiny.validate().isOk(), onTiny.validate().message().c_str());
    QCOMPARE(onTiny.m, onTiny.n);  // the batch capped at the data
    QCOMPARE(nominalEpochs(onTiny), epochs);
    QVERIFY(!adjusted.isEmpty());
    QVERIFY2(adjusted.last().at(0).toString().contains(QStringLiteral("full batch")),
             qPrintable(adjusted.last().at(0).toString()));
    QVERIFY(t->startButton()->isEnabled());

    // A file that breaks: Start is disabled with the parser's reason, and pressing it anyway runs nothing.
    const QString broken = m_dir.filePath(QStringLiteral("broken.csv"));
    {
      QFile f(broken);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("1,2,0\n3,abc,1\n");
    }
    t->setSource(broken);
    t->ensureDataLoaded();
    QTRY_VERIFY_WITH_TIMEOUT(!t->startButton()->isEnabled(), 10000);
    QVERIFY2(t->startButton()->toolTip().contains(QStringLiteral("line 2")), qPrintable(t->startButton()->toolTip()));
    t->start();
    QVERIFY(!t->controller()->running());
    QVERIFY2(t->statusLabel()->text().contains(QStringLiteral("Cannot train")), qPrintable(t->statusLabel()->text()));

    // Too few records to be a run: n is not bound to them and Start says why.
    const QString fewer = m_dir.filePath(QStringLiteral("five.csv"));
    {
      QFile f(fewer);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("1,2,0\n3,4,1\n5,6,0\n7,8,1\n9,10,0\n");
    }
    adjusted.clear();
    t->setSource(fewer);
    t->ensureDataLoaded();
    QTRY_VERIFY_WITH_TIMEOUT(!t->startButton()->isEnabled(), 10000);
    QCOMPARE(w.model()->params().n, onTiny.n);
    QVERIFY(!adjusted.isEmpty());
    QVERIFY2(adjusted.last().at(0).toString().contains(QStringLiteral("fewer than the smallest n")),
             qPrintable(adjusted.last().at(0).toString()));

    if (QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))) {
      t->setSource(QStringLiteral("builtin:fashion-mnist"));
      QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n == 60000; }, 30000));
      const Params onFashion = w.model()->params();
      QVERIFY(t->startButton()->isEnabled());
      QCOMPARE(nominalEpochs(onFashion), epochs);  // before: 60 epochs became 15 360
      QVERIFY(onFashion.K <= static_cast<std::int64_t>(knobInfo(Knob::kK).max));
      // 60 epochs of 60 000 images at the tiny data's batch: far beyond 10 s on any machine.
      t->start();
      QVERIFY2(t->statusLabel()->text().contains(QStringLiteral("takes about")), qPrintable(t->statusLabel()->text()));
      QTRY_VERIFY_WITH_TIMEOUT(t->controller()->running(), 10000);
      QTRY_VERIFY2_WITH_TIMEOUT(t->findChild<QProgressBar*>()->format().contains(QStringLiteral("left")),
                                qPrintable(t->findChild<QProgressBar*>()->format()), 15000);
      t->cancelButton()->click();
      QTRY_VERIFY_WITH_TIMEOUT(!t->controller()->running(), 30000);
    }

    // Every state undo walks through is valid: the bindings never produced an impossible one.
    QUndoStack* undo = w.model()->undoStack();
    for (int index = undo->index(); index >= firstUndo; --index) {
      undo->setIndex(index);
      const Params p = w.model()->params();
      QVERIFY2(p.validate().isOk(), qPrintable(QStringLiteral("undo step %1 (%2): %3")
                                                   .arg(index)
                                                   .arg(undo->text(index))
                                                   .arg(QString::fromStdString(p.validate().message()))));
    }
  }

  // Undo covers the trainer's settings: a ticked mechanism, the dataset, the target.
  void undoCoversTheTrainersSettings() {
    MainWindow w(m_settings.get());
    w.show();
    TrainerPanel* t = w.trainerPanel();
    QVERIFY(!t->mechanismBox(Mechanism::kCyclic)->isChecked());
    t->mechanismBox(Mechanism::kCyclic)->click();
    QVERIFY(w.model()->trainer().mechanisms.contains(QStringLiteral("cyclic")));
    t->setSource(QStringLiteral("builtin:breast-cancer"));
    QCOMPARE(w.model()->trainer().source, QStringLiteral("builtin:breast-cancer"));
    // The breast-cancer data binds n (455 training records) once loaded.
    QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n == 455; }, 10000));
    w.model()->undoStack()->undo();  // n from the data
    w.model()->undoStack()->undo();  // the dataset
    QCOMPARE(w.model()->trainer().source, QStringLiteral("builtin:digits"));
    QCOMPARE(t->datasetBox()->currentData().toString(), QStringLiteral("builtin:digits"));
    w.model()->undoStack()->undo();  // the tick
    QVERIFY(!w.model()->trainer().mechanisms.contains(QStringLiteral("cyclic")));
    QVERIFY(!t->mechanismBox(Mechanism::kCyclic)->isChecked());
  }

  // Every built-in preset with a trainer part applies it completely, in one undo step.
  void presetsApplyTheirTrainerPart() {
    MainWindow w(m_settings.get());
    w.show();
    const std::vector<Preset> presets = builtinPresets();
    int withTrainer = 0;
    for (const Preset& p : presets) {
      if (!p.hasTrainer()) continue;
      ++withTrainer;
      const ModelState before = w.model()->state();
      QVERIFY(w.loadPreset(p));
      const TrainerSettings& t = w.model()->trainer();
      if (!p.trainerData.isEmpty()) QCOMPARE(t.source, p.trainerData);  // no data: the loaded data stays
      QCOMPARE(t.mechanisms, p.trainerMechanisms);
      QCOMPARE(t.calibrate, p.targetEpsilon.has_value());
      QCOMPARE(t.targetEpsilon, p.targetEpsilon);
      QVERIFY2(!t.nFromData, "a paper's preset keeps the paper's n");
      QVERIFY(w.model()->params() == p.params);
      QString error;
      const std::optional<TrainingRequest> request = w.trainerPanel()->buildRequest(&error);
      QVERIFY2(request, qPrintable(p.id + QStringLiteral(": ") + error));
      QCOMPARE(request->base.knobs.m, p.params.m);
      QCOMPARE(request->base.knobs.eta, p.params.eta);
      QCOMPARE(request->base.knobs.sigma, p.params.sigma);
      QCOMPARE(request->base.knobs.lambda, p.params.lambda);
      if (p.trainerEpochs) QCOMPARE(request->base.epochs, *p.trainerEpochs);
      if (p.targetEpsilon) QCOMPARE(*request->base.targetEpsilon, *p.targetEpsilon);
      if (!p.trainerData.isEmpty()) {
        QCOMPARE(request->data.source, p.trainerData.toStdString());
        QCOMPARE(request->data.features, p.trainerFeatures.value_or(FeatureKind::kRaw));
        QCOMPARE(request->data.scaling, p.trainerScaling);
      }
      if (p.params.optimizer) QCOMPARE(request->base.knobs.optimizer, p.params.optimizer);
      w.model()->undoStack()->undo();  // one step undoes all of it
      QVERIFY(w.model()->state().params == before.params);
      QVERIFY(w.model()->state().trainer == before.trainer);
    }
    QVERIFY(withTrainer >= 8);
    // Ryffel et al. 2022's CIFAR-10 setting: η = 1/(2β), 30 epochs, calibrated to ε = 1.
    const Preset* cifar = findPreset(presets, QStringLiteral("seed000-cifar10-resnet18"));
    QVERIFY(cifar);
    QVERIFY(w.loadPreset(*cifar));
    QString error;
    const std::optional<TrainingRequest> r = w.trainerPanel()->buildRequest(&error);
    QVERIFY(r);
    QCOMPARE(r->base.knobs.eta, 1.0 / (2.0 * 55.0));
    QCOMPARE(r->base.epochs, 30.0);
    QCOMPARE(*r->base.targetEpsilon, 1.0);
    QCOMPARE(r->mechanisms, (std::vector<Mechanism>{Mechanism::kDpSgld, Mechanism::kDpSgd, Mechanism::kSgd}));
    // Bu et al. 2020's MNIST row 1: σ = 1.3 as printed, 15 epochs, no calibration.
    const Preset* row1 = findPreset(presets, QStringLiteral("seed003-mnist-row1"));
    QVERIFY(row1 && w.loadPreset(*row1));
    const std::optional<TrainingRequest> r1 = w.trainerPanel()->buildRequest(&error);
    QVERIFY(r1);
    QCOMPARE(r1->base.knobs.sigma, 1.3);
    QCOMPARE(r1->base.epochs, 15.0);
    QVERIFY(!r1->base.targetEpsilon);
  }

  // Features are a setting of the trainer: the panel's choice reaches the run's data key, the
  // extraction reports progress and ends in the data line, undo restores raw values, and a run
  // whose features are not computed yet is estimated with their extraction.
  void scatterNetFeaturesFromThePanel() {
    MainWindow w(m_settings.get());
    w.show();
    QVERIFY(openTrainingTab(w));
    TrainerPanel* t = w.trainerPanel();
    QString error;
    std::optional<TrainingRequest> raw = t->buildRequest(&error);
    QVERIFY2(raw, qPrintable(error));
    QCOMPARE(raw->data.features, FeatureKind::kRaw);
    const std::optional<double> rawEstimate = t->controller()->estimateSeconds(*raw);
    QVERIFY(rawEstimate);
    TrainingRequest scatter = *raw;
    scatter.data.features = FeatureKind::kScatterNet;
    if (!t->controller()->dataInfo(scatter.data)) {
      const std::optional<double> estimate = t->controller()->estimateSeconds(scatter);
      QVERIFY2(estimate, "the raw digits are loaded: the extraction's time is known");
      QVERIFY(*estimate >= scatterNetSecondsEstimate(1797, ImageShape{8, 8, 16.0}, t->threadsBox()->value()));
    }
    const int index = t->featuresBox()->findData(static_cast<int>(FeatureKind::kScatterNet));
    QVERIFY(index >= 0);
    t->featuresBox()->setCurrentIndex(index);
    Q_EMIT t->featuresBox()->activated(index);
    QCOMPARE(w.model()->trainer().features, FeatureKind::kScatterNet);
    QVERIFY(QTest::qWaitFor([&] { return t->controller()->dataInfo(t->dataKey()).has_value(); }, 30000));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.findChild<QLabel*>(QStringLiteral("dataInfo"))->text().contains(QStringLiteral("324 ScatterNet")), 5000);
    const std::optional<TrainingRequest> request = t->buildRequest(&error);
    QVERIFY(request);
    QCOMPARE(request->data.features, FeatureKind::kScatterNet);
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->trainer().features, FeatureKind::kRaw);
    QCOMPARE(t->featuresBox()->currentData().toInt(), static_cast<int>(FeatureKind::kRaw));
  }

  // A network is not convex: the mechanisms whose analyses need convexity are greyed with the
  // reason and left out of a run, the knobs' convexLoss follows (the accountants flag it), a
  // request carries the model, an MLP trains on digits, a CNN reads pixels as they are, and undo
  // brings softmax regression back.
  void networksFromThePanel() {
    MainWindow w(m_settings.get());
    w.show();
    QVERIFY(openTrainingTab(w));
    TrainerPanel* t = w.trainerPanel();
    QVERIFY(w.model()->params().convexLoss);
    const int mlpIndex = t->modelBox()->findData(static_cast<int>(ModelKind::kMlp));
    QVERIFY(mlpIndex >= 0);
    t->modelBox()->setCurrentIndex(mlpIndex);
    Q_EMIT t->modelBox()->activated(mlpIndex);
    QCOMPARE(w.model()->trainer().model.kind, ModelKind::kMlp);
    QVERIFY(!w.model()->params().convexLoss);
    QVERIFY(t->hiddenBox()->isVisibleTo(t));
    for (Mechanism m : {Mechanism::kDpSgld, Mechanism::kCyclic, Mechanism::kOutpert}) {
      QVERIFY(!t->mechanismBox(m)->isEnabled());
      QVERIFY2(t->mechanismBox(m)->toolTip().contains(QStringLiteral("non-convex model")),
               qPrintable(t->mechanismBox(m)->toolTip()));
    }
    QVERIFY(t->mechanismBox(Mechanism::kDpSgd)->isEnabled());
    const auto* sgld = accounting::findAccountant("sgld");
    bool flagged = false;
    for (const accounting::Violation& v : sgld->check(w.model()->params()))
      flagged |= v.assumption == "non-convex model";
    QVERIFY(flagged);
    QString error;
    const std::optional<TrainingRequest> request = t->buildRequest(&error);
    QVERIFY2(request, qPrintable(error));
    QCOMPARE(request->base.model.kind, ModelKind::kMlp);
    QCOMPARE(request->mechanisms, (std::vector<Mechanism>{Mechanism::kDpSgd, Mechanism::kSgd}));  // dp-sgld left out

    typeKnob(w, Knob::kM, 64);
    typeKnob(w, Knob::kK, 30 * std::ceil(static_cast<double>(kDigitsTrainingRecords) / 64));
    QSignalSpy finished(t->controller(), &TrainingController::finished);
    t->start();
    QVERIFY(finished.wait(60000));
    QCOMPARE(t->controller()->results().size(), std::size_t{2});
    for (const TrainingResult& r : t->controller()->results()) {
      QVERIFY(r.model.network());
      QVERIFY2(r.finalTestAccuracy > 0.5, qPrintable(QStringLiteral("%1: %2 (η %3, m %4, σ %5, K %6)")
                                                         .arg(QString::fromLatin1(mechanismId(r.run.mechanism).data()))
                                                         .arg(r.finalTestAccuracy)
                                                         .arg(r.run.eta)
                                                         .arg(r.run.accountantParams.m)
                                                         .arg(r.run.sigma)
                                                         .arg(r.run.steps)));
    }
    QVERIFY(t->controller()->measuredNetworkRate() > 0.0);
    // The frontier leaves dp-sgld out too, and says why.
    FrontierPanel* f = w.frontierPanel();
    f->followBox()->setChecked(false);
    QVERIFY(QTest::qWaitFor([&] { return t->session()->headlineEpsilon().has_value(); }, 10000));
    f->pointsBox()->setValue(3);
    f->seedsBox()->setValue(1);
    QSignalSpy frontierDone(f, &FrontierPanel::frontierFinished);
    f->compute();
    QVERIFY(frontierDone.wait(60000));
    QVERIFY2(f->statusLabel()->text().contains(QStringLiteral("Not drawn: dp-sgld — non-convex model")),
             qPrintable(f->statusLabel()->text()));
    QVERIFY(f->chart()->curveIds().contains(QStringLiteral("dp-sgd")));
    QVERIFY(!f->chart()->curveIds().contains(QStringLiteral("dp-sgld")));

    const int cnnIndex = t->modelBox()->findData(static_cast<int>(ModelKind::kCnn));
    t->modelBox()->setCurrentIndex(cnnIndex);
    Q_EMIT t->modelBox()->activated(cnnIndex);
    QCOMPARE(w.model()->trainer().scaling, std::optional<FeatureScaling>(FeatureScaling::kNone));
    QCOMPARE(w.model()->trainer().features, FeatureKind::kRaw);
    w.model()->undoStack()->undo();
    QCOMPARE(w.model()->trainer().model.kind, ModelKind::kMlp);
    QVERIFY(!w.model()->trainer().scaling.has_value());
    const int linearIndex = t->modelBox()->findData(static_cast<int>(ModelKind::kLinear));
    t->modelBox()->setCurrentIndex(linearIndex);
    Q_EMIT t->modelBox()->activated(linearIndex);
    QCOMPARE(w.model()->trainer().model.kind, ModelKind::kLinear);
    QVERIFY(w.model()->params().convexLoss);
    QVERIFY(t->mechanismBox(Mechanism::kDpSgld)->isEnabled());
    QVERIFY(!t->hiddenBox()->isVisibleTo(t));
  }

  // Live: a settled change restarts training on digits (well under two seconds of work) and
  // not on Fashion-MNIST (tens of seconds), which asks for the Start button instead.
  void liveRestartsOnDigitsNotOnFashionMnist() {
    MainWindow w(m_settings.get());
    w.show();
    QVERIFY(openTrainingTab(w));
    TrainerPanel* t = w.trainerPanel();
    QSignalSpy restarted(t, &TrainerPanel::liveRestarted);
    QSignalSpy finished(t, &TrainerPanel::trainingFinished);
    t->liveBox()->setChecked(true);
    QVERIFY(!restarted.isEmpty() || restarted.wait(5000));  // turning live on trains the current knobs
    QVERIFY(finished.wait(30000));
    restarted.clear();
    QElapsedTimer settle;
    QSignalSpy epochs(t->controller(), &TrainingController::epochDone);
    typeKnob(w, Knob::kSigma, 2.0);
    settle.start();
    QVERIFY2(restarted.wait(5000), qPrintable(t->statusLabel()->text()));
    QVERIFY(epochs.wait(5000) || !epochs.isEmpty());
    qInfo("live: change → first new epoch %lld ms (debounce %d ms)", settle.elapsed(), kLiveDebounceMs);
    QTRY_VERIFY_WITH_TIMEOUT(!t->controller()->running() && !t->controller()->results().empty(), 30000);
    // The restarted run is the new knobs': DP-SGD calibrated to the table's ε at σ = 2 is σ = 2.
    bool sawDpSgd = false;
    for (const TrainingResult& r : t->controller()->results()) {
      if (r.run.mechanism != Mechanism::kDpSgd) continue;
      sawDpSgd = true;
      DPX_COMPARE_REL(r.run.sigma, 2.0, 1e-3);
    }
    QVERIFY(sawDpSgd);
    if (!QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))) {
      QSKIP("Fashion-MNIST is not installed (scripts/test.sh installs dataset-fashion-mnist)");
    }
    t->setSource(QStringLiteral("builtin:fashion-mnist"));
    // Fashion-MNIST comes with its own test set: all 60000 training images train.
    QVERIFY(QTest::qWaitFor([&] { return w.model()->params().n == 60000; }, 30000));
    QTRY_VERIFY_WITH_TIMEOUT(t->statusLabel()->text().contains(QStringLiteral("press Start")), 10000);
    restarted.clear();
    typeKnob(w, Knob::kSigma, 3.0);
    QTest::qWait(3 * kLiveDebounceMs);
    QCOMPARE(restarted.count(), 0);
    QVERIFY2(t->statusLabel()->text().contains(QStringLiteral("press Start")), qPrintable(t->statusLabel()->text()));
    QVERIFY(!t->controller()->running());
  }

  // The frontier view on digits: every point private to its target, curves and bands drawn.
  void frontierViewComputesOnDigits() {
    MainWindow w(m_settings.get());
    w.show();
    FrontierPanel* f = w.frontierPanel();
    f->followBox()->setChecked(false);
    QVERIFY(openTrainingTab(w));
    QSignalSpy analytics(&w, &MainWindow::analyticsApplied);
    QVERIFY(QTest::qWaitFor([&] { return w.session()->headlineEpsilon().has_value(); }, 10000));
    QSignalSpy done(f, &FrontierPanel::frontierFinished);
    QSignalSpy points(f, &FrontierPanel::pointShown);
    w.tabs()->setCurrentIndex(MainWindow::kFrontierTab);
    QTest::mouseClick(f->computeButton(), Qt::LeftButton);
    QVERIFY(done.wait(60000));
    QCOMPARE(points.count(), 20);  // dp-sgld and dp-sgd, 10 points each, as they finished
    // Targets an analysis cannot certify at any σ (the Langevin bound has a floor at these
    // knobs) are reported, not drawn; every drawn point is private to its target.
    const FrontierResult& r = *f->lastResult();
    int drawn = 0;
    for (const FrontierSeries& s : r.series) {
      int ok = 0;
      for (const FrontierPoint& p : s.points) {
        if (!p.ok()) {
          QVERIFY2(QString::fromStdString(p.error).contains(QStringLiteral("unreachable")), p.error.c_str());
          continue;
        }
        ++ok;
        QVERIFY(*p.epsilon <= p.targetEpsilon);
      }
      QCOMPARE(f->chart()->curvePoints(QString::fromLatin1(mechanismId(s.mechanism).data())).size(), ok);
      drawn += ok;
    }
    QVERIFY2(drawn >= 15, qPrintable(QString::number(drawn)));
    for (const char* id : {"dp-sgld", "dp-sgd", "sgd"})
      QVERIFY2(f->chart()->curveIds().contains(QLatin1String(id)), id);
    QCOMPARE(f->chart()->bandIds().size(), 2);
    QVERIFY(f->chart()->marker().has_value());
    // The other mode: accuracy against epochs at one ε.
    f->modeBox()->setCurrentIndex(1);
    QTest::mouseClick(f->computeButton(), Qt::LeftButton);
    QVERIFY(done.wait(120000));
    QCOMPARE(f->lastResult()->vary, FrontierVary::kEpochs);
    QVERIFY(f->chart()->curvePoints(QStringLiteral("dp-sgld")).size() >= 5);
    QVERIFY(f->chart()->message().isEmpty());
    // Knobs that move on leave the frontier labelled as theirs, not the current knobs'.
    const double sigma = w.model()->params().sigma;
    w.model()->setKnob(Knob::kSigma, 2 * sigma);
    QVERIFY2(f->chart()->message().contains(QStringLiteral("before your change")), qPrintable(f->chart()->message()));
    QVERIFY(f->chart()->message().contains(QStringLiteral("σ = ")));
    QVERIFY(f->chart()->faded());
    w.model()->undoStack()->undo();
    QVERIFY(f->chart()->message().isEmpty());
    QVERIFY(!f->chart()->faded());
  }
};

QTEST_MAIN(TestTrainerPanel)
#include "tst_trainer_panel.moc"
