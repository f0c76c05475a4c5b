// Rényi DP of one step of the Poisson-subsampled Gaussian mechanism (add/remove neighbours):
// sampling rate q, noise multiplier σ (noise std / sensitivity), order α > 1.
//   integer α:    A_α = Σ_{j=0}^{α} C(α,j) (1−q)^{α−j} q^j exp((j²−j)/(2σ²)),  ε_α = log A_α /(α−1)
//                 (Mironov, Talwar, Zhang 2019, §3.2; Abadi et al. 2016). Summed as
//                 A_α − 1 = Σ_{j≥2} C(α,j)(1−q)^{α−j} q^j expm1((j²−j)/(2σ²)), all terms ≥ 0, in
//                 log space, so tiny ε_α keep full relative precision and huge ones do not overflow.
//   fractional α: the two signed series of Mironov, Talwar, Zhang 2019, §3.3 (as Opacus sums
//                 them; matches numerical integration).
//   q = 1:        α/(2σ²).
#pragma once

#include "common/status.h"

namespace dpx::core::accounting {

Result<double> subsampledGaussianRdp(double q, double sigma, double alpha);

// The same value through a thread-safe memo keyed by (q, σ, α): sliders revisit the same
// (q, σ) for every K, and the RDP chart, ε(δ), δ(ε) and the trade-off share the orders.
Result<double> subsampledGaussianRdpCached(double q, double sigma, double alpha);

}  // namespace dpx::core::accounting
