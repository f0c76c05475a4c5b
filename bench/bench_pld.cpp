// Timed harness for the PLD accountant (issue: exact accounting). Each case runs in a forked
// child so its peak memory (ru_maxrss) is its own. Prints, for q = 0.004, σ = 1, δ = 1e−5:
//   pessimistic only (what dp_accounting's PLD accountant computes), cold (first call in the
//   process: FFTW planning, thread start-up) and warm (median of 5 repeats);
//   the full bracket (pessimistic + optimistic);
//   the automatic-Δ bracket for the six MNIST rows of Bu, Dong, Long & Su 2020, Table 1;
//   and the automatic-Δ bracket at K = 10⁶ (default knobs, and σ = 0.05, whose grid is coarse).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "accounting/pld_accountant.h"
#include "accounting/privacy_loss_distribution.h"
#include "numerics/real_fft.h"

using namespace dpx::core;
using namespace dpx::core::accounting;
using Clock = std::chrono::steady_clock;

namespace {

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

long peakMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

void fixedGridCase(double interval, long steps, bool bracket) {
  const pld::GaussianSegment segment{0.004, 1.0, steps};
  const std::span<const pld::GaussianSegment> one(&segment, 1);
  auto t0 = Clock::now();
  auto run = pld::composeRun(one, interval, PldAccountant::kTruncation, bracket);
  const double cold = ms(t0, Clock::now());
  std::vector<double> warm;
  for (int r = 0; r < 5; ++r) {
    auto t1 = Clock::now();
    run = pld::composeRun(one, interval, PldAccountant::kTruncation, bracket);
    warm.push_back(ms(t1, Clock::now()));
  }
  std::sort(warm.begin(), warm.end());
  // Which plan the transform ran on (the numbers of an FFTW_ESTIMATE plan are not comparable), or
  // "band": the surviving frequencies by chirp-z, no transform of the window's size.
  const char* plan = run->info.bandFrequencies > 0                    ? "band"
                     : run->info.fftSize < numerics::kFftwMinimumSize ? "kissfft"
                     : run->info.fftFromWisdom                        ? "wisdom"
                                                                      : "estimate";
  // Whether the run kept its spectra (no inverse transform) or made its tables.
  const char* kept = run->remove[0].keepsSpectrum() ? "spectra" : "tables";
  std::printf(
      "  Δ=%-6g K=%-8ld eps_upper=%-11.7f eps_lower=%-11.7f  cold %7.1f ms  warm %7.1f ms  fft %8zu %-8s %-7s  peak "
      "%4ld MiB\n",
      interval, steps, *run->epsilonUpper(1e-5), *run->epsilonLower(1e-5), cold, warm[2], run->info.fftSize, plan, kept,
      peakMiB());
}

template <typename F>
void inChild(F&& f) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    f();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace

int main() {
  std::printf("FFTW wisdom (resources/fftw/wisdom): %s\n\n",
              numerics::fftwWisdomLoaded() ? "accepted" : "refused by this FFTW: plans are FFTW_ESTIMATE's");
  for (bool bracket : {false, true}) {
    std::printf(bracket ? "\nbracket (pessimistic + optimistic), q=0.004, sigma=1, delta=1e-5\n"
                        : "pessimistic only (comparable to dp_accounting), q=0.004, sigma=1, delta=1e-5\n");
    for (double interval : {1e-4, 1e-3}) {
      for (long steps : {1000L, 10000L, 100000L, 1000000L}) inChild([&] { fixedGridCase(interval, steps, bracket); });
    }
  }
  std::printf("\nautomatic discretisation (bracket width <= 1%% of eps at delta=1e-5), Bu et al. 2020 Table 1 rows\n");
  const double sigmas[] = {1.3, 1.1, 0.7, 0.6, 0.55, 0.5};
  const double epochs[] = {15, 60, 45, 62, 68, 100};
  for (int i = 0; i < 6; ++i) {
    inChild([&] {
      Params p;
      p.sigma = sigmas[i];
      p.K = *stepsForEpochs(epochs[i], p.n, p.m);
      auto t0 = Clock::now();
      auto e = PldAccountant().epsilon(p);
      const double t = ms(t0, Clock::now());
      double interval = 0;
      for (const auto& v : e->native) {
        if (v.key == "discretisation") interval = v.value;
      }
      std::printf("  sigma=%-5g epochs=%-4g eps in [%.6f, %.6f]  Δ=%.3g  %.1f ms  peak %ld MiB\n", sigmas[i], epochs[i],
                  *e->epsilonLower, *e->epsilonUpper, interval, t, peakMiB());
    });
  }
  std::printf("\nautomatic discretisation at K = 1e6 (q = 256/60000, delta = 1e-5), first call in the process\n");
  for (double sigma : {1.1, 0.05}) {
    inChild([&] {
      Params p;
      p.sigma = sigma;
      p.K = 1'000'000;
      auto t0 = Clock::now();
      auto e = PldAccountant().epsilon(p);
      const double t = ms(t0, Clock::now());
      if (!e) {
        std::printf("  sigma=%-5g refused in %.1f ms: %s\n", sigma, t, e.status().message().c_str());
        return;
      }
      double interval = 0;
      for (const auto& v : e->native) {
        if (v.key == "discretisation") interval = v.value;
      }
      std::printf("  sigma=%-5g eps in [%.6f, %.6f]  Δ=%.3g  %.1f ms  peak %ld MiB\n", sigma, *e->epsilonLower,
                  *e->epsilonUpper, interval, t, peakMiB());
    });
  }
  return 0;
}
