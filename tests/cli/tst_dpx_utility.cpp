// dpx utility: the JSON keys, the hand-computed values of Ryffel, Bach & Pointcheval 2022 (§4) and
// Li, Chen, Liu & Carin 2019 (§3.2) through the command line, the inputs estimated from a data set,
// and one-line errors (exit 2 for invalid input, 1 when a statement does not apply). Runs
// in-process, like tst_dpx_cli.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>
#include <sstream>

#include "cli.h"
#include "cli_util.h"
#include "test_util.h"

namespace {

using Run = dpx::test::CliRun;
inline Run dpxRun(const QString& line) { return dpx::test::runDpx(line); }

using dpx::test::jsonOf;

double at(const QJsonObject& o, const QString& path) {
  QJsonValue v = o;
  for (const QString& key : path.split(QLatin1Char('.'))) v = v.toObject().value(key);
  return v.toDouble(std::nan(""));
}

// Table 4's CIFAR-10 row of Ryffel et al.: β = 55, λ = 10⁻³, L = 1, n = 50000, d = 5130, ξ² = 1.
const QString kCifar = QStringLiteral(
    "utility --mechanism dp-sgld --target-epsilon 1 --delta 1e-5 --d 5130 --beta 55 --lambda 0.001 --n 50000 "
    "--m 256 --L 1 --xi2 1 --schedule decreasing --json");

}  // namespace

