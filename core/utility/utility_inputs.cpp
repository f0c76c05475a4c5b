#include "utility/utility_inputs.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "common/format.h"

namespace dpx::core::utility {

using training::Dataset;
using training::GradientWorkspace;
using training::SoftmaxModel;

namespace {

// The power iteration approaches λ_max from below; the step 1/β_F needs an upper bound.
constexpr double kSmoothnessMargin = 1.05;

Status checkData(const Dataset& data) {
  if (data.size() < 1) return Status::invalidArgument("the data set is empty: the utility inputs need records");
  if (data.numClasses < 2) {
    return Status::invalidArgument("classes = " + std::to_string(data.numClasses) +
                                   " is out of range: softmax regression needs at least 2 classes");
  }
  return Status::ok();
}

Status checkLambda(double lambda) {
  if (!std::isfinite(lambda) || lambda < 0.0) {
    return Status::invalidArgument("lambda = " + formatNumber(lambda) +
                                   " is out of range: λ must be a finite number > 0");
  }
  if (lambda == 0.0) {
    return Status::notApplicable(
        "λ = 0: the regularised objective has no certified optimum to estimate ξ², ‖θ*‖ and "
        "Γ_M at (strong convexity is what bounds ‖θ̂ − θ*‖); set λ > 0");
  }
  return Status::ok();
}

std::vector<std::int64_t> allRecords(const Dataset& data) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(data.size()));
  std::iota(all.begin(), all.end(), std::int64_t{0});
  return all;
}

// F(θ) and ∇F(θ) at the float parameters the model holds (the regulariser at those same values).
struct Evaluator {
  const Dataset& data;
  std::vector<float> squaredNorms;
  std::vector<std::int64_t> records;
  GradientWorkspace workspace;
  Eigen::VectorXf sum;

  double evaluate(const SoftmaxModel& model, double lambda, Eigen::VectorXd& gradient) {
    const training::GradientStats stats = training::clippedGradientSum(
        model, data, squaredNorms, records, std::numeric_limits<double>::infinity(), workspace, sum);
    const double n = static_cast<double>(data.size());
    const Eigen::VectorXd theta = model.parameters().cast<double>();
    gradient = sum.cast<double>() / n + lambda * theta;
    return stats.lossSum / n + 0.5 * lambda * theta.squaredNorm();
  }
};

Status checkOptimumOptions(const OptimumOptions& o) {
  DPX_RETURN_IF_ERROR(checkLambda(o.lambda));
  if (o.maxIterations < 1 || o.maxIterations > 1'000'000) {
    return Status::invalidArgument("iterations = " + std::to_string(o.maxIterations) +
                                   " is out of range: the optimiser's iteration limit must be in [1, 1000000]");
  }
  if (!(std::isfinite(o.gradientTolerance) && o.gradientTolerance > 0.0)) {
    return Status::invalidArgument("tolerance = " + formatNumber(o.gradientTolerance) +
                                   " is out of range: the gradient tolerance must be a finite number > 0");
  }
  return Status::ok();
}

// The iterate with the smallest gradient seen so far.
struct BestIterate {
  Eigen::VectorXf parameters;
  double gradientNorm = std::numeric_limits<double>::infinity();
  double objective = 0.0;
};

// Nesterov's step for a strongly convex objective from y, restarted (O'Donoghue & Candès 2015)
// when the momentum would carry the iterate uphill; x is the previous gradient step.
void acceleratedStep(Eigen::VectorXd& x, Eigen::VectorXd& y, const Eigen::VectorXd& gradient, double step,
                     double momentum) {
  const Eigen::VectorXd next = y - step * gradient;
  if (gradient.dot(next - x) > 0.0) {
    y = next;
  } else {
    y = next + momentum * (next - x);
  }
  x = next;
}

// Accelerated gradient descent on F from θ = 0 at step 1/β_F, until ‖∇F‖ ≤ the tolerance or the
// iteration limit; records F(0), the iterations and convergence in `out`.
Result<BestIterate> minimise(Evaluator& eval, const OptimumOptions& o, FittedOptimum& out) {
  SoftmaxModel& model = out.model;
  const double step = 1.0 / out.smoothness;
  const double kappa = out.smoothness / o.lambda;
  const double momentum = (std::sqrt(kappa) - 1.0) / (std::sqrt(kappa) + 1.0);
  // Iterates in double; the gradient is taken at their float rounding, which is what θ̂ is.
  const Eigen::Index size = model.parameters().size();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(size);
  Eigen::VectorXd y = x;
  Eigen::VectorXd gradient(size);
  BestIterate best{model.parameters()};
  for (int it = 1; it <= o.maxIterations; ++it) {
    model.parameters() = y.cast<float>();
    const double objective = eval.evaluate(model, o.lambda, gradient);
    if (it == 1) out.objectiveAtZero = objective;
    const double norm = gradient.norm();
    out.iterations = it;
    if (!std::isfinite(objective) || !std::isfinite(norm)) {
      return Status::numericalIssue("the optimiser for θ̂ diverged (objective " + formatNumber(objective) + ")");
    }
    if (norm < best.gradientNorm) {
      best.parameters = model.parameters();
      best.gradientNorm = norm;
      best.objective = objective;
    }
    if (norm <= o.gradientTolerance) {
      out.converged = true;
      break;
    }
    acceleratedStep(x, y, gradient, step, momentum);
  }
  return best;
}

}  // namespace

