// The membership-inference audit (core/audit): the one-run ε lower bound of Steinke, Nasr &
// Jagielski 2023 against a transcription of their published p-value routine, its validity on
// randomized response (exact and simulated, fixed seeds), ROC/AUC identities, LiRA's Gaussian
// fits; then whole audits: a memorising non-private model is clearly attacked, DP-SGD at ε = 1
// stays below its rdp bound, canaries, determinism, cancel and the rejected inputs.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <atomic>
#include <cmath>
#include <numeric>

#include "audit/epsilon_lower_bound.h"
#include "audit/membership_inference.h"
#include "audit/roc.h"
#include "io/json_writer.h"
#include "test_util.h"
#include "training/dataset.h"
#include "training/rng.h"
#include "training/trainer.h"

using namespace dpx::core;
using namespace dpx::core::audit;
using namespace dpx::core::training;

namespace {

// Rows [begin, begin + count) of a dataset.
Dataset rows(const Dataset& data, Eigen::Index begin, Eigen::Index count) {
  Dataset out;
  out.name = data.name;
  out.numClasses = data.numClasses;
  out.classNames = data.classNames;
  out.features = data.features.middleRows(begin, count);
  out.labels.assign(data.labels.begin() + begin, data.labels.begin() + begin + count);
  return out;
}

// The first `trainRecords` of builtin:breast-cancer, the next 150 as the test set.
std::shared_ptr<const TrainTestSplit> breastCancer(Eigen::Index trainRecords) {
  Result<LoadedData> loaded = loadData("builtin:breast-cancer");
  if (!loaded) return nullptr;
  auto split = std::make_shared<TrainTestSplit>();
  split->train = rows(loaded->train, 0, trainRecords);
  split->test = rows(loaded->train, trainRecords, 150);
  return split;
}

// builtin:digits split 80/20 (seed 1); the first `trainRecords` of the training part.
std::shared_ptr<const TrainTestSplit> digits(Eigen::Index trainRecords = -1) {
  Result<LoadedData> loaded = loadData("builtin:digits");
  if (!loaded) return nullptr;
  Result<TrainTestSplit> split = splitDataset(loaded->train, 0.2, 1);
  if (!split) return nullptr;
  if (trainRecords >= 0) split->train = rows(split->train, 0, trainRecords);
  return std::make_shared<const TrainTestSplit>(std::move(*split));
}

std::unique_ptr<Trainer> makeTrainer(const TrainerConfig& config, std::shared_ptr<const TrainTestSplit> data) {
  Result<std::unique_ptr<Trainer>> t = Trainer::create(config, std::move(data));
  if (!t) qWarning("%s", t.status().message().c_str());
  return t ? std::move(*t) : nullptr;
}

// Non-private SGD that memorises: tiny λ, many epochs, large steps, small batches.
TrainerConfig memorisingConfig() {
  TrainerConfig c;
  c.mechanism = Mechanism::kSgd;
  c.knobs.m = 5;
  c.knobs.eta = 2.0;
  c.knobs.optimizer = dpx::core::Optimizer::kSgd;  // η = 2 is a plain step's size
  c.knobs.lambda = 1e-6;
  c.epochs = 300;
  c.seed = 11;
  return c;
}

// DP-SGD calibrated to ε = 1 at δ = 1e−5 (rdp accountant), hyperparameters that learn digits.
TrainerConfig dpSgdAtOne() {
  TrainerConfig c;
  c.mechanism = Mechanism::kDpSgd;
  c.knobs.m = 64;
  c.knobs.eta = 2.0;
  c.knobs.optimizer = dpx::core::Optimizer::kSgd;  // η = 2 is a plain step's size
  c.knobs.L = 1.0;
  c.knobs.lambda = 1e-4;
  c.knobs.delta = 1e-5;
  c.targetEpsilon = 1.0;
  c.epochs = 8;
  c.seed = 5;
  return c;
}

}  // namespace

