// Bracketed root finding (Boost.Math TOMS 748, Alefeld–Potra–Shi) and 1-D minimisation
// (Boost.Math Brent) behind status-returning wrappers: Boost signals failure by throwing, and
// no exception may cross the core API.
#pragma once

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"

namespace dpx::core::numerics {

struct RootOptions {
  double relativeTolerance = 1e-13;
  double absoluteTolerance = 0.0;
  std::uintmax_t maxIterations = 300;
};

struct Bracket {
  double lower;  // f(lower) and f(upper) have opposite signs (or one is zero)
  double upper;
};

namespace detail {

// What the bracket ends alone decide: an error when f is NaN there or does not change sign, the
// end itself when f is 0 there; nothing when a search is needed.
inline std::optional<Result<Bracket>> settledByEnds(double lo, double flo, double hi, double fhi) {
  if (std::isnan(flo) || std::isnan(fhi)) return Status::numericalIssue("function is NaN at the bracket ends");
  if (flo == 0.0) return Bracket{lo, lo};
  if (fhi == 0.0) return Bracket{hi, hi};
  if ((flo > 0) == (fhi > 0)) {
    return Status::noConvergence("the function does not change sign on [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "]");
  }
  return std::nullopt;
}

}  // namespace detail

// Root of f in [lo, hi]; f(lo) and f(hi) must differ in sign. Returns the bracket it
// converged to, so a caller that needs a conservative side (calibration) can take it.
template <typename F>
Result<Bracket> findRootBracket(F&& f, double lo, double hi, const RootOptions& options = {}) {
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    return Status::invalidArgument("root bracket [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                   "] is not a finite interval");
  }
  const double flo = f(lo);
  const double fhi = f(hi);
  if (std::optional<Result<Bracket>> settled = detail::settledByEnds(lo, flo, hi, fhi)) return *settled;
  std::uintmax_t iterations = options.maxIterations;
  const double rel = options.relativeTolerance;
  const double abs = options.absoluteTolerance;
  auto tolerance = [rel, abs](double a, double b) {
    return std::fabs(a - b) <= std::max(abs, rel * std::min(std::fabs(a), std::fabs(b)));
  };
  try {
    const std::pair<double, double> r = boost::math::tools::toms748_solve(f, lo, hi, flo, fhi, tolerance, iterations);
    if (iterations >= options.maxIterations && !tolerance(r.first, r.second)) {
      return Status::noConvergence("TOMS 748 did not converge in " + std::to_string(options.maxIterations) +
                                   " iterations");
    }
    return Bracket{r.first, r.second};
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("root finding failed: ") + e.what());
  }
}

struct ValueAndSlope {
  double value;
  double slope;  // f′ at the same point
};

// Root of f in [lo, hi] by Newton's method inside a bracket that shrinks with every evaluation
// (Numerical Recipes' rtsafe): a step that would leave the bracket, or that did not halve the
// previous one, is a bisection instead. `fdf(x)` returns f(x) and f′(x); f(lo) = flo and
// f(hi) = fhi must differ in sign (the caller has evaluated them while bracketing). The search
// starts at `start`, whose fdf is `atStart` (typically the bracket end nearer the root).
// When the steps fall below the tolerance, the point just past the root on the bracket's other
// side is evaluated, so the returned bracket has the same meaning as findRootBracket's: both
// ends within the tolerance and f of opposite signs at them (or zero at one).
template <typename FDF>
Result<Bracket> findRootBracketNewton(FDF&& fdf, double lo, double flo, double hi, double fhi, double start,
                                      ValueAndSlope atStart, const RootOptions& options = {}) {
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi) || !(start >= lo && start <= hi)) {
    return Status::invalidArgument("root bracket [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                   "] is not a finite interval around its start");
  }
  if (std::optional<Result<Bracket>> settled = detail::settledByEnds(lo, flo, hi, fhi)) return *settled;
  const double rel = options.relativeTolerance;
  const double abs = options.absoluteTolerance;
  const auto width = [rel, abs](double a, double b) {
    return std::max(abs, rel * std::min(std::fabs(a), std::fabs(b)));
  };
  const bool risingAtLo = flo < 0.0;  // f < 0 on the lower side of the root
  double x = start;
  ValueAndSlope at = atStart;
  double previousStep = hi - lo;
  bool probed = false;  // the last step was a probe past the root, from previousX
  double previousX = x;
  for (std::uintmax_t i = 0; i < options.maxIterations; ++i) {
    if (std::isnan(at.value)) return Status::numericalIssue("function is NaN inside the bracket");
    if (at.value == 0.0) return Bracket{x, x};
    double& moved = (at.value < 0.0) == risingAtLo ? lo : hi;
    // A probe that landed on the same side found f flat at its rounding level (the root is not
    // where Newton's steps say): only bisection makes progress there.
    const bool flat = probed && moved == previousX;
    moved = x;
    if (hi - lo <= width(lo, hi)) return Bracket{lo, hi};
    double next = x - at.value / at.slope;
    const bool newtonInside = std::isfinite(next) && next > lo && next < hi;
    if (flat || !newtonInside || std::fabs(next - x) > 0.5 * previousStep) next = 0.5 * (lo + hi);
    // A step within the tolerance has found the root: step just past it instead, so the next
    // evaluation closes the bracket from the other side.
    const double tiny = 0.5 * std::max(abs, rel * std::fabs(x));
    probed = std::fabs(next - x) < tiny;
    if (probed) next = x == lo ? std::min(x + tiny, hi) : std::max(x - tiny, lo);
    if (next <= lo || next >= hi) {
      next = 0.5 * (lo + hi);
      probed = false;
    }
    previousStep = std::fabs(next - x);
    previousX = x;
    x = next;
    at = fdf(x);
  }
  return Status::noConvergence("Newton's method did not converge in " + std::to_string(options.maxIterations) +
                               " iterations");
}

template <typename F>
Result<double> findRoot(F&& f, double lo, double hi, const RootOptions& options = {}) {
  DPX_ASSIGN_OR_RETURN(const auto bracket, findRootBracket(std::forward<F>(f), lo, hi, options));
  return 0.5 * (bracket.lower + bracket.upper);
}

struct Minimum {
  double x;
  double value;
};

// Minimum of a unimodal f on [lo, hi] to about 2^-bits relative precision in x.
template <typename F>
Result<Minimum> minimizeBrent(F&& f, double lo, double hi, int bits = 40, std::uintmax_t maxIterations = 200) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    return Status::invalidArgument("minimisation interval is empty or not finite");
  }
  try {
    std::uintmax_t iterations = maxIterations;
    const std::pair<double, double> r = boost::math::tools::brent_find_minima(f, lo, hi, bits, iterations);
    if (std::isnan(r.second)) return Status::numericalIssue("the objective is NaN at its minimum");
    return Minimum{r.first, r.second};
  } catch (const std::exception& e) {
    return Status::numericalIssue(std::string("minimisation failed: ") + e.what());
  }
}

}  // namespace dpx::core::numerics
