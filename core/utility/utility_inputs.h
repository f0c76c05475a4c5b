// The data-dependent inputs of the utility bounds (langevin_utility.h, sgmcmc_utility.h), for the
// trainer's model: softmax regression with a bias, F(θ) = (1/n)Σᵢ CEᵢ(θ) + (λ/2)‖θ‖², the
// regulariser on every parameter as the trainer applies it.
//
//  d       the number of parameters, (features + 1)·classes.
//  θ̂       a near-optimum of F: Nesterov's accelerated gradient for a λ-strongly convex objective,
//          step 1/β_F with β_F = 1.05·λ_max(X̃ᵀX̃/n)/2 + λ (Ryffel, Bach & Pointcheval 2022,
//          Lemma 5.1, with a 5 % margin over the power-iteration estimate), restarted whenever the
//          momentum points uphill, stopped at ‖∇F(θ̂)‖ ≤ tolerance. Strong convexity certifies the
//          answer: ‖θ̂ − θ*‖ ≤ ‖∇F(θ̂)‖/λ and F(θ̂) − F(θ*) ≤ ‖∇F(θ̂)‖²/(2λ).
//  ξ²      E‖∇L_B(θ̂)‖² for a batch B of m records drawn uniformly without replacement, exactly:
//          with gᵢ = ∇ℓᵢ(θ̂), ḡ = (1/n)Σgᵢ = ∇F(θ̂) and v = (1/n)Σ‖gᵢ − ḡ‖²,
//            E‖(1/m)Σ_{i∈B} gᵢ‖² = ‖ḡ‖² + tr Cov = ‖ḡ‖² + (1/m)·(n − m)/(n − 1)·v,
//          since sampling without replacement has Cov((1/m)Σ_B gᵢ) = (1/m)(n − m)/(n − 1)·S with
//          S = (1/n)Σ(gᵢ − ḡ)(gᵢ − ḡ)ᵀ (the finite-population correction; 0 when m = n). The
//          regulariser adds λθ̂ to every gᵢ and so cancels from v; v = (1/n)Σ‖∇CEᵢ‖² − ‖(1/n)Σ∇CEᵢ‖²
//          needs only the per-record norms ‖∇CEᵢ‖² = (‖xᵢ‖² + 1)‖pᵢ − e_{yᵢ}‖² and the full gradient,
//          both from softmax_regression.h. At θ* itself ḡ = 0; at θ̂ the ‖ḡ‖² term is ‖∇F(θ̂)‖².
//  ‖θ*‖    bounded by ‖θ̂‖ + ‖∇F(θ̂)‖/λ: with it LangevinProblem::optimumNorm bounds E‖θ₀ − θ*‖².
//  Γ_M     proxy for Li, Chen, Liu & Carin 2019: the spread of the clipped per-record gradients at
//          θ̂, v_clip/(n − 1) (with ‖∇ψ‖ ≤ 1 absorbed into their C). Γ_M is a maximum over the chain;
//          this is its value at the posterior mode, an estimate, not a bound (gammaMBound() is one).
#pragma once

#include <cstdint>
#include <limits>

#include "common/status.h"
#include "training/dataset.h"
#include "training/softmax_regression.h"

namespace dpx::core::utility {

struct OptimumOptions {
  double lambda = 0.0;              // λ > 0
  int maxIterations = 2000;         // gradient evaluations
  double gradientTolerance = 1e-6;  // stop at ‖∇F(θ)‖ ≤ this
};

struct FittedOptimum {
  training::SoftmaxModel model{0, 0};  // θ̂
  double objective = 0.0;              // F(θ̂)
  double objectiveAtZero = 0.0;        // F(0) = log(classes)
  double gradientNorm = 0.0;           // ‖∇F(θ̂)‖
  double distanceBound = 0.0;          // ‖θ̂ − θ*‖ ≤ ‖∇F(θ̂)‖/λ
  double suboptimalityBound = 0.0;     // F(θ̂) − F(θ*) ≤ ‖∇F(θ̂)‖²/(2λ)
  double thetaNorm = 0.0;              // ‖θ̂‖
  double optimumNormBound = 0.0;       // ‖θ*‖ ≤ ‖θ̂‖ + ‖∇F(θ̂)‖/λ
  double smoothness = 0.0;             // β_F used for the step
  int iterations = 0;
  bool converged = false;  // the tolerance was met
};
// Fails (invalid argument) on an empty data set, fewer than two classes, λ ≤ 0 or a tolerance/limit
// out of range.
Result<FittedOptimum> fitOptimum(const training::Dataset& data, const OptimumOptions& options);

// Per-record gradients gᵢ = clip(∇CEᵢ(θ)) + λθ at one θ.
struct GradientSpread {
  double meanSquaredNorm = 0.0;  // ‖ḡ‖², ḡ = (1/n)Σgᵢ
  double variance = 0.0;         // v = (1/n)Σ‖gᵢ − ḡ‖²
  double maxNorm = 0.0;          // max ‖∇CEᵢ(θ)‖ before clipping
};
Result<GradientSpread> gradientSpread(const training::Dataset& data, const training::SoftmaxModel& model, double lambda,
                                      double clipNorm = std::numeric_limits<double>::infinity());

// ξ² = ‖ḡ‖² + (1/m)·(n − m)/(n − 1)·v for uniform batches of m among n records without replacement.
Result<double> batchGradientSecondMoment(double meanSquaredNorm, double variance, std::int64_t records,
                                         std::int64_t batchSize);

struct UtilityInputOptions {
  OptimumOptions optimum;
  std::int64_t batchSize = 1;  // m of the run, for ξ²
  // Clip norm of the run's per-record gradients, for the Γ_M proxy (sgld-posterior clips at L).
  double clipNorm = std::numeric_limits<double>::infinity();
};

struct UtilityInputs {
  std::int64_t records = 0;  // n
  double dimension = 0.0;    // d
  FittedOptimum optimum;
  GradientSpread spread;         // unclipped, at θ̂
  double xi2 = 0.0;              // ξ² at θ̂ for batches of m
  GradientSpread clippedSpread;  // clipped at clipNorm, at θ̂
  double gammaMAtMode = 0.0;     // Γ_M proxy v_clip/(n − 1)
};
Result<UtilityInputs> estimateUtilityInputs(const training::Dataset& data, const UtilityInputOptions& options);

}  // namespace dpx::core::utility
