// Sums over the steps of a schedule, exact to rounding for any number of steps: the utility
// bounds are evaluated for the K or T steps actually run (up to 10⁷ in a run, far more in a
// theorem's prescription), not through the integral approximations of the papers' closed forms.
#pragma once

namespace dpx::core::utility {

// Σ_{t=first}^{last} (t + shift)^{−exponent} for whole numbers first ≤ last (held in doubles so a
// prescription of 10²⁰ steps is representable), exponent > 0 and first + shift > 0. Short sums
// are added term by term (compensated); long ones add the first 1024 terms and the rest by
// Euler–Maclaurin with three Bernoulli corrections, whose remainder at t + shift ≥ 1024 is below
// 10⁻²⁰ of the sum (a range that starts there is summed by Euler–Maclaurin alone, however short).
// Returns 0 for an empty range (last < first).
double shiftedPowerSum(double exponent, double shift, double first, double last);

}  // namespace dpx::core::utility
