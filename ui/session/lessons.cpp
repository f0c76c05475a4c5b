// The nine lessons. Every number a reveal quotes was read from the app at the lesson's knobs
// (tests/ui/tst_lessons.cpp steps through each lesson and checks its curves are drawn).
#include "session/lessons.h"

#include "accounting/deterministic_accountant.h"
#include "accounting/gdp_accountant.h"
#include "accounting/heuristic_last_iterate_accountant.h"
#include "accounting/pld_accountant.h"
#include "accounting/rdp_accountant.h"
#include "accounting/registry.h"
#include "accounting/sgld_accountant.h"
#include "accounting/shuffle_accountant.h"
#include "compute/slow_analytics.h"

namespace dpx::ui {

using core::Knob;
using namespace core::accounting;

namespace {

template <class A>
std::string idOf() {
  return std::string(accountantOf<A>().id());
}

core::Params knobs(std::int64_t n, std::int64_t m, double sigma, std::int64_t steps) {
  core::Params p;
  p.n = n;
  p.m = m;
  p.sigma = sigma;
  p.K = steps;
  return p;
}

Lesson epsilonDelta() {
  Lesson l;
  l.id = "lesson-epsilon-delta";
  l.title = "What (ε, δ) means on the trade-off plane";
  l.params = knobs(60000, 256, 1.1, 1750);
  l.exact = true;
  l.focus = {
      {LessonChart::kTradeoff, {"identity", "fed:" + idOf<RdpAccountant>(), "tradeoff:" + idOf<PldAccountant>()}}};
  l.text =
      "An attacker who asks “was this record in the training set?” runs a hypothesis test. Its false-positive rate "
      "(type I error, x) and false-negative rate (type II error, y) are a point on this plane; the dashed diagonal "
      "1 − x is random guessing. (ε, δ)-DP says exactly that every test lies on or above "
      "f<sub>ε,δ</sub>(x) = max{0, 1 − δ − e<sup>ε</sup>x, e<sup>−ε</sup>(1 − δ − x)} (Bu, Dong, Long &amp; Su 2020, "
      "eq. 2.1; Dong, Roth &amp; Su 2022). The solid line is that region for the rdp accountant's ε; the exact PLD "
      "curve lies above it, because one (ε, δ) pair is a single tangent of the run's whole trade-off curve. The "
      "sweep lowers σ from 4 to 1.1: with less noise the curves move away from the diagonal.";
  l.sweep = {Knob::kSigma, 4.0, 1.1, 30};
  l.question = {
      "Near x = 0 the solid line falls with slope −e<sup>ε</sup>. With the rdp ε on screen (about 1) and "
      "δ = 10<sup>−5</sup>, what is the largest true-positive rate an attack can reach at a 1 % false-positive rate?",
      {"About 1 %", "About 2.7 %", "About 27 %", "Any: δ allows everything"},
      1,
      "About 2.7 %: TPR ≤ e<sup>ε</sup>·FPR + δ = e × 1 % + 10<sup>−5</sup>. Hover the solid rdp line at "
      "x = 0.01: its type II error is about 0.973. ε bounds the ratio TPR/FPR, δ is a tiny additive slack; the "
      "exact PLD curve, above the line, shows this run allows even less."};
  return l;
}

Lesson composition() {
  Lesson l;
  l.id = "lesson-composition";
  l.title = "Composition: ε grows with the number of steps";
  l.params = knobs(1000, 1000, 50.0, 100);
  l.focus = {{LessonChart::kEpsilon, {idOf<DeterministicAccountant>(), idOf<RdpAccountant>()}}};
  l.text =
      "Every step of DP-SGD releases a noisy gradient and the attacker sees them all, so the privacy losses of the "
      "steps add up. Here m = n: each step uses every record, so the run is K Gaussian mechanisms of noise "
      "multiplier σ, and their composition is exactly one Gaussian mechanism: μ-GDP with μ = √K/σ (Dong, Roth "
      "&amp; Su 2022). The deterministic curve is that exact ε; rdp, the moments accountant (Abadi et al. 2016; "
      "Mironov 2017), is an upper bound a little above it. The sweep moves K from 10 to 10 000 steps.";
  l.sweep = {Knob::kK, 10.0, 10000.0, 30};
  l.question = {"K grows 100-fold, from 100 to 10 000 steps (σ = 50). About how much larger does ε become?",
                {"About 100× (linear in K)", "About 10×, a little more (like √K)", "About 2×", "Not at all"},
                1,
                "About 14×: on the deterministic curve ε ≈ 0.73 at K = 100 and ε ≈ 10 at K = 10 000. μ = √K/σ "
                "grows 10×, and the ε of a Gaussian grows a little faster than μ once μ is large (about μz + "
                "μ²/2). Long training costs privacy, but like √K, not like K."};
  return l;
}

Lesson amplification() {
  Lesson l;
  l.id = "lesson-amplification";
  l.title = "Amplification by subsampling";
  l.params = knobs(60000, 600, 1.0, 1000);
  l.exact = true;
  l.focus = {{LessonChart::kEpsilon, {idOf<RdpAccountant>(), pldUpperCurveId()}, {pldLowerCurveId()}}};
  l.text =
      "DP-SGD samples each batch by Poisson sampling: every record joins a step independently with probability "
      "q = m/n. A record left out of a step cannot leak through it, and the attacker does not know which steps "
      "used it, so a step's privacy loss shrinks roughly in proportion to q (Abadi et al. 2016; Mironov, Talwar "
      "&amp; Zhang 2019). rdp is the moments accountant, pld the exact composition (Koskela et al. 2020). The sweep "
      "lowers the batch m from 6 000 to 60 at a fixed K = 1 000 and σ = 1: q falls from 0.1 to 0.001 and ε with it.";
  l.sweep = {Knob::kM, 6000.0, 60.0, 30};
  l.question = {"Halve q (m = 600 → 300) at the same K and σ. What happens to ε?",
                {"It stays the same (same noise per step)", "It roughly halves", "It doubles"},
                1,
                "It roughly halves: the exact pld ε goes from 1.83 (m = 600) to 0.86 (m = 300). For small q a "
                "step's privacy loss scales about like q; the noise per step is the same, but each record is used "
                "in half as many steps, and the attacker does not know which."};
  return l;
}

Lesson gaussianClt() {
  Lesson l;
  l.id = "lesson-gdp-clt";
  l.title = "The Gaussian-DP central limit theorem";
  l.params = knobs(60000, 600, 1.0, 100);
  l.exact = true;
  l.focus = {
      {LessonChart::kEpsilon, {idOf<GdpAccountant>(), pldUpperCurveId(), idOf<RdpAccountant>()}, {pldLowerCurveId()}}};
  l.text =
      "Bu, Dong, Long &amp; Su 2020 approximate the composition of many subsampled Gaussian steps by one Gaussian "
      "trade-off G<sub>μ</sub> with μ = q√(K(e<sup>1/σ²</sup> − 1)): a central limit theorem. It is cheap and "
      "accurate when K is large and q small, but it is an estimate, not a bound: over few steps the privacy loss "
      "is far from Gaussian, and it can fall on either side of the truth. pld is the exact ε; rdp an upper bound "
      "above both. The sweep runs K from 10 to 20 000 steps at q = 0.01.";
  l.sweep = {Knob::kK, 10.0, 20000.0, 30};
  l.question = {"At K = 100 steps, where is the CLT's ε (gdp) compared with the exact ε (pld)?",
                {"Above it: the CLT is conservative", "Below it: the CLT under-estimates", "Equal: the CLT is exact"},
                1,
                "Below: at K = 100, gdp gives ε ≈ 0.46 where the exact ε is ≈ 0.72. The gap closes as K grows — "
                "0.88 of the exact value at K = 1 000, 0.97 at 10 000 — and the curves merge on the right. A good "
                "estimate for long runs, which is why the app labels it one: never certify with it alone."};
  return l;
}

Lesson renyi() {
  Lesson l;
  l.id = "lesson-renyi";
  l.title = "Rényi DP and its conversion: the α knob";
  l.params = core::Params{};
  const std::string rdp = idOf<RdpAccountant>();
  l.focus = {{LessonChart::kRdp, {rdp}}, {LessonChart::kTradeoff, {"fed:" + rdp, "renyi:" + rdp}}};
  l.text =
      "Rényi DP measures privacy with one number per order α: ε<sub>α</sub>, the Rényi divergence of order α "
      "between the outputs on neighbouring data sets (Mironov 2017). It composes by adding, which is why the "
      "moments accountant works in it (Abadi et al. 2016). To state (ε, δ) it is converted, "
      "ε = ε<sub>α</sub> + log(1/δ)/(α − 1) in Mironov's form or Balle et al. 2020's improved form (the default), "
      "at the best order. The marker on the RDP chart is the α knob; on the trade-off plane the dotted curve is "
      "what ε<sub>α</sub> at that α alone certifies (Balle et al. 2020), beside the solid f<sub>ε,δ</sub> of the "
      "best order. The sweep moves α from 2 to 256.";
  l.sweep = {Knob::kAlpha, 2.0, 256.0, 30};
  l.question = {"As α grows from 2 to 256, what does the run's ε<sub>α</sub> (the rdp curve) do?",
                {"It grows", "It shrinks", "It stays constant"},
                0,
                "It grows: a Rényi divergence never decreases with its order (van Erven &amp; Harremoës 2014), and "
                "for the subsampled Gaussian it grows faster than linearly at large α. The conversion's "
                "log(1/δ)/(α − 1) shrinks with α, so the best order balances the two (the table's “optimal α” "
                "column names it); an order far from it certifies less."};
  return l;
}

// Strongly convex softmax regression: the Langevin analysis applies (Ryffel, Bach & Pointcheval
// 2022 need λ > 0 and η < 1/β).
core::Params langevinKnobs(std::int64_t n, std::int64_t m, double sigma, std::int64_t steps) {
  core::Params p = knobs(n, m, sigma, steps);
  p.eta = 0.5;
  p.lambda = 0.01;
  return p;
}

Lesson langevin() {
  Lesson l;
  l.id = "lesson-langevin";
  l.title = "Langevin saturation: DP-SGLD's ε stops growing";
  l.params = langevinKnobs(60000, 256, 1.1, 1000);
  l.convexModel = true;
  const std::string sgld = idOf<SgldAccountant>();
  l.focus = {{LessonChart::kEpsilon, {sgld, sgld + ":baseline", idOf<RdpAccountant>()}}};
  l.text =
      "Ryffel, Bach &amp; Pointcheval 2022 analyse DP-SGLD when only the last iterate is released and the loss is "
      "λ-strongly convex and β-smooth (Thm 3.1). Each step contracts the distance between the runs on neighbouring "
      "data sets while fresh noise is added, so old steps are forgotten: "
      "ε<sub>α</sub> = 4αL²/(λn²σ<sub>L</sub>²)·(1 − exp(−λΣη<sub>k</sub>/2)) stops growing once "
      "λΣη<sub>k</sub> ≫ 2. The dashed composition baseline (their Discussion after Cor. 3.3) grows linearly in K, "
      "and rdp, which charges every iterate, keeps growing. The sweep runs K from 100 to 100 000 at λ = 0.01, "
      "η = 0.5.";
  l.sweep = {Knob::kK, 100.0, 100000.0, 30};
  l.question = {"Train 10× longer, from K = 10 000 to 100 000 steps. What does the Langevin bound's ε (sgld) do?",
                {"It grows about 10×", "It grows about √10 ≈ 3×", "It barely changes"},
                2,
                "It barely changes: sgld stays at ε ≈ 0.88 from K ≈ 3 000 on, while rdp grows from 2.2 to 7.8 over "
                "the same steps. Here λΣη<sub>k</sub>/2 = 0.0025·K, so after a few thousand steps the exponential "
                "has gone. The price is in the assumptions: a strongly convex loss, uniform fixed-size batches, a "
                "projection, and only the last model released."};
  return l;
}

Lesson lastIterate() {
  Lesson l;
  l.id = "lesson-last-iterate";
  l.title = "The last iterate and the threat-model ladder";
  l.params = langevinKnobs(10000, 100, 1.0, 2000);
  l.convexModel = true;
  l.focus = {{LessonChart::kLadder,
              {"ladder:" + idOf<PldAccountant>(), "ladder:" + idOf<SgldAccountant>(),
               "ladder:" + idOf<HeuristicLastIterateAccountant>()},
              {"ladder:audit"}}};
  l.text =
      "Composition accountants charge for every iterate a training run could release, yet usually only the final "
      "model is published. The ladder plots ε over K for each threat model: all iterates (composition, pld), the "
      "last iterate under a proven analysis (sgld: Ryffel, Bach &amp; Pointcheval 2022, a strongly convex loss), "
      "and the last iterate of DP-SGD under the linear-loss heuristic of Steinke et al. 2024 — an estimate, since "
      "they construct losses that leak more. Each rung holds only under its assumptions: hover a curve to read "
      "them. The sweep raises λ from 0.003 to 0.1: stronger convexity lowers the proven last-iterate bound, while "
      "the composition rung does not move.";
  l.sweep = {Knob::kLambda, 0.003, 0.1, 10};
  l.question = {
      "A non-convex network is trained by DP-SGD and only the final model is released. Which rung may you quote as "
      "a guarantee?",
      {"The proven last-iterate bound (sgld)", "The linear-loss heuristic", "Composition over all iterates (pld)"},
      2,
      "Only composition: it assumes nothing about the loss. The proven last-iterate bound needs a strongly convex "
      "loss (the ladder greys it for a network), and the heuristic is exact only for linear losses — Steinke et al. "
      "2024 give losses that leak more, so it is an estimate. On this convex run the sgld rung ends far below the "
      "composition rung at large K: that gap is what convexity buys."};
  return l;
}

Lesson auditLowerBound() {
  Lesson l;
  l.id = "lesson-audit";
  l.title = "What an audit's lower bound means";
  l.params = knobs(10000, 100, 1.0, 500);
  const std::string pld = idOf<PldAccountant>();
  l.focus = {{LessonChart::kAuditorPlane,
              {"identity", pld + ":add", idOf<GdpAccountant>()},
              {pld + ":add:bracket", "audit:roc", "audit:band", "audit:proven", "audit:flagged"}}};
  l.text =
      "A membership-inference audit trains models with and without chosen records and attacks them; every "
      "threshold of the attack's score is a test with a false-positive and a false-negative rate (Steinke, Nasr "
      "&amp; Jagielski 2023; Nasr et al. 2023). The proof says each such point lies on or above the run's exact "
      "trade-off curve — pld's add direction, the direction of a membership attack — so the ε an attack "
      "demonstrates can only be a lower bound: ε<sub>audit</sub> ≤ ε<sub>true</sub> ≤ ε<sub>proven</sub>. "
      "G<sub>μ</sub> of the CLT is drawn for comparison. Run an audit on the Training and audit tab and its ROC "
      "with a confidence band appears here. The sweep raises σ from 0.5 to 2: the proven curve moves toward the "
      "diagonal and leaves an attack less room.";
  l.sweep = {Knob::kSigma, 0.5, 2.0, 10};
  l.question = {
      "An audit reports ε ≥ 0.4 (95 % confidence) for a run the exact accountant proves ε ≤ 1.8. What follows?",
      {"The true ε is 0.4: the proof is loose", "ε is between 0.4 and 1.8: no contradiction", "The proof is wrong",
       "The audit is broken"},
      1,
      "No contradiction: a lower bound below a proven upper bound is what must happen, and the truth lies between "
      "(with the audit's confidence for the lower end). The gap means the attack was weaker than the worst case, or "
      "the proof looser than the run; Nasr et al. 2023 close it with worst-case records and every iterate "
      "observed. Only an attack point below the proven curve on this plane — drawn red — would contradict the "
      "proof: a bug in the mechanism or the accountant."};
  return l;
}

Lesson shuffling() {
  Lesson l;
  l.id = "lesson-shuffle";
  l.title = "Shuffled versus Poisson batches";
  l.params = knobs(10000, 100, 1.0, 500);
  l.params.sampling = core::Sampling::kShuffle;
  l.exact = true;
  l.focus = {{LessonChart::kEpsilon,
              {pldUpperCurveId(), shuffleCurveId(), idOf<DeterministicAccountant>()},
              {pldLowerCurveId()}}};
  l.text =
      "Most code shuffles the data once per epoch and cuts it into fixed-size batches, yet reports ε from the "
      "Poisson accountant, which assumes every record joins each step independently with probability q. Chua et "
      "al. 2024 show the two are not interchangeable: for shuffled batches they give a lower bound on ε (shuffle) "
      "from an explicit test, and it can lie above Poisson's upper bound at the same q — the table and the check "
      "below flag pld: its sampling assumption fails. deterministic, which counts no amplification, is an upper bound "
      "for any batch "
      "order: the truth for shuffling lies between shuffle and deterministic. The sweep raises σ from 0.5 to 2 "
      "(n = 10 000, m = 100, 5 epochs).";
  l.sweep = {Knob::kSigma, 0.5, 2.0, 30};
  l.question = {"Does the Poisson accountant's ε (pld) bound this shuffled pipeline?",
                {"Yes: shuffling samples like Poisson", "No: the shuffle lower bound is above it",
                 "Yes: an upper bound holds for any sampler"},
                1,
                "No: at σ = 1 the shuffled run has ε ≥ 7.1 (shuffle, a lower bound) while pld says 1.33; at σ = 2 "
                "still 0.75 against 0.43. The shuffled run leaks more than the Poisson bound allows at every σ of "
                "the sweep. Quote an accountant of the sampler you run (deterministic here) or sample with Poisson "
                "(Chua et al. 2024b)."};
  return l;
}

}  // namespace

const std::vector<Lesson>& lessons() {
  static const std::vector<Lesson> all = {epsilonDelta(), composition(), amplification(),   gaussianClt(), renyi(),
                                          langevin(),     lastIterate(), auditLowerBound(), shuffling()};
  return all;
}

const Lesson* findLesson(std::string_view id) {
  for (const Lesson& l : lessons()) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

bool onAuditorTab(LessonChart chart) { return chart == LessonChart::kAuditorPlane || chart == LessonChart::kLadder; }

}  // namespace dpx::ui
