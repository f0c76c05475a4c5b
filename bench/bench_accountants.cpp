// Timed harness for the analytic accountants (issue: accountants). Prints medians in ms.
//   ε(δ) per accountant at K = 10³…10⁷, with a fresh σ per repetition (cold memo, like a
//   slider move) and with a repeated σ (warm memo, like a K-slider move);
//   all analytic accountants' 500-point ε-vs-K curves together;
//   calibration of σ to a target ε.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "accounting/calibration.h"
#include "accounting/curves.h"
#include "accounting/registry.h"

using namespace dpx::core;
using namespace dpx::core::accounting;
using Clock = std::chrono::steady_clock;

namespace {

template <typename F>
double medianMs(int repetitions, F&& f) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = Clock::now();
    f(r);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The last-iterate heuristic's ε-vs-K curve as the GUI draws it (300 log-spaced K up to 10⁷, a new
// σ each repetition so nothing is cached): point by point on one thread, and through epsilonCurve
// (parallel over points); then one ε at a few K.
void benchHeuristicLastIterate() {
  const Accountant* a = findAccountant("heuristic-last-iterate");
  const auto xs = curveAxis({CurveVariable::kSteps, 1, 1e7, 300, true});
  std::printf("\nheuristic-last-iterate, 300-point eps-vs-K curve to K = 1e7 (delta = 1e-5), median ms:\n");
  for (const auto& [q, sigma] : {std::pair{256.0 / 60000.0, 1.1}, {1e-4, 0.5}, {0.01, 1.0}, {0.5, 0.5}, {1.0, 20.0}}) {
    Params base;
    base.n = 1'000'000;
    base.m = static_cast<std::int64_t>(q * 1e6);
    const double serial = medianMs(5, [&](int r) {
      Params p = base;
      p.sigma = sigma * (1.0 + 1e-6 * (r + 1));
      for (double k : *xs) {
        p.K = static_cast<std::int64_t>(k);
        (void)a->epsilon(p);
      }
    });
    const double parallel = medianMs(5, [&](int r) {
      Params p = base;
      p.sigma = sigma * (1.0 + 1e-6 * (r + 11));
      (void)epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
    });
    std::printf("  q = %-8.4g sigma = %-4g  one thread %7.2f   epsilonCurve %7.2f\n", q, sigma, serial, parallel);
  }
  std::printf("one eps at the default q = 256/60000, sigma = 1.1 (new sigma each time), median ms:");
  for (std::int64_t K : {1, 1000, 100000, 1000000, 10000000}) {
    const double ms = medianMs(21, [&](int r) {
      Params p;
      p.K = K;
      p.sigma = 1.1 + 1e-6 * (r + 1);
      (void)a->epsilon(p);
    });
    std::printf("  K=%lld %.3f", static_cast<long long>(K), ms);
  }
  std::printf("\n");
}

}  // namespace

