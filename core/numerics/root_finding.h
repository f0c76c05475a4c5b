// Bracketed root finding (Boost.Math TOMS 748, Alefeld–Potra–Shi) and 1-D minimisation
// (Boost.Math Brent) behind status-returning wrappers: Boost signals failure by throwing, and
// no exception may cross the core API.
#pragma once

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
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
  if (std::isnan(flo) || std::isnan(fhi)) return Status::numericalIssue("function is NaN at the bracket ends");
  if (flo == 0.0) return Bracket{lo, lo};
  if (fhi == 0.0) return Bracket{hi, hi};
  if ((flo > 0) == (fhi > 0)) {
    return Status::noConvergence("the function does not change sign on [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "]");
  }
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