Result<FittedOptimum> fitOptimum(const Dataset& data, const OptimumOptions& o) {
  DPX_RETURN_IF_ERROR(checkData(data));
  DPX_RETURN_IF_ERROR(checkOptimumOptions(o));
  const double lambda = o.lambda;
  FittedOptimum out;
  out.model = SoftmaxModel(data.dimension(), data.numClasses);
  Evaluator eval{data, training::squaredRowNorms(data.features), allRecords(data), {}, {}};
  out.smoothness = kSmoothnessMargin * training::largestEigenvalueOfGram(data) / 2.0 + lambda;
  DPX_ASSIGN_OR_RETURN(const BestIterate best, minimise(eval, o, out));
  // Strong convexity certifies the distance to θ*: ‖θ̂ − θ*‖ ≤ ‖∇F(θ̂)‖/λ.
  out.model.parameters() = best.parameters;
  out.objective = best.objective;
  out.gradientNorm = best.gradientNorm;
  out.distanceBound = best.gradientNorm / lambda;
  out.suboptimalityBound = best.gradientNorm * best.gradientNorm / (2.0 * lambda);
  out.thetaNorm = best.parameters.cast<double>().norm();
  out.optimumNormBound = out.thetaNorm + out.distanceBound;
  return out;
}

Result<GradientSpread> gradientSpread(const Dataset& data, const SoftmaxModel& model, double lambda, double clipNorm) {
  DPX_RETURN_IF_ERROR(checkData(data));
  if (!std::isfinite(lambda) || lambda < 0.0) {
    return Status::invalidArgument("lambda = " + formatNumber(lambda) +
                                   " is out of range: λ must be a finite number ≥ 0");
  }
  if (!(clipNorm > 0.0)) {
    return Status::invalidArgument("clip norm = " + formatNumber(clipNorm) + " is out of range: it must be > 0");
  }
  if (model.dimension() != data.dimension() || model.classes() != data.numClasses) {
    return Status::invalidArgument("the model (" + std::to_string(model.dimension()) + " features, " +
                                   std::to_string(model.classes()) + " classes) does not fit the data (" +
                                   std::to_string(data.dimension()) + " features, " + std::to_string(data.numClasses) +
                                   " classes)");
  }
  const std::vector<float> squaredNorms = training::squaredRowNorms(data.features);
  const std::vector<std::int64_t> records = allRecords(data);
  GradientWorkspace workspace;
  Eigen::VectorXf sum;
  std::vector<double> norms;
  training::clippedGradientSum(model, data, squaredNorms, records, clipNorm, workspace, sum, &norms);
  const double n = static_cast<double>(data.size());
  // Clipped norms are min(‖∇CEᵢ‖, clip); the mean of the gᵢ is the clipped mean plus λθ.
  double meanSquaredClipped = 0.0;
  GradientSpread out;
  for (double norm : norms) {
    const double clipped = std::min(norm, clipNorm);
    meanSquaredClipped += clipped * clipped;
    out.maxNorm = std::max(out.maxNorm, norm);
  }
  meanSquaredClipped /= n;
  const Eigen::VectorXd meanData = sum.cast<double>() / n;
  const Eigen::VectorXd mean = meanData + lambda * model.parameters().cast<double>();
  out.meanSquaredNorm = mean.squaredNorm();
  // v = (1/n)Σ‖cᵢ‖² − ‖c̄‖² for the data parts cᵢ; the common λθ shifts every gᵢ alike.
  out.variance = std::max(0.0, meanSquaredClipped - meanData.squaredNorm());
  if (!std::isfinite(out.meanSquaredNorm) || !std::isfinite(out.variance)) {
    return Status::numericalIssue("the per-record gradients at θ̂ are not finite");
  }
  return out;
}

Result<double> batchGradientSecondMoment(double meanSquaredNorm, double variance, std::int64_t records,
                                         std::int64_t batchSize) {
  if (!(std::isfinite(meanSquaredNorm) && meanSquaredNorm >= 0.0)) {
    return Status::invalidArgument("mean squared norm = " + formatNumber(meanSquaredNorm) +
                                   " is out of range: ‖ḡ‖² must be a finite number ≥ 0");
  }
  if (!(std::isfinite(variance) && variance >= 0.0)) {
    return Status::invalidArgument("variance = " + formatNumber(variance) +
                                   " is out of range: v must be a finite number ≥ 0");
  }
  if (records < 1) return Status::invalidArgument("n = " + std::to_string(records) + " is out of range: n must be ≥ 1");
  if (batchSize < 1 || batchSize > records) {
    return Status::invalidArgument("m = " + std::to_string(batchSize) +
                                   " is out of range: the batch size must be in [1, n = " + std::to_string(records) +
                                   "]");
  }
  if (batchSize == records) return meanSquaredNorm;  // the whole data set: no sampling noise
  const double n = static_cast<double>(records);
  const double m = static_cast<double>(batchSize);
  return meanSquaredNorm + (n - m) / (m * (n - 1.0)) * variance;
}

Result<UtilityInputs> estimateUtilityInputs(const Dataset& data, const UtilityInputOptions& options) {
  UtilityInputs out;
  DPX_ASSIGN_OR_RETURN(out.optimum, fitOptimum(data, options.optimum));
  out.records = data.size();
  out.dimension = static_cast<double>(out.optimum.model.parameters().size());
  const double lambda = options.optimum.lambda;
  DPX_ASSIGN_OR_RETURN(out.spread, gradientSpread(data, out.optimum.model, lambda));
  DPX_ASSIGN_OR_RETURN(out.xi2, batchGradientSecondMoment(out.spread.meanSquaredNorm, out.spread.variance, out.records,
                                                          options.batchSize));
  DPX_ASSIGN_OR_RETURN(out.clippedSpread, gradientSpread(data, out.optimum.model, lambda, options.clipNorm));
  out.gammaMAtMode = out.records > 1 ? out.clippedSpread.variance / static_cast<double>(out.records - 1) : 0.0;
  return out;
}

}  // namespace dpx::core::utility