int main() {
  std::printf("epsilon(delta=1e-5) per accountant, median ms (cold = new sigma each time, warm = same sigma)\n");
  std::printf("%-8s", "K");
  for (const Accountant* a : allAccountants()) {
    if (a->isAnalytic()) std::printf(" %17s", std::string(a->id()).c_str());
  }
  std::printf("\n");
  for (std::int64_t K : {1000, 10000, 100000, 1000000, 10000000}) {
    std::printf("%-8lld", static_cast<long long>(K));
    for (const Accountant* a : allAccountants()) {
      if (!a->isAnalytic()) continue;
      Params p;
      p.K = K;
      const double cold = medianMs(21, [&](int r) {
        Params q = p;
        q.sigma = 1.1 + 1e-6 * (r + 1) + 1e-3 * static_cast<double>(K % 7);
        (void)a->epsilon(q);
      });
      const double warm = medianMs(21, [&](int) { (void)a->epsilon(p); });
      std::printf("  %7.3f / %7.4f", cold, warm);
    }
    std::printf("\n");
  }

  auto xs = curveAxis({CurveVariable::kSteps, 1, 1e7, 500, true});
  const double curvesCold = medianMs(11, [&](int r) {
    Params p;
    p.sigma = 0.9 + 1e-5 * (r + 1);
    for (const Accountant* a : allAccountants()) {
      if (a->isAnalytic()) (void)epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
    }
  });
  const double curvesWarm = medianMs(11, [&](int) {
    Params p;
    p.sigma = 0.9;
    for (const Accountant* a : allAccountants()) {
      if (a->isAnalytic()) (void)epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
    }
  });
  std::printf(
      "\nall analytic accountants, 500-point eps-vs-K curves, one after another: %.2f ms (new sigma), %.2f ms (same "
      "sigma)\n",
      curvesCold, curvesWarm);
  std::printf("  per accountant (new sigma):");
  for (const Accountant* a : allAccountants()) {
    if (!a->isAnalytic()) continue;
    const double ms = medianMs(11, [&](int r) {
      Params p;
      p.sigma = 0.7 + 1e-5 * (r + 1);
      (void)epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
    });
    std::printf(" %s %.2f", a->id().data(), ms);
  }
  std::printf(" ms\n");
  std::vector<const Accountant*> analytic;
  for (const Accountant* a : allAccountants()) {
    if (a->isAnalytic()) analytic.push_back(a);
  }
  const double parallelCold = medianMs(11, [&](int r) {
    Params p;
    p.sigma = 0.8 + 1e-5 * (r + 1);
    (void)epsilonCurves(analytic, p, CurveVariable::kSteps, *xs);
  });
  const double parallelWarm = medianMs(11, [&](int) {
    Params p;
    p.sigma = 0.8;
    (void)epsilonCurves(analytic, p, CurveVariable::kSteps, *xs);
  });
  std::printf("same, oneTBB over accountants: %.2f ms (new sigma), %.2f ms (same sigma)\n", parallelCold, parallelWarm);
  // The accountants whose ε is a closed form or a cached series (cheapPerPoint): the set the
  // speed issue measured before the last-iterate heuristic (a root search per point, drawn by
  // the explorer on a sparser axis) was added.
  std::vector<const Accountant*> cheap;
  for (const Accountant* a : analytic) {
    if (a->cheapPerPoint()) cheap.push_back(a);
  }
  const double cheapSequential = medianMs(11, [&](int r) {
    Params p;
    p.sigma = 0.9 + 1e-5 * (r + 101);
    for (const Accountant* a : cheap) (void)epsilonCurve(*a, p, CurveVariable::kSteps, *xs);
  });
  const double cheapParallel = medianMs(11, [&](int r) {
    Params p;
    p.sigma = 0.9 + 1e-5 * (r + 201);
    (void)epsilonCurves(cheap, p, CurveVariable::kSteps, *xs);
  });
  std::printf(
      "the %zu cheap-per-point accountants (all but the heuristic), new sigma: %.2f ms one after another, %.2f ms "
      "with oneTBB\n",
      cheap.size(), cheapSequential, cheapParallel);
  auto sigmas = curveAxis({CurveVariable::kSigma, 0.3, 30, 500, true});
  const double sigmaCurves = medianMs(3, [&](int r) {
    Params p;
    p.n = 60000 + r;  // a new q each repetition: nothing memoised
    (void)epsilonCurves(analytic, p, CurveVariable::kSigma, *sigmas);
  });
  std::printf("500-point eps-vs-sigma curves (every point a new sigma): %.1f ms\n", sigmaCurves);

  for (const char* id : {"rdp", "gdp", "sgld", "cyclic", "outpert"}) {
    const Accountant* a = findAccountant(id);
    const double ms = medianMs(7, [&](int r) {
      Params p;
      p.lambda = 0.05;
      p.eta = 0.5;
      (void)calibrateSigma(*a, p, 1.0 + 0.01 * r);
    });
    std::printf("calibrate %-8s sigma for target eps ~1: %.2f ms\n", id, ms);
  }
  benchHeuristicLastIterate();
  return 0;
}
