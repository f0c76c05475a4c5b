// Timed harness for the explorer's analytic snapshot (computeAnalytics, the worker's half of a
// slider move), without widgets: the same streaming σ/K/η/δ changes as bench_gui, each computed
// as a draft (what a drag shows) and settled (what the view shows once the values rest).
// Prints p50/p95 per knob and over all changes, in ms; then the exact view's two stages at a new σ.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "bench_util.h"
#include "compute/analytics.h"
#include "compute/slow_analytics.h"

using dpx::bench::percentile;

using namespace dpx;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const int changes = argc > 1 ? std::atoi(argv[1]) : 400;
  using core::Knob;
  struct Step {
    Knob knob;
    const char* name;
    double a, b;
  };
  const Step steps[] = {{Knob::kSigma, "sigma", 0.9, 1.3},
                        {Knob::kK, "K", 8000, 20000},
                        {Knob::kEta, "eta", 0.05, 0.2},
                        {Knob::kDelta, "delta", 1e-6, 1e-4}};
  for (const bool draft : {true, false}) {
    if (changes < 1) break;
    core::Params p;
    (void)ui::computeAnalytics(p, core::accounting::Conversion::kImproved, false, false, draft);  // warm-up
    std::vector<double> all;
    std::vector<std::vector<double>> perKnob(4);
    for (int i = 0; i < changes; ++i) {
      const Step& s = steps[i % 4];
      const double t = static_cast<double>((i * 7919) % 1000) / 999.0;
      core::setKnobValue(p, s.knob, s.a + (s.b - s.a) * t);
      const auto t0 = Clock::now();
      (void)ui::computeAnalytics(p, core::accounting::Conversion::kImproved, false, false, draft);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      all.push_back(ms);
      perKnob[static_cast<std::size_t>(i % 4)].push_back(ms);
    }
    std::printf("%s snapshot (%d changes): p50 %.2f ms, p95 %.2f ms;", draft ? "draft  " : "settled", changes,
                percentile(all, 0.5), percentile(all, 0.95));
    for (std::size_t k = 0; k < 4; ++k) {
      std::printf("  %s p50 %.2f p95 %.2f", steps[k].name, percentile(perKnob[k], 0.5), percentile(perKnob[k], 0.95));
    }
    std::printf("\n");
  }
  // The settled view's slow half: the exact PLD bracket at the run, its trade-off, its ε-vs-K
  // bracket and the shuffle lower bound, phase by phase, for a new σ each time.
  // The view comes in two stages (the Poisson bracket, then the shuffle bound): each is timed.
  std::vector<double> poissonTimes, shuffleTimes;
  for (int i = 0; i < 5; ++i) {
    core::Params p;
    p.sigma = 0.8 + 0.02 * i;
    std::atomic<bool> cancel{false};
    const auto t0 = Clock::now();
    std::optional<ui::PldSnapshot> snapshot = ui::computePoissonPld(p, false, cancel, [](double) {});
    const auto t1 = Clock::now();
    if (snapshot && snapshot->error.empty()) (void)ui::addShuffleStage(*snapshot, cancel);
    poissonTimes.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    shuffleTimes.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
  }
  std::printf(
      "exact PLD view at a new σ: Poisson stage (bracket, trade-off, 24-point bracket vs K) p50 %.1f ms, max %.1f "
      "ms; shuffle stage p50 %.1f ms, max %.1f ms\n",
      percentile(poissonTimes, 0.5), percentile(poissonTimes, 1.0), percentile(shuffleTimes, 0.5),
      percentile(shuffleTimes, 1.0));
  return 0;
}
