// Sweep of the whole knob space (label: slow): 10⁵ random knob combinations drawn with a fixed
// seed across the full SPEC §1 ranges — log-uniform inside each range, with a share of every
// knob at its exact minimum or maximum, and random schedule, sampling, neighbouring relation and
// averaging — go through every analytic accountant's check(), native(), epsilon() (both
// conversions, every variant, sometimes a fixed α), delta(), rdp() at a few orders and
// tradeoff(). Each answer must be OK with a finite value in its range (ε ≥ 0, δ ∈ [0, 1], RDP ≥ 0,
// type II error ∈ [0, 1]) or a Status with a message; never NaN/Inf, never a crash. The exact
// `pld` accountant gets a few hundred combinations on a coarse fixed discretisation. Calibration
// is checked on a random subset: calibrateSigma returns σ in the σ range with ε(σ) ≤ target
// (re-evaluated independently), or a Status saying why not.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <QTest>

#include "accounting/calibration.h"
#include "accounting/registry.h"
#include "common/format.h"
#include "common/params.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

constexpr int kCombinations = 100'000;
// Every combination goes through every analytic accountant's check(), native() and headline
// epsilon() (rdp and sgmcmc: ~1.7 ms each, one core of the 2-core reference machine, Release
// build). The other calls run on a regular subset of the combinations:
constexpr int kViewEvery = 10;         // the second ε view and rdp(α) at six orders
constexpr int kDeltaEvery = 50;        // δ(ε) twice and the trade-off curve (rdp: ~8 ms per δ)
constexpr int kCalibrationEvery = 50;  // 2000 combinations × every analytic accountant (rdp: ~35 ms)
// sgmcmc with the decreasing schedule composes up to ~1300 lattice cells of σ_t (0.2 s to 2 s
// per ε or δ at large K), so like `pld` it gets its own budget of combinations.
constexpr int kSgmcmcDecreasingCombinations = 40;
constexpr int kPldCombinations = 200;
constexpr int kPldCalibrations = 4;
constexpr double kPldDiscretisation = 0.2;   // coarse loss grid: an upper bound still, just looser
constexpr double kExtremeShare = 0.08;       // per knob and side: P(knob = min) = P(knob = max)
constexpr std::uint64_t kSeed = 20240611;

// Draws knob combinations. std::mt19937_64's output is fixed by the standard; the distributions
// are written here (not std::uniform_real_distribution, whose algorithm is unspecified) so the
// sweep is the same sequence with every standard library.
class KnobSampler {
 public:
  explicit KnobSampler(std::uint64_t seed) : m_engine(seed) {}

  double uniform() { return static_cast<double>(m_engine() >> 11) * 0x1.0p-53; }  // [0, 1)
  bool chance(double p) { return uniform() < p; }
  double logUniform(double lo, double hi) { return std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo))); }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(uniform() * static_cast<double>(items.size()))];
  }

  // One value of a knob: its exact extremes (the smallest positive double for an open lower
  // bound at 0) with probability kExtremeShare each, else log-uniform over the range; ranges that
  // start at 0 are log-uniform over [max·1e−12, max] below the extremes.
  double knob(const KnobInfo& info) {
    const double lowest = info.minInclusive ? info.min : std::nextafter(info.min, info.max);
    const double u = uniform();
    if (u < kExtremeShare) return lowest;
    if (u < 2 * kExtremeShare) return info.max;
    const double lo = info.min > 0.0 ? info.min : info.max * 1e-12;
    return logUniform(lo, info.max);
  }

  Params draw() {
    Params p;
    for (const KnobInfo& info : knobInfos()) {
      if (info.knob == Knob::kM) continue;  // depends on n, below
      double value = knob(info);
      if (info.integer) value = std::round(value);
      setKnobValue(p, info.knob, value);
    }
    // m ∈ [1, n], log-uniform, with its own extremes 1 and n (q = 1: no subsampling).
    const double u = uniform();
    const auto n = static_cast<double>(p.n);
    p.m = u < kExtremeShare ? 1 : u < 2 * kExtremeShare ? p.n : static_cast<std::int64_t>(std::round(logUniform(1.0, n)));
    p.m = std::clamp<std::int64_t>(p.m, 1, p.n);
    p.schedule = chance(0.5) ? Schedule::kConstant : Schedule::kDecreasing;
    p.sampling.reset();
    if (chance(0.5)) p.sampling = pick(std::vector<Sampling>{Sampling::kPoisson, Sampling::kUniform, Sampling::kCyclic, Sampling::kShuffle});
    p.neighbouring.reset();
    if (chance(0.3)) p.neighbouring = chance(0.5) ? Neighbouring::kAddRemove : Neighbouring::kReplaceOne;
    p.averaged = chance(0.5);
    return p;
  }

 private:
  std::mt19937_64 m_engine;
};

