#include "training/frontier.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "common/format.h"
#include "common/parallel.h"

namespace dpx::core::training {
namespace {

constexpr int kMaxSeeds = 50;
constexpr std::size_t kMaxPoints = 64;

std::vector<double> logGrid(double lo, double hi, int points) {
  std::vector<double> grid;
  for (int i = 0; i < points; ++i) {
    grid.push_back(std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / (points - 1)));
  }
  return grid;
}

Status validateRequest(const FrontierRequest& r, const TrainTestSplit* data) {
  if (!data) return Status::invalidArgument("no dataset");
  if (r.mechanisms.empty()) return Status::invalidArgument("the frontier needs at least one private mechanism");
  for (Mechanism m : r.mechanisms) {
    if (!isPrivate(m)) {
      return Status::invalidArgument(std::string(mechanismId(m)) +
                                     " is not private: it is the frontier's ceiling, not one of its series");
    }
  }
  if (r.seeds < 1 || r.seeds > kMaxSeeds) {
    return Status::invalidArgument("seeds = " + std::to_string(r.seeds) + " is out of range: must be in [1, 50]");
  }
  if (r.epsilons.empty()) return Status::invalidArgument("the frontier needs at least one target ε");
  for (double e : r.epsilons) {
    if (!std::isfinite(e) || !(e > 0.0)) {
      return Status::invalidArgument("target ε = " + formatNumber(e) + " is out of range: must be a finite number > 0");
    }
  }
  const std::vector<double>& points = r.vary == FrontierVary::kEpsilon ? r.epsilons : r.epochsList;
  if (points.empty() || points.size() > kMaxPoints) {
    return Status::invalidArgument(std::string(r.vary == FrontierVary::kEpsilon ? "targets" : "epochs") + ": " +
                                   std::to_string(points.size()) + " points, must be 1 to 64");
  }
  for (double e : r.epochsList) {
    if (!std::isfinite(e) || !(e > 0.0) || e > 100000.0) {
      return Status::invalidArgument("epochs = " + formatNumber(e) + " is out of range: must be in (0, 1e5]");
    }
  }
  return Status::ok();
}

// One (mechanism, point) cell, or one point of the non-private ceiling.
struct Cell {
  std::size_t series = 0;  // index into result.series; npos: the ceiling
  std::size_t point = 0;
  TrainerConfig config;
};

class FrontierRunner {
 public:
  FrontierRunner(const FrontierRequest& request, std::shared_ptr<const TrainTestSplit> data,
                 const FrontierCallbacks& callbacks, const std::atomic<bool>* cancel)
      : m_request(request), m_data(std::move(data)), m_callbacks(callbacks), m_cancel(cancel) {}

  FrontierResult run() {
    const auto start = std::chrono::steady_clock::now();
    buildCells();
    m_total = static_cast<std::int64_t>(m_cells.size()) * m_request.seeds;
    inArena(m_request.base.threads, [&] {
      parallelFor(
          std::size_t{0}, m_cells.size(), [&](std::size_t i) { runCell(m_cells[i]); }, tbb::simple_partitioner());
    });
    m_result.cancelled = m_cancel && m_cancel->load();
    m_result.runs = m_done.load();
    if (!m_ceiling.empty() && m_request.vary == FrontierVary::kEpsilon && m_ceiling.front() >= 0.0) {
      m_result.nonPrivateAccuracy = m_ceiling.front();
    }
    if (m_request.vary == FrontierVary::kEpochs) {
      for (double a : m_ceiling) m_result.nonPrivateByEpochs.push_back(std::max(0.0, a));
    }
    m_result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(m_result);
  }

 private:
  static constexpr std::size_t kCeiling = static_cast<std::size_t>(-1);

  void buildCells() {
    const bool byEpsilon = m_request.vary == FrontierVary::kEpsilon;
    const std::size_t points = byEpsilon ? m_request.epsilons.size() : m_request.epochsList.size();
    m_result.vary = m_request.vary;
    m_result.delta = m_request.base.knobs.delta;
    const DataBounds bounds = m_request.base.bounds ? *m_request.base.bounds : computeDataBounds(*m_data);
    for (std::size_t s = 0; s < m_request.mechanisms.size(); ++s) {
      FrontierSeries series;
      series.mechanism = m_request.mechanisms[s];
      // The accountant its runs report (a bad choice fails each point's trainer, which says why).
      const std::string requested = series.mechanism == Mechanism::kDpSgd ? m_request.base.accountant : std::string();
      if (Result<std::string> id = resolveAccountant(series.mechanism, requested, m_request.base.knobs.sampling)) {
        series.accountant = *id;
      }
      series.points.resize(points);
      m_result.series.push_back(series);
      for (std::size_t i = 0; i < points; ++i) {
        TrainerConfig c = baseConfig(bounds);
        c.mechanism = series.mechanism;
        c.targetEpsilon = byEpsilon ? m_request.epsilons[i] : m_request.epsilons.front();
        if (!byEpsilon) c.epochs = m_request.epochsList[i];
        if (series.mechanism != Mechanism::kDpSgd) c.accountant.clear();  // only dp-sgd has a choice
        FrontierPoint& p = m_result.series[s].points[i];
        p.targetEpsilon = *c.targetEpsilon;
        p.epochs = c.epochs;
        m_cells.push_back({s, i, std::move(c)});
      }
    }
    if (!m_request.nonPrivateCeiling) return;
    const std::size_t ceilingPoints = byEpsilon ? 1 : points;
    m_ceiling.assign(ceilingPoints, -1.0);
    for (std::size_t i = 0; i < ceilingPoints; ++i) {
      TrainerConfig c = baseConfig(bounds);
      c.mechanism = Mechanism::kSgd;
      c.accountant.clear();
      if (!byEpsilon) c.epochs = m_request.epochsList[i];
      m_cells.push_back({kCeiling, i, std::move(c)});
    }
  }