class TestMembershipInference : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---- the one-run statistics --------------------------------------------------------------

  void pValueMatchesTheReferenceRoutine_data() {
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("r");
    QTest::addColumn<qint64>("v");
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<double>("delta");
    QTest::addColumn<double>("expected");
    // Expected: Steinke, Nasr & Jagielski 2023's p_value_DP_audit transcribed to pure Python
    // (scipy's binom.sf/pmf replaced by math.comb sums), evaluated in double.
    QTest::newRow("Steinke23 p_value_DP_audit m=r=100 v=60 eps=0")
        << qint64(100) << qint64(100) << qint64(60) << 0.0 << 1e-5 << 0.028556460423992704;
    QTest::newRow("Steinke23 p_value_DP_audit m=r=100 v=70 eps=0.5")
        << qint64(100) << qint64(100) << qint64(70) << 0.5 << 1e-5 << 0.06577811030964284;
    QTest::newRow("Steinke23 p_value_DP_audit m=1000 r=200 v=150 eps=1")
        << qint64(1000) << qint64(200) << qint64(150) << 1.0 << 1e-5 << 0.3044225124350043;
    QTest::newRow("Steinke23 p_value_DP_audit m=1000 r=v=600 eps=2")
        << qint64(1000) << qint64(600) << qint64(600) << 2.0 << 1e-5 << 0.00022547117595454787;
    QTest::newRow("Steinke23 p_value_DP_audit m=50 r=20 v=15 pure DP")
        << qint64(50) << qint64(20) << qint64(15) << 0.3 << 0.0 << 0.08423137561018863;
    QTest::newRow("Steinke23 p_value_DP_audit m=r=1000 v=500 eps=0")
        << qint64(1000) << qint64(1000) << qint64(500) << 0.0 << 1e-5 << 0.513116002465994;
  }
  void pValueMatchesTheReferenceRoutine() {
    QFETCH(qint64, m);
    QFETCH(qint64, r);
    QFETCH(qint64, v);
    QFETCH(double, epsilon);
    QFETCH(double, delta);
    QFETCH(double, expected);
    Result<double> p = oneRunPValue(m, r, v, epsilon, delta);
    QVERIFY2(p.isOk(), p.status().message().c_str());
    DPX_COMPARE_REL(*p, expected, 1e-9);
  }

  void lowerBoundMatchesTheReferenceRoutine_data() {
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("r");
    QTest::addColumn<qint64>("v");
    QTest::addColumn<double>("delta");
    QTest::addColumn<double>("confidence");
    QTest::addColumn<double>("expected");
    // Expected: Steinke et al. 2023's get_eps_audit (same transcription, 60 bisection steps).
    // The first row is the example in the routine's own __main__.
    QTest::newRow("Steinke23 get_eps_audit(1000, 600, 600, 1e-5, 0.05)")
        << qint64(1000) << qint64(600) << qint64(600) << 1e-5 << 0.95 << 5.270399463514697;
    QTest::newRow("Steinke23 get_eps_audit(100, 100, 100, 1e-5, 0.05)")
        << qint64(100) << qint64(100) << qint64(100) << 1e-5 << 0.95 << 3.490215955326397;
    QTest::newRow("Steinke23 get_eps_audit(1000, 1000, 700, 1e-5, 0.05)")
        << qint64(1000) << qint64(1000) << qint64(700) << 1e-5 << 0.95 << 0.7317404494186919;
    QTest::newRow("Steinke23 get_eps_audit(1000, 200, 150, 0, 0.05)")
        << qint64(1000) << qint64(200) << qint64(150) << 0.0 << 0.95 << 0.8213962430643411;
    QTest::newRow("Steinke23 get_eps_audit(500, 100, 80, 1e-6, 0.01)")
        << qint64(500) << qint64(100) << qint64(80) << 1e-6 << 0.99 << 0.8033555490013132;
  }
  void lowerBoundMatchesTheReferenceRoutine() {
    QFETCH(qint64, m);
    QFETCH(qint64, r);
    QFETCH(qint64, v);
    QFETCH(double, delta);
    QFETCH(double, confidence);
    QFETCH(double, expected);
    Result<double> e = oneRunEpsilonLowerBound(m, r, v, delta, confidence);
    QVERIFY2(e.isOk(), e.status().message().c_str());
    DPX_COMPARE_REL(*e, expected, 1e-8);
    // It is on the rejected side: the p-value there is at most 1 − confidence.
    QVERIFY(*oneRunPValue(m, r, v, *e, delta) <= 1.0 - confidence);
  }

  void boundIsZeroWhenTheAttackIsAtChance() {
    // Half the guesses right is what a coin achieves: no evidence against ε = 0.
    QCOMPARE(*oneRunEpsilonLowerBound(1000, 1000, 500, 1e-5, 0.95), 0.0);
    QCOMPARE(*oneRunEpsilonLowerBound(1000, 200, 90, 1e-5, 0.95), 0.0);
    QCOMPARE(*oneRunEpsilonLowerBound(1000, 0, 0, 1e-5, 0.95), 0.0);
    // A few lucky guesses are still chance: P[Binomial(100, 1/2) ≥ 55] ≈ 0.18 > 0.05.
    QCOMPARE(*oneRunEpsilonLowerBound(100, 100, 55, 1e-5, 0.95), 0.0);
  }

  void boundIsMonotoneInTheNumberOfCorrectGuesses() {
    double previous = 0.0;
    int positive = 0;
    for (std::int64_t v = 100; v <= 200; v += 5) {
      Result<double> e = oneRunEpsilonLowerBound(2000, 200, v, 1e-5, 0.95);
      QVERIFY(e.isOk());
      QVERIFY2(*e >= previous, qPrintable(QStringLiteral("v = %1: %2 < %3").arg(v).arg(*e).arg(previous)));
      if (*e > 0.0) {
        QVERIFY(*e > previous || previous == 0.0);  // strictly once it has left 0
        ++positive;
      }
      previous = *e;
    }
    QVERIFY(positive >= 10);
    // More guesses at the same accuracy is more evidence.
    QVERIFY(*oneRunEpsilonLowerBound(2000, 400, 320, 1e-5, 0.95) >
            *oneRunEpsilonLowerBound(2000, 200, 160, 1e-5, 0.95));
    // Higher confidence costs: the bound shrinks.
    QVERIFY(*oneRunEpsilonLowerBound(2000, 200, 160, 1e-5, 0.99) <
            *oneRunEpsilonLowerBound(2000, 200, 160, 1e-5, 0.95));
  }

  void boundIsValidForRandomizedResponseExactly_data() {
    QTest::addColumn<double>("epsilon0");
    QTest::newRow("RR eps0=0.5") << 0.5;
    QTest::newRow("RR eps0=1") << 1.0;
    QTest::newRow("RR eps0=2") << 2.0;
  }
  void boundIsValidForRandomizedResponseExactly() {
    // ε₀-randomized response on m = r = 200 membership bits: each guess is right with
    // probability q₀ = e^ε₀/(1 + e^ε₀), so V ~ Binomial(200, q₀) exactly (Steinke et al. 2023
    // §3: the worst case of their theorem at δ = 0). P[bound(V) > ε₀] must be ≤ 1 − confidence;
    // the theorem is tight here, so it is also well above 0.
    QFETCH(double, epsilon0);
    const std::int64_t m = 200;
    const double q0 = 1.0 / (1.0 + std::exp(-epsilon0));
    double failure = 0.0;
    for (std::int64_t v = 0; v <= m; ++v) {
      Result<double> e = oneRunEpsilonLowerBound(m, m, v, 0.0, 0.95);
      QVERIFY(e.isOk());
      if (*e > epsilon0) {
        failure += std::exp(std::lgamma(m + 1.0) - std::lgamma(v + 1.0) - std::lgamma(m - v + 1.0) +
                            static_cast<double>(v) * std::log(q0) + static_cast<double>(m - v) * std::log1p(-q0));
      }
    }
    QVERIFY2(failure <= 0.05, qPrintable(QStringLiteral("P[bound > eps0] = %1").arg(failure)));
    QVERIFY2(failure >= 0.01, qPrintable(QStringLiteral("P[bound > eps0] = %1 (suspiciously loose)").arg(failure)));
  }

  void auditPipelineIsValidForSimulatedRandomizedResponse() {
    // The whole statistics pipeline (guess grid, two attacks, Bonferroni) on 300 simulated
    // runs of 1-DP randomized response over m = 400 records (fixed seed). The largest bound may
    // exceed ε₀ = 1 in at most 5 % of runs; 30 of 300 is beyond the 99.9 % quantile of
    // Binomial(300, 0.05) (= 27), so a correct implementation fails this with < 0.1 % chance.
    const double epsilon0 = 1.0;
    const double q0 = 1.0 / (1.0 + std::exp(-epsilon0));
    const int runs = 300;
    const std::size_t m = 400;
    Xoshiro256 engine(20230515);
    auto uniform = [&] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };
    int exceed = 0;
    double sumBound = 0.0;
    for (int t = 0; t < runs; ++t) {
      std::vector<std::uint8_t> members(m);
      std::vector<std::vector<double>> scores(2, std::vector<double>(m));
      for (std::size_t i = 0; i < m; ++i) {
        members[i] = uniform() < 0.5 ? 1 : 0;
        const bool says = uniform() < q0 ? members[i] != 0 : members[i] == 0;
        scores[0][i] = (says ? 1.0 : 0.0) + 0.5 * uniform();  // RR bit, random tie-break
        scores[1][i] = uniform();                             // an attack at chance
      }
      Result<std::vector<OneRunBound>> b = oneRunAudit(scores, members, 1e-5, 0.95);
      QVERIFY(b.isOk());
      const double best = std::max((*b)[0].epsilon, (*b)[1].epsilon);
      if (best > epsilon0) ++exceed;
      sumBound += best;
      QCOMPARE((*b)[0].tests, 2 * static_cast<int>(guessGrid(static_cast<std::int64_t>(m)).size()));
    }
    QVERIFY2(exceed < 30, qPrintable(QStringLiteral("%1 of %2 runs exceeded eps0").arg(exceed).arg(runs)));
    // …and the audit has power: on average it certifies a good part of ε₀.
    QVERIFY2(sumBound / runs > 0.3, qPrintable(QStringLiteral("mean bound %1").arg(sumBound / runs)));
  }

  void guessGridIsFixedAndWithinTheRecords() {
    const std::vector<GuessRule> grid = guessGrid(1000);
    QCOMPARE(grid.size(), std::size_t{11});
    for (const GuessRule& g : grid) {
      QVERIFY(g.kPlus >= 1 && g.kMinus >= 0 && g.kPlus + g.kMinus <= 1000);
    }
    QCOMPARE(grid.front().kPlus + grid.front().kMinus, std::int64_t{20});
    QVERIFY(!guessGrid(1).empty());
    QVERIFY(guessGrid(0).empty());
    // Correct guesses: top 2 IN, bottom 1 OUT on a hand example (scores 5 > 4 > 3 > 2 > 1).
    const std::vector<double> scores{3, 5, 1, 4, 2};
    const std::vector<std::uint8_t> members{0, 1, 0, 0, 1};
    QCOMPARE(correctGuesses(scores, members, {2, 1}), std::int64_t{2});  // 5 (IN ✓), 4 (IN ✗), 1 (OUT ✓)
  }

  void clopperPearsonHasItsClosedForms() {
    // 0 of n: 1 − (1 − c)^{1/n}; n − 1 of n: c^{1/n} (P[B ≤ k] = 1 − c solved by hand).
    DPX_COMPARE_REL(*clopperPearsonUpper(0, 100, 0.95), 1.0 - std::pow(0.05, 0.01), 1e-10);
    DPX_COMPARE_REL(*clopperPearsonUpper(99, 100, 0.95), std::pow(0.95, 0.01), 1e-10);
    QCOMPARE(*clopperPearsonUpper(5, 5, 0.95), 1.0);
    QCOMPARE(*clopperPearsonUpper(0, 0, 0.95), 1.0);
    QVERIFY(!clopperPearsonUpper(6, 5, 0.95).isOk());
    // (ε, δ)-DP: FPR + e^ε FNR ≥ 1 − δ, so FPR = 0.01, FNR = 0.5 forces ε ≥ log 50.
    DPX_COMPARE_REL(epsilonFromErrorRates(0.01, 0.5, 0.0), std::log(50.0), 1e-12);
    DPX_COMPARE_REL(epsilonFromErrorRates(0.5, 0.01, 0.0), std::log(50.0), 1e-12);
    QCOMPARE(epsilonFromErrorRates(0.5, 0.5, 0.0), 0.0);
  }

  void splitEstimateFindsAPerfectAttackAndNotAChanceOne() {
    // 2000 records; attack 0 separates members perfectly, attack 1 is noise.
    Xoshiro256 engine(3);
    const std::size_t m = 2000;
    std::vector<std::uint8_t> members(m);
    std::vector<std::uint8_t> half(m);
    std::vector<std::vector<double>> scores(2, std::vector<double>(m));
    for (std::size_t i = 0; i < m; ++i) {
      members[i] = (engine() >> 63) != 0;
      half[i] = (engine() >> 63) != 0;
      scores[0][i] = members[i] ? 1.0 + static_cast<double>(i) / m : static_cast<double>(i) / m - 1.0;
      scores[1][i] = static_cast<double>(engine() >> 11);
    }
    Result<std::vector<SplitBound>> b = splitClopperPearsonAudit(scores, members, half, 1e-5, 0.95);
    QVERIFY(b.isOk());
    // Perfect separation on ~500 per side: FPR and FNR bounds ≈ 3/500 (rule of three).
    QVERIFY2((*b)[0].epsilon > 4.0, qPrintable(QString::number((*b)[0].epsilon)));
    QCOMPARE((*b)[0].fpr, 0.0);
    QCOMPARE((*b)[0].fnr, 0.0);
    QVERIFY2((*b)[1].epsilon < 0.3, qPrintable(QString::number((*b)[1].epsilon)));
    QVERIFY((*b)[0].positives + (*b)[0].negatives > 900);
  }

  // ---- ROC and LiRA -------------------------------------------------------------------------

  void rocAndAucOnAHandExample() {
    // Scores by decreasing value with members 1 1 0 1 0 0 (3 positives, 3 negatives).
    // Mann–Whitney: pairs (member above non-member) = 3 + 3 + 2 = 8 of 9, AUC = 8/9.
    const std::vector<double> scores{6, 5, 4, 3, 2, 1};
    const std::vector<std::uint8_t> members{1, 1, 0, 1, 0, 0};
    const std::vector<RocPoint> roc = rocCurve(scores, members);
    QCOMPARE(roc.size(), std::size_t{7});
    QCOMPARE(roc.front().fpr, 0.0);
    QCOMPARE(roc.back().tpr, 1.0);
    DPX_COMPARE_REL(areaUnderCurve(roc), 8.0 / 9.0, 1e-12);
    DPX_COMPARE_REL(tprAtFpr(roc, 0.0), 2.0 / 3.0, 1e-12);
    DPX_COMPARE_REL(tprAtFpr(roc, 1.0 / 3.0), 1.0, 1e-12);
    const std::vector<TradeoffPoint> t = tradeoffPoints(roc);
    DPX_COMPARE_REL(t[2].y, 1.0 / 3.0, 1e-12);  // after two members: type II error 1/3
    // Ties move together: all-equal scores are a coin, AUC = 1/2 exactly.
    const std::vector<double> tied(6, 0.5);
    QCOMPARE(rocCurve(tied, members).size(), std::size_t{2});
    QCOMPARE(areaUnderCurve(rocCurve(tied, members)), 0.5);
  }

  void rocThinningKeepsEndsAndLowFpr() {
    std::vector<RocPoint> roc;
    for (int i = 0; i <= 20000; ++i) roc.push_back({i / 20000.0, std::sqrt(i / 20000.0)});
    const std::vector<RocPoint> thin = thinRoc(roc, 500);
    QVERIFY(thin.size() < 1500);
    QCOMPARE(thin.front().fpr, 0.0);
    QCOMPARE(thin.back().fpr, 1.0);
    QCOMPARE(thin[1].fpr, roc[1].fpr);  // the low-FPR region is kept point by point
    DPX_COMPARE_REL(areaUnderCurve(thin), areaUnderCurve(roc), 1e-3);
  }

  void liraSeparatesGaussianInAndOut() {
    // 200 records, 16 shadow models: φ ~ N(2, 0.5²) when IN, N(0, 0.5²) when OUT.
    const std::size_t m = 200;
    Xoshiro256 engine(17);
    std::vector<std::vector<double>> phi(16, std::vector<double>(m));
    std::vector<std::vector<std::uint8_t>> in(16, std::vector<std::uint8_t>(m));
    std::vector<double> noise(1);
    for (std::size_t j = 0; j < 16; ++j) {
      for (std::size_t i = 0; i < m; ++i) {
        in[j][i] = ((i + j) % 2) != 0;
        fillGaussian(noise, 0.5, engine);
        phi[j][i] = (in[j][i] ? 2.0 : 0.0) + noise[0];
      }
    }
    std::vector<double> target(m);
    std::vector<std::uint8_t> members(m);
    for (std::size_t i = 0; i < m; ++i) {
      members[i] = i % 3 == 0;
      fillGaussian(noise, 0.5, engine);
      target[i] = (members[i] ? 2.0 : 0.0) + noise[0];
    }
    const std::vector<double> scores = liraScores(target, phi, in);
    // The Bayes-optimal test between N(2, 1/4) and N(0, 1/4): AUC = Φ(2/(0.5·√2)) ≈ 0.9977.
    const double auc = areaUnderCurve(rocCurve(scores, members));
    QVERIFY2(auc > 0.98, qPrintable(QString::number(auc)));
    // One shadow model: each record has one side only, the global fallbacks keep it finite.
    const std::vector<double> one = liraScores(target, {phi[0]}, {in[0]});
    for (double s : one) QVERIFY(std::isfinite(s));
    QVERIFY(areaUnderCurve(rocCurve(one, members)) > 0.9);
  }

  // ---- whole audits -------------------------------------------------------------------------

  void memorisingModelIsClearlyAttacked() {
    // 40 records of digits, non-private SGD for 300 epochs at λ = 1e−6: the model interpolates
    // its ~20 members (Yeom et al. 2018: overfitting is what the loss attack sees).
    auto data = digits(40);
    QVERIFY(data);
    auto trainer = makeTrainer(memorisingConfig(), data);
    QVERIFY(trainer);
    AuditConfig config;
    config.shadowModels = 16;
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY2(r.isOk(), r.status().message().c_str());
    QCOMPARE(r->attacks.size(), std::size_t{3});  // loss threshold, LiRA, RMIA (the test split is its population)
    QCOMPARE(r->auditedRecords, std::int64_t{40});
    QVERIFY(!r->epsilonUpperBound);
    QVERIFY(!r->contradiction);
    const double best = r->attacks[static_cast<std::size_t>(r->bestAttack)].auc;
    qInfo(
        "memorising model: loss AUC %.4f, LiRA AUC %.4f, one-run eps >= %.4f, CP eps ~ %.4f, train acc %.3f, "
        "test acc %.3f, %.2f s",
        r->attacks[0].auc, r->attacks[1].auc, r->epsilonLowerBound, r->epsilonLowerBoundCp,
        r->training.finalTrainAccuracy, r->training.finalTestAccuracy, r->seconds);
    QVERIFY2(best >= 0.7, qPrintable(QString::number(best)));
    QVERIFY(r->attacks[0].auc >= 0.7);
    QVERIFY(r->training.finalTrainAccuracy == 1.0);
    // 40 records are few for a one-run bound, but these attacks are strong enough for one.
    QVERIFY(r->epsilonLowerBound > 0.5);
  }

  void dpSgdAtEpsilonOneStaysBelowItsRdpBound() {
    // digits, DP-SGD calibrated to ε = 1 at δ = 1e−5 by the rdp accountant; the one-run
    // lower bound (95 %) must not exceed it — for the pool and for 200 canaries.
    auto data = digits();
    QVERIFY(data);
    auto trainer = makeTrainer(dpSgdAtOne(), data);
    QVERIFY(trainer);
    for (std::int64_t canaries : {std::int64_t{0}, std::int64_t{200}}) {
      AuditConfig config;
      config.shadowModels = 16;
      config.canaries = canaries;
      Result<AuditReport> r = runAudit(*trainer, data, config);
      QVERIFY2(r.isOk(), r.status().message().c_str());
      QVERIFY(r->epsilonUpperBound.has_value());
      QCOMPARE(r->accountant, std::string("rdp"));
      QVERIFY(*r->epsilonUpperBound <= 1.0 + 1e-9);
      QVERIFY(*r->epsilonUpperBound > 0.9);
      qInfo(
          "dp-sgd eps=1, %lld canaries: rdp eps %.4f, one-run eps >= %.4f, CP eps ~ %.4f, AUC loss %.4f LiRA %.4f, "
          "test acc %.3f, %.2f s",
          static_cast<long long>(canaries), *r->epsilonUpperBound, r->epsilonLowerBound, r->epsilonLowerBoundCp,
          r->attacks[0].auc, r->attacks[1].auc, r->training.finalTestAccuracy, r->seconds);
      QVERIFY(r->epsilonLowerBound < *r->epsilonUpperBound);
      QVERIFY(!r->contradiction);
      QVERIFY(r->message.empty());
      // DP-SGD is covered by rdp (the run's own), gdp (an estimate) and pld (the tight bound).
      QCOMPARE(r->accountantEpsilons.size(), std::size_t(3));
      QCOMPARE(r->accountantEpsilons[0].accountant, std::string("rdp"));
      for (const AccountantEpsilon& a : r->accountantEpsilons) {
        QVERIFY(std::isfinite(a.epsilon) && a.epsilon > 0.0);
        if (a.accountant == "pld") QVERIFY(a.epsilon <= *r->epsilonUpperBound);
        QVERIFY(r->epsilonLowerBound < a.epsilon);
      }
      QVERIFY(r->training.finalTestAccuracy > 0.5);  // the model learnt something: not a vacuous audit
      QCOMPARE(r->auditedRecords, canaries > 0 ? canaries : data->train.size());
    }
  }

  void dpSgdAtEpsilonEightIsSeenButNotContradicted() {
    // The audit has power on a private run too: DP-SGD calibrated to ε = 8 for 20 epochs, 200
    // canaries — LiRA certifies a positive ε, still below the proven 8.
    auto data = digits();
    QVERIFY(data);
    TrainerConfig c = dpSgdAtOne();
    c.targetEpsilon = 8.0;
    c.epochs = 20;
    auto trainer = makeTrainer(c, data);
    QVERIFY(trainer);
    AuditConfig config;
    config.shadowModels = 16;
    config.canaries = 200;
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY2(r.isOk(), r.status().message().c_str());
    qInfo("dp-sgd eps=8, 200 canaries: rdp eps %.4f, one-run eps >= %.4f, AUC loss %.4f LiRA %.4f, %.2f s",
          *r->epsilonUpperBound, r->epsilonLowerBound, r->attacks[0].auc, r->attacks[1].auc, r->seconds);
    QVERIFY(r->epsilonLowerBound > 0.0);
    QVERIFY(r->epsilonLowerBound < *r->epsilonUpperBound);
    QVERIFY(r->attacks[1].auc > 0.55);
    QVERIFY(!r->contradiction);
  }

  void canariesAreTheWorstCase() {
    // 400 digits + 40 canaries (random directions on the unit sphere, random labels: far from
    // the non-negative pixel rows), memorising SGD: the canaries' membership shows.
    auto data = digits(400);
    QVERIFY(data);
    TrainerConfig c = memorisingConfig();
    c.knobs.m = 20;
    c.epochs = 100;
    auto trainer = makeTrainer(c, data);
    QVERIFY(trainer);
    AuditConfig config;
    config.shadowModels = 8;
    config.canaries = 40;
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY2(r.isOk(), r.status().message().c_str());
    QCOMPARE(r->poolSize, std::int64_t{440});
    QCOMPARE(r->auditedRecords, std::int64_t{40});
    QCOMPARE(r->attacks[0].scores.size(), std::size_t{40});
    qInfo("canaries: loss AUC %.4f, LiRA AUC %.4f, one-run eps >= %.4f, members %lld of 40", r->attacks[0].auc,
          r->attacks[1].auc, r->epsilonLowerBound, static_cast<long long>(r->auditedMembers));
    QVERIFY(r->attacks[static_cast<std::size_t>(r->bestAttack)].auc > 0.9);
    QVERIFY(r->epsilonLowerBound > 0.5);
    for (const AttackReport& a : r->attacks) {
      QCOMPARE(a.roc.front().fpr, 0.0);
      QCOMPARE(a.roc.back().tpr, 1.0);
      QCOMPARE(a.tradeoff.size(), a.roc.size());
    }
  }

  void auditIsDeterministicWhateverTheThreadCount() {
    auto data = breastCancer(60);
    TrainerConfig c = memorisingConfig();
    c.epochs = 20;
    c.threads = 1;
    auto one = makeTrainer(c, data);
    c.threads = 2;
    auto two = makeTrainer(c, data);
    AuditConfig config;
    config.shadowModels = 5;
    Result<AuditReport> a = runAudit(*one, data, config);
    Result<AuditReport> b = runAudit(*two, data, config);
    QVERIFY(a.isOk() && b.isOk());
    QCOMPARE(a->attacks.size(), b->attacks.size());
    for (std::size_t k = 0; k < a->attacks.size(); ++k) QVERIFY(a->attacks[k].scores == b->attacks[k].scores);
    QCOMPARE(a->epsilonLowerBound, b->epsilonLowerBound);
    QCOMPARE(a->targetRecords, b->targetRecords);
  }

  void progressAndCancel() {
    auto data = breastCancer(60);
    TrainerConfig c = memorisingConfig();
    c.epochs = 20;
    auto trainer = makeTrainer(c, data);
    AuditConfig config;
    config.shadowModels = 3;
    std::vector<double> seen;
    config.progress = [&](double f) { seen.push_back(f); };
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY(r.isOk());
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back(), 1.0);
    for (double f : seen) QVERIFY(f >= 0.0 && f <= 1.0);
    std::atomic<bool> cancel{true};
    config.cancel = &cancel;
    Result<AuditReport> stopped = runAudit(*trainer, data, config);
    QVERIFY(!stopped.isOk());
    QCOMPARE(stopped.status().code(), StatusCode::kCancelled);
  }

  void jsonCarriesTheContractedKeys() {
    auto data = breastCancer(60);
    TrainerConfig c = memorisingConfig();
    c.epochs = 20;
    auto trainer = makeTrainer(c, data);
    AuditConfig config;
    config.shadowModels = 4;
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY(r.isOk());
    JsonWriter json;
    json.beginObject();
    writeAuditJson(json, *r);
    json.endObject();
    QCOMPARE(json.nonFiniteCount(), 0);
    const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(json.str())).object();
    for (const char* key : {"roc", "auc", "tpr_at_fpr", "epsilon_lower_bound", "confidence", "bound_method",
                            "epsilon_lower_bound_cp", "contradiction", "tradeoff", "attacks"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    const QJsonObject tpr = o.value(QStringLiteral("tpr_at_fpr")).toObject();
    QVERIFY(tpr.contains(QStringLiteral("0.001")) && tpr.contains(QStringLiteral("0.01")));
    const QJsonArray roc = o.value(QStringLiteral("roc")).toArray();
    QCOMPARE(roc.first().toArray().at(0).toDouble(), 0.0);
    QCOMPARE(roc.last().toArray().at(1).toDouble(), 1.0);
    QVERIFY(o.value(QStringLiteral("epsilon_upper_bound")).isNull());  // sgd
    QCOMPARE(o.value(QStringLiteral("attacks")).toArray().size(), 3);
    QVERIFY(o.value(QStringLiteral("rmia")).toObject().contains(QStringLiteral("tpr_at_fpr")));
    QVERIFY(QString::fromStdString(describeAudit(*r)).contains(QStringLiteral("empirical ε ≥")));
  }

  void contradictionIsFlaggedLoudly() {
    AuditReport report;
    report.attacks.resize(2);
    report.accountant = "rdp";
    report.epsilonUpperBound = 1.0;
    report.epsilonLowerBound = 1.5;
    flagContradiction(report);
    QVERIFY(report.contradiction);
    QVERIFY(report.message.find("CONTRADICTION") != std::string::npos);
    QVERIFY(report.message.find("rdp") != std::string::npos);
    QVERIFY(describeAudit(report).rfind("!!! CONTRADICTION", 0) == 0);  // the first line
    report.epsilonLowerBound = 0.9;
    flagContradiction(report);
    QVERIFY(!report.contradiction);
    QVERIFY(report.message.empty());
    // A tighter applicable upper bound of another accountant of the mechanism counts; an
    // estimate (gdp) or an analysis whose assumptions fail does not.
    report.epsilonUpperBound = 2.0;
    report.epsilonLowerBound = 1.5;
    report.accountantEpsilons = {{"rdp", 2.0, accounting::BoundKind::kUpper, true},
                                 {"gdp", 1.0, accounting::BoundKind::kEstimate, true},
                                 {"cyclic", 0.5, accounting::BoundKind::kUpper, false}};
    flagContradiction(report);
    QVERIFY(!report.contradiction);
    report.accountantEpsilons.push_back({"pld", 1.2, accounting::BoundKind::kUpper, true});
    flagContradiction(report);
    QVERIFY(report.contradiction);
    QVERIFY(report.message.find("pld") != std::string::npos);
    report.accountantEpsilons.clear();
    report.epsilonUpperBound.reset();  // sgd: nothing proven, nothing contradicted
    report.epsilonLowerBound = 10.0;
    flagContradiction(report);
    QVERIFY(!report.contradiction);
  }

  void badInputsAreRejected_data() {
    QTest::addColumn<int>("shadowModels");
    QTest::addColumn<qint64>("canaries");
    QTest::addColumn<double>("confidence");
    QTest::addColumn<QString>("mustMention");
    QTest::newRow("0 shadow models") << 0 << qint64(0) << 0.95 << "--shadow-models";
    QTest::newRow("0 shadow models names the range") << 0 << qint64(0) << 0.95 << "[1, 1024]";
    QTest::newRow("1025 shadow models") << 1025 << qint64(0) << 0.95 << "--shadow-models";
    QTest::newRow("canaries above the pool") << 4 << qint64(61) << 0.95 << "canaries = 61 exceeds the pool of 60";
    QTest::newRow("canaries above 1e6") << 4 << qint64(2'000'000) << 0.95 << "canaries = 2000000 exceeds";
    QTest::newRow("negative canaries") << 4 << qint64(-1) << 0.95 << "--canaries";
    QTest::newRow("confidence too low") << 4 << qint64(0) << 0.3 << "--confidence";
    QTest::newRow("confidence 1") << 4 << qint64(0) << 1.0 << "[0.5, 1)";
  }
  void badInputsAreRejected() {
    QFETCH(int, shadowModels);
    QFETCH(qint64, canaries);
    QFETCH(double, confidence);
    QFETCH(QString, mustMention);
    auto data = breastCancer(60);
    TrainerConfig c = memorisingConfig();
    c.epochs = 1;
    auto trainer = makeTrainer(c, data);
    AuditConfig config;
    config.shadowModels = shadowModels;
    config.canaries = canaries;
    config.confidence = confidence;
    Result<AuditReport> r = runAudit(*trainer, data, config);
    QVERIFY(!r.isOk());
    QCOMPARE(r.status().code(), StatusCode::kInvalidArgument);
    QVERIFY2(QString::fromStdString(r.status().message()).contains(mustMention), r.status().message().c_str());
  }

  void poolTooSmallForTheBatchIsExplained() {
    // 30 records split in halves of ~15 cannot feed batches of 25.
    auto data = breastCancer(30);
    TrainerConfig c = memorisingConfig();
    c.knobs.m = 25;
    c.epochs = 1;
    auto trainer = makeTrainer(c, data);
    QVERIFY(trainer);
    Result<AuditReport> r = runAudit(*trainer, data, AuditConfig{});
    QVERIFY(!r.isOk());
    QVERIFY2(r.status().message().find("batch size m = 25") != std::string::npos, r.status().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestMembershipInference)
#include "tst_membership_inference.moc"