std::string describe(const Params& p) {
  std::string text;
  for (const KnobInfo& info : knobInfos()) {
    text += std::string(text.empty() ? "" : " ") + info.key + "=" + formatNumber(knobValue(p, info.knob), 17);
  }
  text += " schedule=" + std::string(scheduleName(p.schedule));
  text += " sampling=" + (p.sampling ? std::string(samplingName(*p.sampling)) : std::string("unset"));
  text += " neighbouring=" + (p.neighbouring ? std::string(neighbouringName(*p.neighbouring)) : std::string("unset"));
  text += p.averaged ? " averaged" : "";
  return text;
}

// Failures, counted per kind, with the first few examples kept for the message.
class Findings {
 public:
  void add(const std::string& kind, const std::string& detail) {
    if (m_count[kind]++ < 3) m_examples.push_back(kind + ": " + detail);
  }
  void merge(const Findings& other) {
    for (const auto& [kind, count] : other.m_count) m_count[kind] += count;
    m_examples.insert(m_examples.end(), other.m_examples.begin(), other.m_examples.end());
  }
  int total() const {
    int sum = 0;
    for (const auto& [kind, count] : m_count) sum += count;
    return sum;
  }
  // Qt Test truncates long failure messages, so the details go out line by line first.
  std::string report() const {
    std::string text;
    for (const auto& [kind, count] : m_count) {
      qWarning("%6d × %s", count, kind.c_str());
      text += "\n  " + std::to_string(count) + " × " + kind;
    }
    for (const auto& e : m_examples) qWarning("example: %s", e.c_str());
    return text;
  }

 private:
  std::map<std::string, int> m_count;
  std::vector<std::string> m_examples;
};

// Outcome counts per accountant and call, printed for the record (qInfo).
class Tally {
 public:
  void count(const std::string& key, bool ok) { (ok ? m_ok : m_status)[key]++; }
  void merge(const Tally& other) {
    for (const auto& [key, n] : other.m_ok) m_ok[key] += n;
    for (const auto& [key, n] : other.m_status) m_status[key] += n;
  }
  void print() const {
    for (const auto& [key, ok] : m_ok) {
      const auto it = m_status.find(key);
      qInfo("%-28s OK %8d  status %8d", key.c_str(), ok, it == m_status.end() ? 0 : it->second);
    }
    for (const auto& [key, status] : m_status) {
      if (!m_ok.count(key)) qInfo("%-28s OK %8d  status %8d", key.c_str(), 0, status);
    }
  }

 private:
  std::map<std::string, int> m_ok;
  std::map<std::string, int> m_status;
};

bool finite(double x) { return std::isfinite(x); }

// Checks an OK value against [lo, hi] or a failed Result for a message. `what` names the call.
template <typename T>
bool clearStatus(const Result<T>& r) {
  return !r.isOk() && r.status().code() != StatusCode::kOk && !r.status().message().empty();
}

void checkValue(Findings& findings, Tally& tally, const Accountant& a, const std::string& call, const Result<double>& r,
                double lo, double hi, const Params& p) {
  const std::string key = std::string(a.id()) + " " + call;
  tally.count(key, r.isOk());
  if (r.isOk()) {
    const double v = *r;
    if (!finite(v) || v < lo || v > hi) {
      findings.add(key + " out of range", formatNumber(v, 17) + " at " + describe(p));
    }
  } else if (!clearStatus(r)) {
    findings.add(key + " status without a message", describe(p));
  }
}

void checkEpsilon(Findings& findings, Tally& tally, const Accountant& a, const std::string& call,
                  const Result<EpsilonResult>& r, const Params& p) {
  const std::string key = std::string(a.id()) + " " + call;
  tally.count(key, r.isOk());
  if (!r.isOk()) {
    if (!clearStatus(r)) findings.add(key + " status without a message", describe(p));
    return;
  }
  const EpsilonResult& e = *r;
  if (!finite(e.epsilon) || e.epsilon < 0.0) findings.add(key + " ε not finite or < 0", formatNumber(e.epsilon, 17) + " at " + describe(p));
  if (!finite(e.delta) || e.delta < 0.0 || e.delta > 1.0) findings.add(key + " δ outside [0, 1]", formatNumber(e.delta, 17) + " at " + describe(p));
  if (e.alpha && (!finite(*e.alpha) || *e.alpha <= 1.0)) findings.add(key + " optimal α not finite or ≤ 1", describe(p));
  if (e.epsilonUpper && (!finite(*e.epsilonUpper) || *e.epsilonUpper < 0.0)) findings.add(key + " ε_upper invalid", describe(p));
  if (e.epsilonLower && (!finite(*e.epsilonLower) || *e.epsilonLower < 0.0)) findings.add(key + " ε_lower invalid", describe(p));
  if (e.epsilonUpper && e.epsilonLower && *e.epsilonLower > *e.epsilonUpper * (1 + 1e-9) + 1e-12) {
    findings.add(key + " ε_lower > ε_upper", describe(p));
  }
  for (const NativeValue& v : e.native) {
    if (!finite(v.value)) findings.add(key + " native " + v.key + " not finite", describe(p));
  }
}