  TrainerConfig baseConfig(const DataBounds& bounds) const {
    TrainerConfig c = m_request.base;
    c.bounds = bounds;
    c.useCallerArena = true;
    c.evaluateEachEpoch = false;
    c.targetEpsilon.reset();
    return c;
  }

  bool cancelled() const { return m_cancel && m_cancel->load(std::memory_order_relaxed); }

  void runCell(const Cell& cell) {
    if (cancelled()) return;
    FrontierPoint scratch;
    FrontierPoint& point = cell.series == kCeiling ? scratch : m_result.series[cell.series].points[cell.point];
    Result<std::unique_ptr<Trainer>> trainer = Trainer::create(cell.config, m_data);
    if (!trainer) {
      point.error = trainer.status().message();
      finishRuns(m_request.seeds);
      if (cell.series != kCeiling && m_callbacks.pointDone) m_callbacks.pointDone(cell.series, cell.point, point);
      return;
    }
    const ResolvedRun& run = (*trainer)->resolved();
    point.sigma = run.sigma;
    point.eta = run.eta;
    point.steps = run.steps;
    point.batch = run.accountantParams.m;
    // The seeds of a point share the calibration: one trainer, re-seeded.
    std::vector<std::optional<TrainingResult>> results(static_cast<std::size_t>(m_request.seeds));
    parallelFor(0, m_request.seeds, [&](int k) {
      if (cancelled()) return;
      std::unique_ptr<Trainer> seeded = (*trainer)->withSeed(cell.config.seed + static_cast<std::uint64_t>(k));
      TrainingControl control(m_cancel);
      Result<TrainingResult> r = seeded->run(&control);
      if (r && !r->cancelled) results[static_cast<std::size_t>(k)] = std::move(*r);
      finishRuns(1);
    });
    if (cancelled()) return;
    summarise(results, point);
    if (cell.series == kCeiling) {
      if (point.ok()) m_ceiling[cell.point] = point.accuracyMean;
      if (m_request.vary == FrontierVary::kEpsilon && point.ok() && m_callbacks.ceilingDone) {
        m_callbacks.ceilingDone(point.accuracyMean);
      }
      return;
    }
    if (m_callbacks.pointDone) m_callbacks.pointDone(cell.series, cell.point, point);
  }

  static void summarise(const std::vector<std::optional<TrainingResult>>& results, FrontierPoint& point) {
    double sum = 0.0;
    point.accuracyMin = 1.0;
    point.accuracyMax = 0.0;
    for (const std::optional<TrainingResult>& r : results) {
      if (!r) continue;
      const double a = r->finalTestAccuracy;
      sum += a;
      point.accuracyMin = std::min(point.accuracyMin, a);
      point.accuracyMax = std::max(point.accuracyMax, a);
      if (r->epsilon) point.epsilon = std::max(point.epsilon.value_or(0.0), *r->epsilon);
      ++point.seeds;
    }
    if (point.seeds == 0) {
      point.error = "no run finished";
      point.accuracyMin = point.accuracyMax = 0.0;
      return;
    }
    point.accuracyMean = sum / point.seeds;
  }

  void finishRuns(int count) {
    const std::int64_t done = m_done.fetch_add(count) + count;
    if (m_callbacks.progress && m_total > 0) {
      m_callbacks.progress(static_cast<double>(done) / static_cast<double>(m_total));
    }
  }

  const FrontierRequest& m_request;
  std::shared_ptr<const TrainTestSplit> m_data;
  const FrontierCallbacks& m_callbacks;
  const std::atomic<bool>* m_cancel;
  std::vector<Cell> m_cells;
  std::vector<double> m_ceiling;  // sgd accuracy per ceiling point, −1 until known
  FrontierResult m_result;
  std::int64_t m_total = 0;
  std::atomic<std::int64_t> m_done{0};
};

}  // namespace

std::vector<double> frontierEpsilonGrid(double epsilon, int points) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon) || points < 2) return {};
  return logGrid(epsilon / 8.0, epsilon * 8.0, points);
}

std::vector<double> frontierEpochsGrid(double epochs, int points) {
  if (!(epochs > 0.0) || !std::isfinite(epochs) || points < 2) return {};
  std::vector<double> grid;
  for (double e : logGrid(std::max(1.0, epochs / 8.0), std::max(2.0, epochs * 8.0), points)) {
    const double whole = std::max(1.0, std::round(e));
    if (grid.empty() || whole > grid.back()) grid.push_back(whole);
  }
  return grid;
}

Result<FrontierResult> computeFrontier(const FrontierRequest& request, std::shared_ptr<const TrainTestSplit> data,
                                       const FrontierCallbacks& callbacks, const std::atomic<bool>* cancel) {
  DPX_RETURN_IF_ERROR(validateRequest(request, data.get()));
  FrontierRunner runner(request, std::move(data), callbacks, cancel);
  return runner.run();
}

}  // namespace dpx::core::training
