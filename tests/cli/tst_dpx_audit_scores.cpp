// dpx audit --scores: membership scores computed elsewhere, audited against a claim. Score files are
// generated here: (a) a DP-like game (members N(μ, 1), non-members N(0, 1), μ well inside the
// claimed Gaussian-DP μ) is "consistent"; (b) a non-private game (μ = 4) against a strong claim
// (ε ≈ 1) "contradicts" at 95 %; (c) the real thing: a softmax regression trained without noise
// (sgd) on half of the digits, the other half held out by coin flips, its per-record loss exported
// as the score and audited against a strong claim. Plus the JSON keys, the statement as the claim,
// and the refusals (one line, exit 2, naming the line or flag).
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>

#include "audit/membership_inference.h"
#include "cli_util.h"
#include "membership_game.h"
#include "training/dataset.h"
#include "training/rng.h"
#include "training/trainer.h"

using dpx::test::CliRun;
using dpx::test::runDpx;
using namespace dpx::core;

namespace {

// A claim with q = 1, K = 1: the Gaussian mechanism with σ = 4, μ = 0.25 (ε ≈ 0.9 at δ = 1e−5).
const QString kStrongClaim = QStringLiteral("--n 1000 --m 1000 --sigma 4 --K 1 --delta 1e-5");
// σ = 50: μ = 0.02, ε ≈ 0.06 — what a run claims when it says it leaks next to nothing.
const QString kVeryStrongClaim = QStringLiteral("--n 1000 --m 1000 --sigma 50 --K 1 --delta 1e-5");

void writeCsv(const std::string& path, const std::vector<double>& scores, const std::vector<std::uint8_t>& members) {
  std::ofstream out(path);
  out << "record,score,member\n";
  out.precision(17);
  for (std::size_t i = 0; i < scores.size(); ++i) out << i << "," << scores[i] << "," << int(members[i]) << "\n";
}

QString verdictOf(const QJsonObject& o) { return o.value(QStringLiteral("verdict")).toString(); }

}  // namespace