void checkViolationsAndNative(Findings& findings, Tally& tally, const Accountant& a, const Params& p) {
  for (const Violation& v : a.check(p)) {
    if (v.assumption.empty() || v.reason.empty()) findings.add(std::string(a.id()) + " check() empty violation", describe(p));
  }
  const Result<std::vector<NativeValue>> native = a.native(p);
  tally.count(std::string(a.id()) + " native", native.isOk());
  if (native.isOk()) {
    for (const NativeValue& v : *native) {
      if (!finite(v.value)) findings.add(std::string(a.id()) + " native " + v.key + " not finite", describe(p));
    }
  } else if (!clearStatus(native)) {
    findings.add(std::string(a.id()) + " native status without a message", describe(p));
  }
}

void checkTradeoff(Findings& findings, Tally& tally, const Accountant& a, const Params& p, const EpsilonOptions& options) {
  static const std::vector<double> kTypeOne{0.0, 1e-12, 1e-3, 0.1, 0.5, 0.999, 1.0};
  const Result<TradeoffCurve> curve = a.tradeoff(p, kTypeOne, options);
  const std::string key = std::string(a.id()) + " tradeoff";
  tally.count(key, curve.isOk());
  if (!curve.isOk()) {
    if (!clearStatus(curve)) findings.add(key + " status without a message", describe(p));
    return;
  }
  if (curve->typeTwo.size() != kTypeOne.size()) {
    findings.add(key + " wrong length", describe(p));
    return;
  }
  for (const double y : curve->typeTwo) {
    if (!finite(y) || y < 0.0 || y > 1.0) findings.add(key + " type II error outside [0, 1]", formatNumber(y, 17) + " at " + describe(p));
  }
}

// Runs one call; an exception escaping a core function is a finding (the core API promises
// Status values only, and an exception in the GUI's slider handler would end the program).
template <typename Body>
void guard(Findings& findings, const Accountant& a, const std::string& call, const Params& p, Body&& body) {
  static const bool trace = qEnvironmentVariableIsSet("DPX_SWEEP_TRACE");
  const auto start = std::chrono::steady_clock::now();
  if (trace) std::fprintf(stderr, "%s %s at %s\n", a.id().data(), call.c_str(), describe(p).c_str());
  try {
    body();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (trace) std::fprintf(stderr, "  took %.6f s\n", seconds);
  } catch (const std::exception& e) {
    findings.add(std::string(a.id()) + " " + call + " threw " + typeid(e).name(), std::string(e.what()) + " at " + describe(p));
  } catch (...) {
    findings.add(std::string(a.id()) + " " + call + " threw", describe(p));
  }
}