class TestDpxUtility : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void dpSgldJsonKeys_data() {
    QTest::addColumn<QString>("schedule");
    QTest::newRow("constant") << QStringLiteral("constant");
    QTest::newRow("decreasing") << QStringLiteral("decreasing");
  }
  void dpSgldJsonKeys() {
    QFETCH(QString, schedule);
    const Run r =
        dpxRun(QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --d 100 --json --schedule ") + schedule);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(!r.out.contains(QStringLiteral("nan")) && !r.out.contains(QStringLiteral("inf")));
    const QJsonObject o = jsonOf(r);
    for (const char* key : {"mechanism", "citation", "target_epsilon", "delta", "inputs", "data", "run", "lemma_4_1",
                            "lemma_4_2", "theorem_4_1", "theorem_4_2", "theorem_4_3", "theorem_4_4", "table_4"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("mechanism")).toString(), QStringLiteral("dp-sgld"));
    QVERIFY(o.value(QStringLiteral("citation")).toString().contains(QStringLiteral("Ryffel, Bach & Pointcheval 2022")));
    QVERIFY(o.value(QStringLiteral("data")).isNull());
    const QJsonObject inputs = o.value(QStringLiteral("inputs")).toObject();
    for (const char* key : {"n", "m", "d", "d_source", "beta", "lambda", "L", "xi2", "xi2_source", "init_distance2",
                            "init_distance2_source"}) {
      QVERIFY2(inputs.contains(QLatin1String(key)), key);
    }
    const QJsonObject run = o.value(QStringLiteral("run")).toObject();
    for (const char* key : {"schedule", "eta0", "K", "sigma", "sigma_source", "sigma_L", "sum_eta", "epsilon"}) {
      QVERIFY2(run.contains(QLatin1String(key)), key);
    }
    QCOMPARE(run.value(QStringLiteral("schedule")).toString(), schedule);
    QCOMPARE(run.value(QStringLiteral("sigma_source")).toString(), QStringLiteral("calibrated"));
    QVERIFY(run.value(QStringLiteral("epsilon")).toDouble() <= 1.0 + 1e-9);
    const QJsonObject lemma = o.value(QStringLiteral("lemma_4_1")).toObject();
    for (const char* key : {"bound", "recursion", "closed_form", "printed", "init_distance2", "contraction"}) {
      QVERIFY2(lemma.contains(QLatin1String(key)), key);
    }
    for (const char* key : {"initial", "gradient_noise", "langevin_noise", "total"}) {
      QVERIFY2(lemma.value(QStringLiteral("recursion")).toObject().contains(QLatin1String(key)), key);
    }
    const bool decreasing = schedule == QStringLiteral("decreasing");
    QCOMPARE(lemma.value(QStringLiteral("closed_form")).isNull(), decreasing);
    QCOMPARE(o.value(QStringLiteral("lemma_4_2")).isNull(), !decreasing);
    QCOMPARE(o.value(QStringLiteral("theorem_4_3")).isNull(), !decreasing);
    QCOMPARE(o.value(QStringLiteral("theorem_4_4")).isNull(), !decreasing);
    if (decreasing) {
      for (const char* key : {"bound", "exact_sum", "closed_form", "sum_eta"}) {
        QVERIFY2(o.value(QStringLiteral("lemma_4_2")).toObject().contains(QLatin1String(key)), key);
      }
    }
    for (const char* theorem : {"theorem_4_1", "theorem_4_2"}) {
      const QJsonObject t = o.value(QLatin1String(theorem)).toObject();
      for (const char* key : {"alpha", "rdp_epsilon", "sigma_L2", "sigma_L", "noise_multiplier", "eta0", "K_formula",
                              "K", "stated_bound", "corrected_bound", "lemma_bound", "lemma"}) {
        QVERIFY2(t.contains(QLatin1String(key)), key);
      }
    }
    const QJsonObject table = o.value(QStringLiteral("table_4")).toObject();
    for (const char* key : {"ratio", "verdict", "privacy_ratio", "condition_number", "alpha", "rdp_epsilon",
                            "ratio_theorem_4_4", "verdict_theorem_4_4"}) {
      QVERIFY2(table.contains(QLatin1String(key)), key);
    }
  }

  // Table 4's CIFAR-10 setting, worked out by hand in tst_langevin_utility:
  // log(1/δ) = 11.51292546, α = 1 + 2log(1/δ)/ε = 24.02585093, ε_α = 0.5,
  // σ_L² = 8(1 + 23.02585093)/(10⁻³·2.5·10⁹) = 7.688272298·10⁻⁵, σ = σ_L·256·√2·√110 = 33.29397767;
  // Thm 4.1: K = 1.1·10⁵·log(10141.77263) = 1014685.989, bound 32538.69043 + ξ²/(4λ) = 32788.69043;
  // Thm 4.2: K = 1.1·10⁵·log(10582.22422) = 1019362.400, bound 62618.74086;
  // Thm 4.3: K = 5.5·10⁴·10141.77263 = 557797494.6, bound 1.774837660;
  // Thm 4.4: K = 5.5·10⁴·10582.22422 = 582022332.0, bound 3.401931320;
  // Table 4: 10141.77263/(5.5·10⁴)² = 3.352652109·10⁻⁶ (K grows like n²).
  void cifar10HandValues() {
    const Run r = dpxRun(kCifar);
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    const double tol = 2e-9;  // 10 significant digits in the JSON
    DPX_COMPARE_REL(at(o, "theorem_4_2.alpha"), 24.02585092994046, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.rdp_epsilon"), 0.5, tol);
    for (const char* t : {"theorem_4_1", "theorem_4_2", "theorem_4_3", "theorem_4_4"}) {
      DPX_COMPARE_REL(at(o, QLatin1String(t) + QStringLiteral(".sigma_L2")), 7.688272297580946e-5, tol);
      DPX_COMPARE_REL(at(o, QLatin1String(t) + QStringLiteral(".noise_multiplier")), 33.29397767235664, tol);
    }
    DPX_COMPARE_REL(at(o, "theorem_4_1.K_formula"), 1014685.988508145, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_1.K"), 1014686.0, 0.0);
    DPX_COMPARE_REL(at(o, "theorem_4_1.stated_bound"), 32788.69043143696, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_1.corrected_bound"), 32788.69043143696 + 250.0, tol);  // + ξ²/(4λ)
    DPX_COMPARE_REL(at(o, "theorem_4_2.K_formula"), 1019362.400303918, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.stated_bound"), 62618.74086287392, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_3.K_formula"), 557797494.5932226, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_3.stated_bound"), 1.774837659896561, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_4.K_formula"), 582022331.9853521, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_4.stated_bound"), 3.401931319793123, tol);
    DPX_COMPARE_REL(at(o, "table_4.ratio"), 3.352652108749647e-6, tol);
    DPX_COMPARE_REL(at(o, "table_4.ratio_theorem_4_4"), 3.498255939806775e-6, tol);
    DPX_COMPARE_REL(at(o, "table_4.condition_number"), 55000.0, tol);
    QCOMPARE(o.value(QStringLiteral("table_4")).toObject().value(QStringLiteral("verdict")).toString(),
             QStringLiteral("K grows like n²"));
  }

  // β = 1, λ = 0.125, L = 1, n = 100, d = 10, ξ² = 0.5, m = 10, (ε, δ) = (1, 0.01): the small
  // problem of tst_langevin_utility.
  void smallProblemHandValues() {
    const Run r =
        dpxRun(QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --delta 0.01 --beta 1 "
                              "--lambda 0.125 --L 1 --n 100 --m 10 --d 10 --xi2 0.5 --schedule decreasing "
                              "--json"));
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    const double tol = 2e-9;
    // Thm 4.2: σ_L² = 8·10.21034037/1250 = 0.06534617838; K = 16·log(54.28681024) = 63.9085 → 64;
    // bound 48·10·4.605170186·64/10⁴ + ξ²/(4λ) = 14.14708281 + 1; Lemma 4.1 at K = 64: 9.169156953.
    DPX_COMPARE_REL(at(o, "theorem_4_2.sigma_L2"), 0.06534617838064757, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.K_formula"), 63.90850067286953, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.K"), 64.0, 0.0);
    DPX_COMPARE_REL(at(o, "theorem_4_2.stated_bound"), 15.14708281135542, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.corrected_bound"), 16.14708281135542, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.lemma_bound"), 9.16915695327272, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_2.noise_multiplier"), 5.112579715980869, tol);
    // Thm 4.1 at (α, ε_α) = (10.21034037, 0.5): x = 0.5·10⁴/102.1034037 = 48.96996396,
    // K = 16·log x = 62.25931407, bound 6·64/x + 1 = 8.841541406; Table 4: x/64 = 0.7651556868.
    DPX_COMPARE_REL(at(o, "theorem_4_1.K_formula"), 62.25931407493039, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_1.stated_bound"), 8.841541405677708, tol);
    DPX_COMPARE_REL(at(o, "table_4.ratio"), 0.7651556868214289, tol);
    // Thm 4.3: K = max(8x, x²/8) = 391.7597117, bound 18·8/x = 2.940578027.
    DPX_COMPARE_REL(at(o, "theorem_4_3.K_formula"), 391.7597116525716, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_3.stated_bound"), 2.940578027129141, tol);
    // Thm 4.4: x = 54.28681024, K = 8x = 434.2944819 → 435, bound 36·8/x = 5.305156054;
    // Lemma 4.2 at K = 435: 2.546288301.
    DPX_COMPARE_REL(at(o, "theorem_4_4.K_formula"), 434.2944819032518, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_4.K"), 435.0, 0.0);
    DPX_COMPARE_REL(at(o, "theorem_4_4.stated_bound"), 5.305156054258281, tol);
    DPX_COMPARE_REL(at(o, "theorem_4_4.lemma_bound"), 2.546288300715132, tol);
  }

  // Lemma 4.1/4.2 at the run: β = 1, λ = 0.1, d = 3, ξ² = 2, D₀ = 4, η = 0.5, K = 2, m = 10 and
  // σ = 2, so σ_L = σL√η₀/(m√2) = 2·√0.5/(10√2) = 0.1 and σ_L² = 0.01.
  void lemmasAtTheRunHandValues_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<double>("recursion");
    QTest::addColumn<double>("closedForm");
    QTest::addColumn<double>("printed");
    QTest::addColumn<double>("lemma42Exact");
    QTest::addColumn<double>("lemma42Printed");
    // constant: (1 − ηλ)² = 0.9025, Σ0.95^k = 1.95: 0.5·0.9025·4 + 0.25·2·1.95 + 0.5·3·0.01·1.95
    // = 1.805 + 0.975 + 0.02925 = 2.80925; closed 2e^{−0.1} + 10 + 0.3 = 12.10967484; printed ξ² term
    // 5: 7.109674836.
    QTest::newRow("constant") << QStringLiteral("constant") << 2.80925 << 12.10967483607192 << 7.109674836071919 << 0.0
                              << 0.0;
    // decreasing: η₁ = 1/2.05; 1.807317073 + 0.951516954 + 0.028902439 = 2.787736466; Lemma 4.2:
    // 1.95·4/2 + 2·2·0.987804878/2 + 0.06 = 5.935609756, printed 4 + 40·log(1.05) + 0.06 = 6.011606567.
    QTest::newRow("decreasing") << QStringLiteral("decreasing") << 2.787736466389054 << 0.0 << 0.0 << 5.935609756097561
                                << 6.01160656677728;
  }
  void lemmasAtTheRunHandValues() {
    QFETCH(QString, schedule);
    QFETCH(double, recursion);
    QFETCH(double, closedForm);
    QFETCH(double, printed);
    QFETCH(double, lemma42Exact);
    QFETCH(double, lemma42Printed);
    const Run r = dpxRun(QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --beta 1 --lambda 0.1 --d 3 "
                                        "--xi2 2 --init-distance2 4 --eta 0.5 --K 2 --sigma 2 --m 10 --n 1000 --L 1 "
                                        "--json --schedule ") +
                         schedule);
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    const double tol = 2e-9;
    DPX_COMPARE_REL(at(o, "run.sigma_L"), 0.1, tol);
    QCOMPARE(o.value(QStringLiteral("run")).toObject().value(QStringLiteral("sigma_source")).toString(),
             QStringLiteral("flag"));
    DPX_COMPARE_REL(at(o, "lemma_4_1.recursion.total"), recursion, tol);
    DPX_COMPARE_REL(at(o, "lemma_4_1.bound"), recursion, tol);
    if (closedForm > 0.0) {
      DPX_COMPARE_REL(at(o, "lemma_4_1.closed_form.total"), closedForm, tol);
      DPX_COMPARE_REL(at(o, "lemma_4_1.printed.total"), printed, tol);
    } else {
      DPX_COMPARE_REL(at(o, "lemma_4_2.exact_sum.total"), lemma42Exact, tol);
      DPX_COMPARE_REL(at(o, "lemma_4_2.closed_form.total"), lemma42Printed, tol);
    }
  }

  void sgldPosteriorJsonAndHandValues() {
    // N = 50000, τ = 256, T = 10⁴, Γ_M = 1/49999 (the flag), C = 1, η = 0.1 given, burn-in 5000:
    // h = η/N = 2·10⁻⁶, 5000 samples: mini-batch (N/τ − 1)N²Γ_M/5000 = 9715819.316/5000 = 1943.163863,
    // 1/Σh = 1/(5000·2·10⁻⁶) = 100, discretisation h² = 4·10⁻¹².
    // Printed Prop. 5 and Lemma 6's mini-batch terms use T = 10⁴: (2/3)·971.5819316 = 647.7212878
    // and 971.5819316; Lemma 6's optimum 3·2^{−2/3}·T^{−2/3} = 0.004071626425 (printed T^{−2/3} =
    // 0.002154434690) at η* = (2·10⁴)^{−1/3} = 0.03684031499.
    const Run r =
        dpxRun(QStringLiteral("utility --mechanism sgld-posterior --target-epsilon 0.1 --n 50000 --m 256 "
                              "--K 10000 --eta 0.1 --gamma-m 2.000040000800016e-05 --burn-in 5000 --json"));
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonObject o = jsonOf(r);
    for (const char* key : {"mechanism", "citation", "target_epsilon", "delta", "inputs", "data", "run", "weighted",
                            "proposition_5", "lemma_6_at_theorem_4", "lemma_6_optimum"}) {
      QVERIFY2(o.contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("mechanism")).toString(), QStringLiteral("sgld-posterior"));
    QVERIFY(o.value(QStringLiteral("citation")).toString().contains(QStringLiteral("Li, Chen, Liu & Carin 2019")));
    for (const char* key :
         {"n", "m", "K", "L", "burn_in", "gamma_m", "gamma_m_source", "gamma_m_bound", "mse_constant", "c", "c2"}) {
      QVERIFY2(o.value(QStringLiteral("inputs")).toObject().contains(QLatin1String(key)), key);
    }
    for (const char* key : {"schedule", "eta", "eta_source", "h1", "sigma_eff", "epsilon"}) {
      QVERIFY2(o.value(QStringLiteral("run")).toObject().contains(QLatin1String(key)), key);
    }
    for (const char* key : {"gradient_noise", "bias", "discretisation", "total", "sum_h", "sum_h2", "samples"}) {
      QVERIFY2(o.value(QStringLiteral("weighted")).toObject().contains(QLatin1String(key)), key);
    }
    QCOMPARE(o.value(QStringLiteral("inputs")).toObject().value(QStringLiteral("gamma_m_source")).toString(),
             QStringLiteral("flag"));
    const double tol = 2e-9;
    DPX_COMPARE_REL(at(o, "inputs.gamma_m_bound"), 1.0 / 49999.0, tol);  // L²/(N − 1)
    DPX_COMPARE_REL(at(o, "run.h1"), 2e-6, tol);
    DPX_COMPARE_REL(at(o, "weighted.samples"), 5000.0, 0.0);
    DPX_COMPARE_REL(at(o, "weighted.gradient_noise"), 1943.163863277266, tol);
    DPX_COMPARE_REL(at(o, "weighted.bias"), 100.0, tol);
    DPX_COMPARE_REL(at(o, "weighted.discretisation"), 4e-12, tol);
    DPX_COMPARE_REL(at(o, "proposition_5.gradient_noise"), 647.7212877590885, tol);
    DPX_COMPARE_REL(at(o, "lemma_6_at_theorem_4.gradient_noise"), 971.5819316386328, tol);
    DPX_COMPARE_REL(at(o, "lemma_6_optimum.eta"), 0.03684031498640387, tol);
    DPX_COMPARE_REL(at(o, "lemma_6_optimum.exact.bias") + at(o, "lemma_6_optimum.exact.discretisation"),
                    0.00407162642489236, tol);
    DPX_COMPARE_REL(at(o, "lemma_6_optimum.printed.bias"), 0.002154434690031884, tol);  // the printed T^{−2/3}
    // η̃₀ = ε²/(c₂²L²log(1/δ)) and Prop. 5's 1/(3η̃₀) with the c₂ reported, and c, c₂ as dpx stepsize
    // derives them for the same run.
    const double c2 = at(o, "inputs.c2");
    DPX_COMPARE_REL(at(o, "proposition_5.eta_tilde0"), 0.01 / (c2 * c2 * std::log(1e5)), 5e-9);
    DPX_COMPARE_REL(at(o, "proposition_5.bias"), 1.0 / (3.0 * at(o, "proposition_5.eta_tilde0")), 5e-9);
    const Run s = dpxRun(QStringLiteral("stepsize --target-epsilon 0.1 --n 50000 --m 256 --K 10000 --json"));
    QCOMPARE(s.code, 0);
    const QJsonObject so = jsonOf(s);
    DPX_COMPARE_REL(c2, at(so, "c2"), tol);
    DPX_COMPARE_REL(at(o, "inputs.c"), at(so, "c"), tol);
    // The run's η = 0.1 was given, so its ε is what sgmcmc charges for it, not the target.
    QCOMPARE(o.value(QStringLiteral("run")).toObject().value(QStringLiteral("eta_source")).toString(),
             QStringLiteral("flag"));
  }

  void sgldPosteriorCalibratesTheStep() {
    // Without --eta the step is the largest within the target: its ε is the target (to rounding),
    // and the default Γ_M is the bound L²/(N − 1).
    const Run r = dpxRun(QStringLiteral("utility --mechanism sgld-posterior --target-epsilon 0.5 --K 2000 --json"));
    QCOMPARE(r.code, 0);
    const QJsonObject o = jsonOf(r);
    DPX_COMPARE_REL(at(o, "run.epsilon"), 0.5, 1e-6);
    QVERIFY(at(o, "run.epsilon") <= 0.5 * (1.0 + 1e-9));
    QCOMPARE(o.value(QStringLiteral("inputs")).toObject().value(QStringLiteral("gamma_m_source")).toString(),
             QStringLiteral("default"));
    DPX_COMPARE_REL(at(o, "inputs.gamma_m"), 1.0 / 59999.0, 2e-9);
  }

  void inputsFromTheData() {
    // λ = 10⁻³: DP-SGLD needs real strong convexity (the knob's default, 10⁻⁶, is the non-private
    // optimum's, and the fit's 2000 steps would not converge on it).
    const Run r = dpxRun(
        QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --data builtin:digits --lambda 1e-3 --json"));
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonObject o = jsonOf(r);
    const QJsonObject inputs = o.value(QStringLiteral("inputs")).toObject();
    QCOMPARE(inputs.value(QStringLiteral("d")).toDouble(), 650.0);  // (64 + 1)·10
    QCOMPARE(inputs.value(QStringLiteral("d_source")).toString(), QStringLiteral("data"));
    QCOMPARE(inputs.value(QStringLiteral("xi2_source")).toString(), QStringLiteral("data"));
    QCOMPARE(inputs.value(QStringLiteral("init_distance2_source")).toString(), QStringLiteral("data"));
    const QJsonObject data = o.value(QStringLiteral("data")).toObject();
    for (const char* key : {"description", "records", "dimension", "objective", "gradient_norm", "distance_bound",
                            "suboptimality_bound", "theta_norm", "optimum_norm_bound", "iterations", "converged", "xi2",
                            "per_example_variance", "lipschitz_from_data", "beta_empirical"}) {
      QVERIFY2(data.contains(QLatin1String(key)), key);
    }
    QVERIFY(data.value(QStringLiteral("converged")).toBool());
    QVERIFY(at(o, "data.gradient_norm") <= 1e-6);
    // Unit-norm rows: L = √2·√(1 + 1) = 2 and the per-example β = (1 + 1)/2 + λ, from the data.
    DPX_COMPARE_REL(at(o, "inputs.L"), 2.0, 1e-6);
    DPX_COMPARE_REL(at(o, "inputs.beta"), 1.0 + 1e-3, 1e-6);
    QCOMPARE(at(o, "inputs.n"), at(o, "data.records"));
    // ξ² ≤ L²(n − m)/(m(n − 1)) + ‖∇F(θ̂)‖² at the optimum, far below the default L².
    const double n = at(o, "inputs.n");
    const double m = at(o, "inputs.m");
    QVERIFY(at(o, "inputs.xi2") <= 4.0 * (n - m) / (m * (n - 1.0)) + 1e-10);
    QVERIFY(at(o, "inputs.xi2") > 0.0);
    // The data's E‖θ₀ − θ*‖² is at most half the worst case 4L²/λ².
    QVERIFY(at(o, "inputs.init_distance2") <= 0.5 * 4.0 * 4.0 / 1e-6);
    // The run: η₀ = 1/(2β) by default and σ calibrated to the target.
    DPX_COMPARE_REL(at(o, "run.eta0"), 1.0 / (2.0 * at(o, "inputs.beta")), 1e-9);
    QVERIFY(at(o, "run.epsilon") <= 1.0 + 1e-9);

    // sgld-posterior: Γ_M at the posterior mode is below its bound L²/(n − 1).
    const Run p =
        dpxRun(QStringLiteral("utility --mechanism sgld-posterior --target-epsilon 1 --data builtin:digits "
                              "--json"));
    QCOMPARE(p.code, 0);
    const QJsonObject po = jsonOf(p);
    QCOMPARE(po.value(QStringLiteral("inputs")).toObject().value(QStringLiteral("gamma_m_source")).toString(),
             QStringLiteral("data"));
    QVERIFY(at(po, "inputs.gamma_m") > 0.0);
    QVERIFY(at(po, "inputs.gamma_m") < at(po, "inputs.gamma_m_bound"));
    DPX_COMPARE_REL(at(po, "inputs.gamma_m"), at(po, "data.clipped_variance") / (at(po, "inputs.n") - 1.0), 2e-9);
  }

  void textSaysWhatWasComputed() {
    const Run r =
        dpxRun(QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --d 100 --schedule decreasing"));
    QCOMPARE(r.code, 0);
    for (const char* text : {"Ryffel, Bach & Pointcheval 2022", "Lemma 4.1", "Lemma 4.2", "Thm 4.1", "Thm 4.2",
                             "Thm 4.3", "Thm 4.4", "Table 4", "K grows like n"}) {
      QVERIFY2(r.out.contains(QString::fromUtf8(text)), text);
    }
    const Run s = dpxRun(QStringLiteral("utility --mechanism sgld-posterior --target-epsilon 1"));
    QCOMPARE(s.code, 0);
    for (const char* text : {"Li, Chen, Liu & Carin 2019", "Prop. 5", "Lemma 6"}) {
      QVERIFY2(s.out.contains(QString::fromUtf8(text)), text);
    }
    for (const Run* run : {&r, &s}) {
      QVERIFY(!run->out.contains(QStringLiteral("seed 0")));
      QVERIFY(!run->out.contains(QStringLiteral("SPEC")));
    }
    const Run h = dpxRun(QStringLiteral("utility --help"));
    QCOMPARE(h.code, 0);
    QVERIFY(h.out.contains(QStringLiteral("--gamma-m")) && h.out.contains(QStringLiteral("default")));
    const Run top = dpxRun(QStringLiteral("--help"));
    QVERIFY(top.out.contains(QStringLiteral("utility")));
  }

  void errorsExitWithOneLine_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustMention");
    const QString sgld = QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --d 10 --lambda 0.01 ");
    const QString post = QStringLiteral("utility --mechanism sgld-posterior --target-epsilon 1 ");
    QTest::newRow("no mechanism") << QStringLiteral("utility --target-epsilon 1 --d 10") << 2 << "--mechanism";
    QTest::newRow("unknown mechanism") << QStringLiteral("utility --mechanism sgd --target-epsilon 1") << 2
                                       << "dp-sgld or sgld-posterior";
    QTest::newRow("no target") << QStringLiteral("utility --mechanism dp-sgld --d 10") << 2 << "--target-epsilon";
    QTest::newRow("target 0") << sgld + "--target-epsilon 0" << 2 << "must be > 0";
    QTest::newRow("no d without data") << QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1") << 2
                                       << "--d is required";
    QTest::newRow("d = 0") << sgld + "--d 0" << 2 << "--d 0";
    QTest::newRow("d fractional") << sgld + "--d 2.5" << 2 << "must be an integer in [1,";
    QTest::newRow("negative xi2") << sgld + "--xi2 -1" << 2 << "--xi2 -1";
    QTest::newRow("xi2 not a number") << sgld + "--xi2 lots" << 2 << "--xi2";
    QTest::newRow("negative init distance") << sgld + "--init-distance2 -3" << 2 << "--init-distance2";
    QTest::newRow("λ above β") << sgld + "--lambda 2 --beta 1" << 2 << "lambda = 2 exceeds beta = 1";
    QTest::newRow("knob out of range") << sgld + "--sigma 500" << 2 << "--sigma";
    QTest::newRow("unknown flag") << sgld + "--gamma 3" << 2 << "--gamma";
    QTest::newRow("burn-in ≥ K") << post + "--K 100 --burn-in 100" << 2 << "[0, 99]";
    QTest::newRow("negative gamma-m") << post + "--gamma-m -1" << 2 << "--gamma-m";
    QTest::newRow("mse constant 0") << post + "--mse-constant 0" << 2 << "--mse-constant";
    QTest::newRow("K with data") << QStringLiteral(
                                        "utility --mechanism dp-sgld --target-epsilon 1 --data "
                                        "builtin:digits --K 10")
                                 << 2 << "--K";
    QTest::newRow("missing file") << sgld + "--data /nonexistent/x.csv" << 2 << "/nonexistent/x.csv";
    // Statements that do not apply: exit 1 with the reason.
    QTest::newRow("λ = 0") << sgld + "--lambda 0" << 1 << "λ = 0";
    QTest::newRow("λ = 0 with data")
        << QStringLiteral("utility --mechanism dp-sgld --target-epsilon 1 --data builtin:digits --lambda 0") << 1
        << "λ > 0";
    QTest::newRow("ε > 2log(1/δ)") << sgld + "--target-epsilon 30" << 1 << "2·log(1/δ) = 23.02585093";
    QTest::newRow("η > 1/(2β)") << sgld + "--eta 0.6" << 1 << "1/(2β) = 0.5";
    QTest::newRow("too few records") << sgld + "--n 20 --m 5" << 1 << "εn²/(αd) must exceed 1";
  }
  void errorsExitWithOneLine() {
    QFETCH(QString, args);
    QFETCH(int, code);
    QFETCH(QString, mustMention);
    const Run r = dpxRun(args);
    QCOMPARE(r.code, code);
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out.left(200)));
    QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
    QVERIFY2(r.err.startsWith(QStringLiteral("dpx utility: ")), qPrintable(r.err));
    QVERIFY2(r.err.contains(mustMention), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(TestDpxUtility)
#include "tst_dpx_utility.moc"