class TestDpxAuditScores : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  // (a) members' scores N(0.1, 1), non-members N(0, 1), coin membership: the run is 0.1-GDP, inside
  // the claim's μ = 0.25. Consistent.
  void dpLikeScoresAreConsistent() {
    const auto g = dpx::test::gaussianMembershipScores(4000, 0.1, 11, dpx::test::Membership::kCoin, 1);
    const std::string path = file("dp_like.csv");
    writeCsv(path, g.scores, g.members);
    const CliRun r =
        runDpx(QStringLiteral("audit --scores %1 %2 --json").arg(QString::fromStdString(path), kStrongClaim));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonObject o = dpx::test::jsonOf(r);
    QVERIFY2(verdictOf(o).startsWith(QStringLiteral("consistent with the claimed ε = ")), qPrintable(verdictOf(o)));
    QCOMPARE(o.value(QStringLiteral("source")).toString(), QStringLiteral("scores"));
    QCOMPARE(o.value(QStringLiteral("contradiction")).toBool(), false);
    const double claimed = o.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble();
    QVERIFY2(claimed > 0.7 && claimed < 1.2, qPrintable(QString::number(claimed)));
    QCOMPARE(o.value(QStringLiteral("epsilon_upper_bound")).toDouble(), claimed);
    QVERIFY(o.value(QStringLiteral("epsilon_lower_bound")).toDouble() <= claimed);
    // The keys of the training audit's JSON are all there.
    for (const char* key : {"roc", "auc", "tpr_at_fpr", "tradeoff", "epsilon_lower_bound", "confidence", "bound_method",
                            "epsilon_lower_bound_cp", "roc_band", "mu_hat", "mu_interval", "fdp_audit",
                            "band_contradiction", "proven_curve_source", "attacks", "audit_notes", "scores_file"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("confidence")).toDouble(), 0.95);
    QCOMPARE(o.value(QStringLiteral("audited_records")).toInt(), 4000);
    const double auc = o.value(QStringLiteral("auc")).toDouble();
    QVERIFY2(auc > 0.5 && auc < 0.56, qPrintable(QString::number(auc)));  // Φ(0.1/√2) = 0.528
    const double muHat = o.value(QStringLiteral("mu_hat")).toDouble();
    QVERIFY2(muHat < 0.6, qPrintable(QString::number(muHat)));
    QVERIFY(!r.out.contains(QStringLiteral("nan")) && !r.out.contains(QStringLiteral("inf")));
  }

  // (b) a non-private run: members N(4, 1) against ε ≈ 0.9. Every test should reject; the verdict names them.
  void nonPrivateScoresContradictAStrongClaim() {
    const auto g = dpx::test::gaussianMembershipScores(2000, 4.0, 12, dpx::test::Membership::kCoin, 2);
    const std::string path = file("non_private.csv");
    writeCsv(path, g.scores, g.members);
    const CliRun r =
        runDpx(QStringLiteral("audit --scores %1 %2 --json").arg(QString::fromStdString(path), kStrongClaim));
    QCOMPARE(r.code, 0);
    const QJsonObject o = dpx::test::jsonOf(r);
    const QString verdict = verdictOf(o);
    QVERIFY2(verdict.startsWith(QStringLiteral("contradicts the claimed ε = ")), qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral(" at 95 %: ")), qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral("the ROC band's lower edge crosses the claimed trade-off curve at FPR")),
             qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral("the one-run lower bound ε ≥ ")), qPrintable(verdict));
    QVERIFY2(verdict.contains(QStringLiteral("the one-run f-DP audit rejects the claimed curve")), qPrintable(verdict));
    QCOMPARE(o.value(QStringLiteral("contradiction")).toBool(), true);
    QVERIFY(o.value(QStringLiteral("epsilon_lower_bound")).toDouble() >
            o.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble());
    QVERIFY2(r.err.contains(QStringLiteral("CONTRADICTION")), qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("does not have the claimed guarantee")), qPrintable(r.err));
    // μ read from the band is near the truth, 4.
    const double muHat = o.value(QStringLiteral("mu_hat")).toDouble();
    QVERIFY2(muHat > 3.0 && muHat < 5.0, qPrintable(QString::number(muHat)));
    // The text output opens with the verdict.
    const CliRun text = runDpx(QStringLiteral("audit --scores %1 %2").arg(QString::fromStdString(path), kStrongClaim));
    QCOMPARE(text.code, 0);
    QVERIFY2(text.out.startsWith(QStringLiteral("verdict: contradicts the claimed ε")), qPrintable(text.out.left(200)));
  }

  // The same scores against a weak claim (σ = 0.3: μ ≈ 3.3 would still be contradicted; σ = 0.1
  // gives μ = 10): consistent — the verdict follows the claim, not the scores alone.
  void theSameScoresAgainstAWeakClaimAreConsistent() {
    const std::string path = file("non_private.csv");
    const CliRun r = runDpx(QStringLiteral("audit --scores %1 --n 1000 --m 1000 --sigma 0.1 --K 1 --json")
                                .arg(QString::fromStdString(path)));
    QCOMPARE(r.code, 0);
    QVERIFY2(verdictOf(dpx::test::jsonOf(r)).startsWith(QStringLiteral("consistent")), qPrintable(r.out.left(300)));
  }

  // The claim from a privacy statement is the claim of its knobs.
  void aStatementIsTheSameClaimAsItsKnobs() {
    const std::string statement = file("claim.json");
    const CliRun s =
        runDpx(QStringLiteral("statement %1 --json --output %2").arg(kStrongClaim, QString::fromStdString(statement)));
    QVERIFY2(s.code == 0, qPrintable(s.err));
    const std::string path = file("non_private.csv");
    const CliRun fromStatement = runDpx(QStringLiteral("audit --scores %1 --statement %2 --json")
                                            .arg(QString::fromStdString(path), QString::fromStdString(statement)));
    QVERIFY2(fromStatement.code == 0, qPrintable(fromStatement.err));
    const QJsonObject a = dpx::test::jsonOf(fromStatement);
    const CliRun fromKnobs =
        runDpx(QStringLiteral("audit --scores %1 %2 --json").arg(QString::fromStdString(path), kStrongClaim));
    const QJsonObject b = dpx::test::jsonOf(fromKnobs);
    QCOMPARE(a.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble(),
             b.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble());
    QCOMPARE(a.value(QStringLiteral("epsilon_lower_bound")).toDouble(),
             b.value(QStringLiteral("epsilon_lower_bound")).toDouble());
    QVERIFY(a.value(QStringLiteral("claim"))
                .toObject()
                .value(QStringLiteral("source"))
                .toString()
                .contains(QStringLiteral("the statement ")));
    QVERIFY(verdictOf(a).startsWith(QStringLiteral("contradicts")));
  }

  // The claim from a dp_accounting DpEvent (GaussianDpEvent(4): q = 1, one step, as kStrongClaim)
  // is the claim of the same knobs: the same ε, the same audit numbers, the same verdict.
  void anEventsFileIsTheSameClaimAsItsKnobs() {
    const std::string events = file("claim_events.json");
    {
      std::ofstream out(events);
      out << R"({"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent", "noise_multiplier": 4.0})";
    }
    const std::string path = file("non_private.csv");
    const CliRun fromEvents = runDpx(QStringLiteral("audit --scores %1 --events %2 --delta 1e-5 --json")
                                         .arg(QString::fromStdString(path), QString::fromStdString(events)));
    QVERIFY2(fromEvents.code == 0, qPrintable(fromEvents.err));
    const QJsonObject a = dpx::test::jsonOf(fromEvents);
    const QJsonObject b = dpx::test::jsonOf(
        runDpx(QStringLiteral("audit --scores %1 %2 --json").arg(QString::fromStdString(path), kStrongClaim)));
    QCOMPARE(a.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble(),
             b.value(QStringLiteral("claim")).toObject().value(QStringLiteral("epsilon")).toDouble());
    QCOMPARE(a.value(QStringLiteral("epsilon_lower_bound")).toDouble(),
             b.value(QStringLiteral("epsilon_lower_bound")).toDouble());
    QCOMPARE(verdictOf(a), verdictOf(b));
    QVERIFY(verdictOf(a).startsWith(QStringLiteral("contradicts")));
    QVERIFY(a.value(QStringLiteral("claim"))
                .toObject()
                .value(QStringLiteral("source"))
                .toString()
                .contains(QStringLiteral("events file ")));
    const CliRun knobToo = runDpx(QStringLiteral("audit --scores %1 --events %2 --sigma 2")
                                      .arg(QString::fromStdString(path), QString::fromStdString(events)));
    QCOMPARE(knobToo.code, 2);
    QVERIFY2(knobToo.err.contains(QStringLiteral("--sigma and --events: give one")), qPrintable(knobToo.err));
  }

  // (c) The real thing: sgd (no noise) on a coin-flipped half of 300 digits (few enough for the
  // 650 weights of softmax regression to fit them closely); the score of each record is the trained
  // model's log-odds of its true class (−loss, monotone in it). Against a claim of ε ≈ 0.06 the
  // overfit model is caught (its AUC is only about 0.62: a linear model leaks little, but not that little).
  void aNonPrivateModelTrainedHereIsCaught() {
    Result<training::LoadedData> loaded = training::loadData("builtin:digits");
    QVERIFY2(loaded.isOk(), loaded.status().message().c_str());
    training::Dataset pool = loaded->train;
    const Eigen::Index records = 300;
    pool.features.conservativeResize(records, pool.features.cols());
    pool.labels.resize(static_cast<std::size_t>(records));
    std::vector<std::uint8_t> members(static_cast<std::size_t>(pool.size()));
    training::Xoshiro256 coins = training::streamFor(5, training::Stream::kAudit, 99);
    for (std::uint8_t& b : members) b = (coins() >> 63) != 0 ? 1 : 0;
    auto split = std::make_shared<training::TrainTestSplit>();
    std::vector<Eigen::Index> in;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i]) in.push_back(static_cast<Eigen::Index>(i));
    }
    split->train.name = pool.name;
    split->train.numClasses = pool.numClasses;
    split->train.classNames = pool.classNames;
    split->train.features.resize(static_cast<Eigen::Index>(in.size()), pool.features.cols());
    for (std::size_t r = 0; r < in.size(); ++r) {
      split->train.features.row(static_cast<Eigen::Index>(r)) = pool.features.row(in[r]);
      split->train.labels.push_back(pool.labels[static_cast<std::size_t>(in[r])]);
    }
    split->test = split->train;
    training::TrainerConfig config;
    config.mechanism = training::Mechanism::kSgd;
    config.knobs.m = 16;
    config.knobs.eta = 0.5;
    config.knobs.lambda = 0.0;
    config.epochs = 300;
    config.seed = 5;
    config.evaluateEachEpoch = false;
    Result<std::unique_ptr<training::Trainer>> trainer = training::Trainer::create(config, split);
    QVERIFY2(trainer.isOk(), trainer.status().message().c_str());
    Result<training::TrainingResult> result = (*trainer)->run();
    QVERIFY2(result.isOk(), result.status().message().c_str());
    const std::vector<double> phi = audit::trueClassLogits(result->model, pool.features, pool.labels);
    const std::string path = file("digits_sgd.csv");
    writeCsv(path, phi, members);
    const CliRun r =
        runDpx(QStringLiteral("audit --scores %1 %2 --json").arg(QString::fromStdString(path), kVeryStrongClaim));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject o = dpx::test::jsonOf(r);
    qInfo("digits, sgd on %d of %lld records, 300 epochs: AUC %.4f, mu_hat %.3f, one-run eps >= %.3f; %s",
          int(in.size()), static_cast<long long>(pool.size()), o.value(QStringLiteral("auc")).toDouble(),
          o.value(QStringLiteral("mu_hat")).toDouble(), o.value(QStringLiteral("epsilon_lower_bound")).toDouble(),
          qPrintable(verdictOf(o)));
    QVERIFY2(verdictOf(o).startsWith(QStringLiteral("contradicts the claimed ε = ")), qPrintable(verdictOf(o)));
  }

  void refusalsAreOneLine_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mustMention");
    const QString bad = QString::fromStdString(file("bad.csv"));
    {
      std::ofstream out(file("bad.csv"));
      out << "score,member\n1,1\n2,0\n3,1\n4,0\n5,1\n6,0\n7,2\n";
    }
    const QString good = QString::fromStdString(file("good.csv"));
    {
      std::ofstream out(file("good.csv"));
      out << "score,member\n1,1\n0,0\n";
    }
    QTest::newRow("member 2") << "audit --scores " + bad + " " + kStrongClaim
                              << "line 8: member must be 0 or 1, got '2'";
    QTest::newRow("missing file") << "audit --scores " + good + ".nope " + kStrongClaim << "good.csv.nope";
    QTest::newRow("training flag") << "audit --scores " + good + " --data builtin:digits"
                                   << "--data: not used with --scores";
    QTest::newRow("canaries flag") << "audit --scores " + good + " --canaries 3"
                                   << "canary";
    QTest::newRow("knob and statement") << "audit --scores " + good + " --sigma 2 --statement x.json"
                                        << "--sigma and --statement: give one";
    QTest::newRow("statement without scores") << QStringLiteral("audit --statement x.json") << "--scores";
    QTest::newRow("bad confidence") << "audit --scores " + good + " --confidence 1"
                                    << "--confidence";
    QTest::newRow("bad knob") << "audit --scores " + good + " --sigma -1"
                              << "sigma";
    QTest::newRow("claim outside pld") << "audit --scores " + good + " --sampling shuffle"
                                       << "outside the assumptions of";
    QTest::newRow("missing statement") << "audit --scores " + good + " --statement " + good + ".none"
                                       << "cannot read";
  }
  void refusalsAreOneLine() {
    QFETCH(QString, args);
    QFETCH(QString, mustMention);
    const CliRun r = runDpx(args);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }

 private:
  std::string file(const char* name) const { return m_dir.filePath(QString::fromLatin1(name)).toStdString(); }
  QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestDpxAuditScores)
#include "tst_dpx_audit_scores.moc"