// One combination through one accountant: every call the GUI and the CLI make.
void sweepAccountant(Findings& findings, Tally& tally, KnobSampler& sampler, const Accountant& a, const Params& p,
                     const ExactOptions& exact, bool withView, bool withDelta) {
  guard(findings, a, "check/native", p, [&] { checkViolationsAndNative(findings, tally, a, p); });
  EpsilonOptions headline;
  headline.exact = exact;
  Result<EpsilonResult> eps = Status::notApplicable("not computed");
  guard(findings, a, "epsilon", p, [&] {
    eps = a.epsilon(p, headline);
    checkEpsilon(findings, tally, a, "epsilon", eps, p);
  });

  // Another view: the other conversion, a random variant, sometimes the user's fixed α.
  EpsilonOptions other = headline;
  other.conversion = sampler.chance(0.5) ? Conversion::kClassic : Conversion::kImproved;
  const std::vector<Variant> variants = a.variants();
  other.variant = sampler.pick(variants).id;
  if (a.hasRdp() && sampler.chance(0.3)) other.fixedAlpha = p.alpha;
  if (withView) {
    guard(findings, a, "epsilon(view)", p, [&] { checkEpsilon(findings, tally, a, "epsilon(view)", a.epsilon(p, other), p); });
  }

  // δ at the headline ε (when there is one) and at an arbitrary ε across many decades.
  const double someEpsilon = sampler.chance(0.1) ? 0.0 : sampler.logUniform(1e-4, 1e4);
  if (withDelta && eps.isOk()) {
    guard(findings, a, "delta(ε(δ))", p, [&] {
      checkValue(findings, tally, a, "delta(ε(δ))", a.delta(p, eps->epsilon, headline), 0.0, 1.0, p);
    });
  }
  if (withDelta) {
    guard(findings, a, "delta", p, [&] { checkValue(findings, tally, a, "delta", a.delta(p, someEpsilon, other), 0.0, 1.0, p); });
  }

  if (withView && a.hasRdp()) {
    const std::string variant = other.variant;
    for (const double alpha : {p.alpha, 1.01, 1.5, 2.0, 32.5, 1024.0}) {
      guard(findings, a, "rdp", p, [&] {
        checkValue(findings, tally, a, "rdp", a.rdp(p, alpha, variant), 0.0, std::numeric_limits<double>::max(), p);
      });
    }
  }
  if (withDelta) guard(findings, a, "tradeoff", p, [&] { checkTradeoff(findings, tally, a, p, headline); });
}

// calibrateSigma's contract: σ ∈ [0.05, 100] with ε(σ) ≤ target, evaluated again here, or a
// Status with a message (the usual one: the target is unreachable even at σ = 100).
void checkCalibration(Findings& findings, Tally& tally, const Accountant& a, const Params& p, double target,
                      const EpsilonOptions& options) {
  const std::string key = std::string(a.id()) + " calibrateSigma";
  Result<Calibration> c = Status::notApplicable("not computed");
  bool threw = true;
  guard(findings, a, "calibrateSigma", p, [&] {
    c = calibrateSigma(a, p, target, options);
    threw = false;
  });
  if (threw) return;
  tally.count(key, c.isOk());
  const std::string where = "target " + formatNumber(target, 17) + " at " + describe(p);
  if (!c.isOk()) {
    if (!clearStatus(c)) findings.add(key + " status without a message", where);
    return;
  }
  const KnobInfo& sigma = knobInfo(Knob::kSigma);
  if (!(c->sigma >= sigma.min && c->sigma <= sigma.max)) findings.add(key + " σ outside [0.05, 100]", where);
  if (!finite(c->epsilon.epsilon) || c->epsilon.epsilon > target) {
    findings.add(key + " reported ε above target", formatNumber(c->epsilon.epsilon, 17) + " > " + where);
  }
  Params at = p;
  at.sigma = c->sigma;
  Result<EpsilonResult> again = Status::notApplicable("threw");
  guard(findings, a, "epsilon at calibrated σ", at, [&] { again = a.epsilon(at, options); });
  if (!again.isOk()) {
    findings.add(key + " ε at the calibrated σ fails", again.status().message() + " — " + where);
  } else if (!(again->epsilon <= target)) {
    findings.add(key + " not conservative", "ε(" + formatNumber(c->sigma, 17) + ") = " + formatNumber(again->epsilon, 17) +
                                                " > " + where);
  }
}

// What one worker found on its share of the combinations.
struct SweepPart {
  Findings findings;
  Tally tally;
  std::map<std::string, double> seconds;  // per accountant and call group
  int extremes = 0;                        // knob values drawn at an exact range end
};

// Combination i through every analytic accountant. Its own random choices (the second view, the
// ε for δ(ε), the calibration target) come from a sampler seeded by i, so the sweep does not
// depend on how combinations are shared between threads.
void sweepCombination(SweepPart& part, const Params& p, int i) {
  using Clock = std::chrono::steady_clock;
  KnobSampler sampler(kSeed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1)));
  for (const KnobInfo& info : knobInfos()) {
    const double v = knobValue(p, info.knob);
    if (v == info.max || v == info.min) ++part.extremes;
  }
  const bool withDelta = i % kDeltaEvery == 0;
  for (const Accountant* a : allAccountants()) {
    if (!a->isAnalytic()) continue;
    if (a->id() == "sgmcmc" && p.schedule == Schedule::kDecreasing) continue;  // sgmcmcDecreasingSchedule()
    const auto before = Clock::now();
    sweepAccountant(part.findings, part.tally, sampler, *a, p, {}, i % kViewEvery == 0, withDelta);
    part.seconds[std::string(a->id())] += std::chrono::duration<double>(Clock::now() - before).count();
  }
  if (i % kCalibrationEvery == 0) {
    const double target = sampler.logUniform(1e-3, 1e3);
    for (const Accountant* a : allAccountants()) {
      if (!a->isAnalytic()) continue;
      if (a->id() == "sgmcmc" && p.schedule == Schedule::kDecreasing) continue;
      const auto before = Clock::now();
      checkCalibration(part.findings, part.tally, *a, p, target, {});
      part.seconds[std::string(a->id()) + " calibrateSigma"] += std::chrono::duration<double>(Clock::now() - before).count();
    }
  }
}

}  // namespace

