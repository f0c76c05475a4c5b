// ε curves over one knob (the core behind `dpx curve`).
#include <QTest>
#include <cmath>

#include "accounting/curves.h"
#include "accounting/registry.h"
#include "test_util.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

class TestCurves : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void axisSpacingAndRounding() {
    CurveSpec spec{CurveVariable::kSteps, 1, 1000, 4, false};
    auto xs = curveAxis(spec);
    QVERIFY(xs.isOk());
    QCOMPARE(*xs, (std::vector<double>{1, 334, 667, 1000}));
    spec.logSpacing = true;
    xs = curveAxis(spec);
    QCOMPARE(*xs, (std::vector<double>{1, 10, 100, 1000}));
    CurveSpec sigma{CurveVariable::kSigma, 0.5, 2.0, 3, true};
    xs = curveAxis(sigma);
    DPX_COMPARE_REL((*xs)[1], 1.0, 1e-14);
  }

  void axisRejectsRangesOutsideTheKnob() {
    QVERIFY(!curveAxis({CurveVariable::kSigma, 0.01, 2, 10, false}).isOk());
    QVERIFY(!curveAxis({CurveVariable::kSteps, 1, 2e7, 10, false}).isOk());
    QVERIFY(!curveAxis({CurveVariable::kSteps, 10, 5, 10, false}).isOk());
    QVERIFY(!curveAxis({CurveVariable::kSteps, 1, 10, 1, false}).isOk());
    QVERIFY(!curveAxis({CurveVariable::kEpochs, 0, 10, 10, false}).isOk());
  }

  void epochsSetK() {
    auto p = paramsAt(Params{}, CurveVariable::kEpochs, 60);
    QVERIFY(p.isOk());
    QCOMPARE(p->K, std::int64_t(14063));
  }

  void allAccountantsGiveAFiniteFiveHundredPointCurve() {
    Params p;
    p.lambda = 0.05;
    p.eta = 0.5;
    auto xs = curveAxis({CurveVariable::kSteps, 1, 1e6, 500, true});
    QVERIFY(xs.isOk());
    for (const Accountant* a : allAccountants()) {
      if (!a->isAnalytic()) continue;
      const AccountantCurve c = epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
      // The last-iterate heuristic (Steinke et al. 2024) dips at K = 2 here: not monotone in K.
      const bool monotone = a->id() != "heuristic-last-iterate";
      QCOMPARE(c.epsilon.size(), std::size_t(500));
      for (std::size_t i = 0; i < c.epsilon.size(); ++i) {
        QVERIFY2(c.epsilon[i].has_value(),
                 qPrintable(QString::fromStdString(c.accountant + ": " + c.firstError.message())));
        QVERIFY(std::isfinite(*c.epsilon[i]));
        if (i > 0 && monotone) QVERIFY(*c.epsilon[i] >= *c.epsilon[i - 1] * (1 - 1e-12));
      }
    }
  }

  void stepCurvesShareThePerStepProfileAndMatchPointwiseEpsilon_data() {
    QTest::addColumn<int>("variable");
    QTest::addColumn<int>("conversion");
    QTest::addColumn<double>("sigma");
    QTest::newRow("K, improved, σ=1.1") << int(CurveVariable::kSteps) << int(Conversion::kImproved) << 1.1;
    QTest::newRow("K, classic, σ=0.7") << int(CurveVariable::kSteps) << int(Conversion::kClassic) << 0.7;
    QTest::newRow("epochs, improved, σ=4") << int(CurveVariable::kEpochs) << int(Conversion::kImproved) << 4.0;
  }
  void stepCurvesShareThePerStepProfileAndMatchPointwiseEpsilon() {
    QFETCH(int, variable);
    QFETCH(int, conversion);
    QFETCH(double, sigma);
    Params p;
    p.sigma = sigma;
    const auto v = static_cast<CurveVariable>(variable);
    auto xs = curveAxis({v, 1, v == CurveVariable::kSteps ? 1e7 : 2000, 300, true});
    QVERIFY(xs.isOk());
    EpsilonOptions options;
    options.conversion = static_cast<Conversion>(conversion);
    const Accountant& rdp = *findAccountant("rdp");
    const AccountantCurve c = epsilonCurve(rdp, p, v, *xs, options);
    for (std::size_t i = 0; i < xs->size(); ++i) {
      Result<Params> at = paramsAt(p, v, (*xs)[i]);
      QVERIFY(at.isOk());
      Result<EpsilonResult> direct = rdp.epsilon(*at, options);
      QCOMPARE(c.epsilon[i].has_value(), direct.isOk());
      if (direct.isOk()) QCOMPARE(*c.epsilon[i], direct->epsilon);  // the same arithmetic: bit-equal
    }
  }

  void pldAlongStepsIsTheOneGridCurve() {
    // `dpx curve --accountant pld --vary K|epochs` goes through pldEpsilonCurve: ε is the
    // pessimistic end, epsilonLower the optimistic one, and the curve's Δ is reported.
    const Accountant& pld = *findAccountant("pld");
    Params p;
    p.sigma = 1.3;
    for (CurveVariable v : {CurveVariable::kSteps, CurveVariable::kEpochs}) {
      auto xs = curveAxis({v, 1.0, v == CurveVariable::kSteps ? 5000.0 : 20.0, 6, true});
      QVERIFY(xs.isOk());
      const AccountantCurve c = epsilonCurve(pld, p, v, *xs);
      QVERIFY(c.firstError.isOk());
      QVERIFY(c.discretisation.has_value());
      QCOMPARE(c.epsilonLower.size(), xs->size());
      std::vector<std::int64_t> steps;
      for (double x : *xs) steps.push_back(paramsAt(p, v, x)->K);
      auto direct = pldEpsilonCurve(p, steps);
      QVERIFY(direct.isOk());
      QCOMPARE(*c.discretisation, direct->discretisation);
      for (std::size_t i = 0; i < xs->size(); ++i) {
        QCOMPARE(*c.epsilon[i], *direct->points[i].epsilonUpper);
        QCOMPARE(*c.epsilonLower[i], *direct->points[i].epsilonLower);
        if (i > 0) QVERIFY(*c.epsilon[i] >= *c.epsilon[i - 1]);
      }
    }
    // Along σ every point is the accountant's own (automatic Δ per point): no bracket column.
    auto sigmas = curveAxis({CurveVariable::kSigma, 1.0, 2.0, 3, false});
    const AccountantCurve s = epsilonCurve(pld, p, CurveVariable::kSigma, *sigmas);
    QVERIFY(s.epsilonLower.empty() && !s.discretisation);
    for (std::size_t i = 0; i < sigmas->size(); ++i) {
      QCOMPARE(*s.epsilon[i], pld.epsilon(*paramsAt(p, CurveVariable::kSigma, (*sigmas)[i]))->epsilon);
    }
  }

  void pointsOutsideTheValidRangeAreEmptyWithAReason() {
    Params p;
    p.n = 1000;
    p.m = 100;
    auto xs = curveAxis({CurveVariable::kM, 10, 5000, 5, false});
    QVERIFY(xs.isOk());
    const AccountantCurve c = epsilonCurve(*findAccountant("rdp"), p, CurveVariable::kM, *xs);
    QVERIFY(c.epsilon.front().has_value());
    QVERIFY(!c.epsilon.back().has_value());
    QVERIFY(QString::fromStdString(c.firstError.message()).contains(QStringLiteral("exceeds n")));
  }
};

QTEST_GUILESS_MAIN(TestCurves)
#include "tst_curves.moc"