class TestSweep : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void everyAnswerIsFiniteOrAClearStatus() {
    // DPX_SWEEP_COMBINATIONS overrides the count when investigating (the seed stays fixed).
    const int combinations = qEnvironmentVariableIsSet("DPX_SWEEP_COMBINATIONS")
                                 ? qEnvironmentVariableIntValue("DPX_SWEEP_COMBINATIONS")
                                 : kCombinations;
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    std::vector<Params> combos;
    combos.reserve(static_cast<std::size_t>(combinations));
    KnobSampler sampler(kSeed);
    for (int i = 0; i < combinations; ++i) {
      combos.push_back(sampler.draw());
      if (const Status valid = combos.back().validate(); !valid.isOk()) {
        QFAIL((valid.message() + " — " + describe(combos.back())).c_str());
      }
    }
    // Two workers (the accountants are used from GUI worker threads too); combinations are
    // interleaved so both get the same mix.
    const int threads = qEnvironmentVariableIsSet("DPX_SWEEP_THREADS") ? std::max(1, qEnvironmentVariableIntValue("DPX_SWEEP_THREADS")) : 2;
    std::vector<SweepPart> parts(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int i = t; i < combinations; i += threads) sweepCombination(parts[static_cast<std::size_t>(t)], combos[static_cast<std::size_t>(i)], i);
      });
    }
    for (std::thread& w : workers) w.join();

    SweepPart all;
    for (const SweepPart& part : parts) {
      all.findings.merge(part.findings);
      all.tally.merge(part.tally);
      for (const auto& [what, s] : part.seconds) all.seconds[what] += s;
      all.extremes += part.extremes;
    }
    all.tally.print();
    for (const auto& [what, s] : all.seconds) qInfo("%-28s %8.2f s (CPU time over both workers)", what.c_str(), s);
    qInfo("%d combinations (%d knob values at an extreme) in %.1f s", combinations, all.extremes,
          std::chrono::duration<double>(Clock::now() - start).count());
    QVERIFY2(all.findings.total() == 0, ("sweep findings:" + all.findings.report()).c_str());
  }

  void sgmcmcDecreasingSchedule() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const Accountant* sgmcmc = findAccountant("sgmcmc");
    QVERIFY(sgmcmc);
    KnobSampler sampler(kSeed + 2);
    Findings findings;
    Tally tally;
    for (int i = 0; i < kSgmcmcDecreasingCombinations; ++i) {
      Params p = sampler.draw();
      p.schedule = Schedule::kDecreasing;
      sweepAccountant(findings, tally, sampler, *sgmcmc, p, {}, true, true);
      if (i % 10 == 0) checkCalibration(findings, tally, *sgmcmc, p, sampler.logUniform(1e-3, 1e3), {});
    }
    tally.print();
    qInfo("sgmcmc, decreasing schedule: %d combinations in %.1f s", kSgmcmcDecreasingCombinations,
          std::chrono::duration<double>(Clock::now() - start).count());
    QVERIFY2(findings.total() == 0, ("sgmcmc (decreasing) sweep findings:" + findings.report()).c_str());
  }

  void exactAccountantOnACoarseGrid() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const Accountant* pld = findAccountant("pld");
    QVERIFY(pld);
    KnobSampler sampler(kSeed + 1);
    Findings findings;
    Tally tally;
    ExactOptions exact;
    exact.discretisation = kPldDiscretisation;
    for (int i = 0; i < kPldCombinations; ++i) {
      const Params p = sampler.draw();
      sweepAccountant(findings, tally, sampler, *pld, p, exact, true, i % 4 == 0);
      if (i < kPldCalibrations) {
        EpsilonOptions options;
        options.exact = exact;
        checkCalibration(findings, tally, *pld, p, sampler.logUniform(0.1, 10.0), options);
      }
    }
    tally.print();
    qInfo("pld: %d combinations in %.1f s", kPldCombinations, std::chrono::duration<double>(Clock::now() - start).count());
    QVERIFY2(findings.total() == 0, ("pld sweep findings:" + findings.report()).c_str());
  }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
