// A run: its four compositions (two directions, two estimates) scheduled on two lanes, the steps a
// curve's runs share, FFTW planned while the optimistic sweeps run, buffers handed from job to job.
// Apart from pld_composition.cpp, which composes one job and knows nothing of the others.
#include <algorithm>
#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "accounting/pld_buffers.h"
#include "accounting/pld_composition.h"
#include "accounting/pld_internal.h"
#include "accounting/pld_spectrum.h"
#include "accounting/privacy_loss_distribution.h"
#include "common/format.h"
#include "common/parallel.h"
#include "numerics/real_fft.h"

namespace dpx::core::accounting::pld {
namespace {

using detail::bandPathPossible;
using detail::BufferPool;
using detail::cancelledStatus;
using detail::composeBand;
using detail::composeWith;
using detail::CompositionPlan;
using detail::KeptLosses;
using detail::planComposition;
using numerics::RealTransform;

}  // namespace

double ComposedRun::deltaUpper(double epsilon) const {
  return std::max(remove[0].delta(epsilon), add[0].delta(epsilon));
}

double ComposedRun::deltaLower(double epsilon) const {
  return std::max(remove[1].delta(epsilon), add[1].delta(epsilon));
}

Result<double> ComposedRun::epsilonUpper(double delta) const {
  DPX_ASSIGN_OR_RETURN(const double r, remove[0].epsilon(delta));
  DPX_ASSIGN_OR_RETURN(const double a, add[0].epsilon(delta));
  return std::max(r, a);
}

Result<double> ComposedRun::epsilonLower(double delta) const {
  DPX_ASSIGN_OR_RETURN(const double r, remove[1].epsilon(delta));
  DPX_ASSIGN_OR_RETURN(const double a, add[1].epsilon(delta));
  return std::max(r, a);
}

namespace {

// Progress of jobs running on several threads, reported as their mean and only from the thread
// that started them: a caller's progress callback (a GUI's) need not be thread-safe.
class JobProgress {
 public:
  JobProgress(const ComputeControl& control, std::size_t jobs)
      : m_control(control), m_fractions(jobs), m_caller(std::this_thread::get_id()) {
    for (auto& f : m_fractions) f.store(0.0, std::memory_order_relaxed);
  }
  ComputeControl job(std::size_t k) {
    ComputeControl c;
    c.cancel = m_control.cancel;
    if (m_control.progress) c.progress = [this, k](double f) { update(k, f); };
    return c;
  }

 private:
  void update(std::size_t k, double fraction) {
    m_fractions[k].store(fraction, std::memory_order_relaxed);
    if (std::this_thread::get_id() != m_caller) return;
    double sum = 0.0;
    for (const auto& f : m_fractions) sum += f.load(std::memory_order_relaxed);
    m_reported = std::max(m_reported, sum / static_cast<double>(m_fractions.size()));
    m_control.report(m_reported);
  }
  const ComputeControl& m_control;
  std::vector<std::atomic<double>> m_fractions;
  std::thread::id m_caller;
  double m_reported = 0.0;  // touched by the caller's thread only
};

// One step's discretisation, as a run asks for it.
struct StepKey {
  double q;
  double sigma;
  Direction direction;
  Estimate estimate;
  double interval;
  double tau;
  bool operator==(const StepKey&) const = default;
};

// The discretised steps of the last few runs: the points of an ε-vs-K curve, composed on one grid
// with truncations that agree within each power of 10 of K, share them. Discretised outside the
// lock (two runs asking for one step at once each discretise it: the curve composes a decade's
// points one after another, so it does not).
Result<std::shared_ptr<const DiscretePld>> sharedStep(const StepKey& key, const ComputeControl& control) {
  static std::mutex mutex;
  static std::list<std::pair<StepKey, std::shared_ptr<const DiscretePld>>> cache;  // most recent first
  constexpr std::size_t kCachedSteps = 16;
  {
    const std::lock_guard lock(mutex);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (!(it->first == key)) continue;
      cache.splice(cache.begin(), cache, it);
      return cache.front().second;
    }
  }
  DPX_ASSIGN_OR_RETURN(DiscretePld step, discretise(SubsampledGaussianPair(key.q, key.sigma, key.direction),
                                                    key.interval, key.estimate, key.tau, control));
  auto shared = std::make_shared<const DiscretePld>(std::move(step));
  const std::lock_guard lock(mutex);
  cache.emplace_front(key, shared);
  if (cache.size() > kCachedSteps) cache.pop_back();
  return shared;
}

// One composed PLD of a run: a direction and an estimate.
struct RunJob {
  Direction direction;
  Estimate estimate;
  std::vector<std::shared_ptr<const DiscretePld>> bases;
  std::vector<Segment> parts;
  CompositionPlan plan;
  Status status = Status::ok();
  DiscretePld composed;
  CompositionInfo info;
};

// Above this many transform points the jobs of a run are composed one after the other (each
// transform on two threads), so at most one set of buffers is alive: the memory guards were
// set for one.
constexpr std::size_t kParallelJobsMaximumSize = std::size_t{1} << 22;

// FFTW's planner takes ~3–8 ms at 2^18–2^20 points (the forward plan), and the transform size is known only once
// every job of a run is planned; the optimistic quantisation (a sequential root-finding sweep) is
// the longest part of that, while the pessimistic steps are done early. The size their windows
// need is usually the run's (their windows are the wider), so it is planned then, on a thread of
// its own, beside the optimistic sweeps; a wrong guess costs only CPU time (the plan is made
// again at the right size, and a plan depends on its size alone). kissfft's twiddles (~0.4 ms at
// 32 400 points, for sizes below FFTW's) are made instead by the lane that ends its steps first,
// while the other lane still quantises: composing, both lanes would wait for them. Out of line:
// inlined into the job loop, it changed how the compiler contracted the arithmetic around it.
class EarlyPlanner {
 public:
  explicit EarlyPlanner(std::size_t pessimisticJobs) : m_left(pessimisticJobs) {}
  [[gnu::noinline]] void pessimisticDone(std::size_t points) {
    std::size_t seen = m_points.load();
    while (points > seen && !m_points.compare_exchange_weak(seen, points)) {
    }
    if (m_left.fetch_sub(1) != 1) return;
    const std::size_t n = numerics::realFftSize(m_points.load());
    if (!numerics::usesFftw(n)) return;
    m_thread = std::jthread([n] { numerics::prepareRealTransform(n, n <= kParallelJobsMaximumSize ? 1 : 2); });
  }
  // A lane has discretised its jobs; the first of the two makes kissfft's plan if the
  // pessimistic jobs need one.
  [[gnu::noinline]] void laneDone() {
    if (m_lanesDone.fetch_add(1) != 0 || m_left.load() != 0 || m_points.load() == 0) return;
    const std::size_t n = numerics::realFftSize(m_points.load());
    if (!numerics::usesFftw(n)) numerics::prepareRealTransform(n, 1);
  }
  [[gnu::noinline]] void join() {
    if (m_thread.joinable()) m_thread.join();
  }

 private:
  std::atomic<std::size_t> m_left;
  std::atomic<std::size_t> m_points{0};
  std::atomic<int> m_lanesDone{0};
  std::jthread m_thread;  // joined on every path out
};

}  // namespace

double stepTruncation(double tau, std::int64_t count) {
  double decade = 1.0;
  while (decade < static_cast<double>(count)) decade *= 10.0;
  return tau / (4.0 * decade);
}

Result<ComposedRun> composeRun(std::span<const GaussianSegment> segments, double interval, double tau,
                               bool withOptimistic, const ComputeControl& control) {
  if (segments.empty()) return Status::invalidArgument("a run needs at least one segment");
  for (const GaussianSegment& s : segments) {
    if (!(s.q > 0.0 && s.q <= 1.0))
      return Status::invalidArgument("sampling rate q = " + formatNumber(s.q) + " must be in (0, 1]");
    if (!(s.sigma > 0.0) || !std::isfinite(s.sigma)) {
      return Status::invalidArgument("noise multiplier σ = " + formatNumber(s.sigma) + " must be > 0");
    }
    if (s.count < 1) return Status::invalidArgument("steps K = " + std::to_string(s.count) + " must be ≥ 1");
  }
  std::vector<RunJob> jobs;
  for (Direction direction : {Direction::kRemove, Direction::kAdd}) {
    jobs.push_back({direction, Estimate::kPessimistic, {}, {}, {}, Status::ok(), {}, {}});
    if (withOptimistic) jobs.push_back({direction, Estimate::kOptimistic, {}, {}, {}, Status::ok(), {}, {}});
  }
  JobProgress progress(control, jobs.size());
  std::vector<ComputeControl> controls;
  for (std::size_t k = 0; k < jobs.size(); ++k) controls.push_back(progress.job(k));

  EarlyPlanner planner(withOptimistic ? jobs.size() / 2 : jobs.size());
  // The jobs are independent: discretised and planned side by side in two lanes, one per core.
  // A lane takes a direction's pessimistic step first (parallel inside when the lanes run on
  // oneTBB, and done early so FFTW is planned beside the rest), then the other direction's optimistic step, a
  // sequential root-finding sweep and the longest part of a small run: with a direction per lane, the lane of the
  // shorter sweep sat idle for a third of the stage.
  using Lane = std::vector<std::size_t>;  // indices into jobs: remove, add; pessimistic first
  const std::vector<Lane> lanes = withOptimistic ? std::vector<Lane>{{0, 3}, {2, 1}} : std::vector<Lane>{{0}, {1}};
  auto discretiseJob = [&](std::size_t k) {
    RunJob& job = jobs[k];
    ComputeControl sub = controls[k];
    sub.progress = nullptr;  // reported by the composition
    job.bases.reserve(segments.size());
    for (const GaussianSegment& s : segments) {
      Result<std::shared_ptr<const DiscretePld>> base =
          sharedStep({s.q, s.sigma, job.direction, job.estimate, interval, stepTruncation(tau, s.count)}, sub);
      if (!base) {
        job.status = base.status();
        return;
      }
      job.bases.push_back(std::move(*base));
    }
    for (std::size_t i = 0; i < segments.size(); ++i) job.parts.push_back({job.bases[i].get(), segments[i].count});
    Result<CompositionPlan> plan = planComposition(job.parts, tau);
    if (!plan) {
      job.status = plan.status();
      return;
    }
    job.plan = *plan;
    // A job that will likely take the band path needs no transform of its window's size.
    if (job.estimate == Estimate::kPessimistic) {
      const bool band = bandPathPossible(job.parts, numerics::realFftSize(job.plan.points));
      planner.pessimisticDone(band ? 0 : job.plan.points);
    }
  };
  twoLanes(
      [&] {
        for (std::size_t k : lanes[0]) discretiseJob(k);
        planner.laneDone();
      },
      [&] {
        for (std::size_t k : lanes[1]) discretiseJob(k);
        planner.laneDone();
      });
  planner.join();
  for (const RunJob& job : jobs) DPX_RETURN_IF_ERROR(job.status);
  if (control.cancelled()) return cancelledStatus();

  // One transform size for every job, so a large run plans FFTW once.
  std::size_t points = 0;
  for (const RunJob& job : jobs) points = std::max(points, job.plan.points);
  const std::size_t n = numerics::realFftSize(points);
  const bool sideBySide = n <= kParallelJobsMaximumSize;
  const int threads = sideBySide ? 1 : 2;
  // Made by the first job that needs it: a long run's jobs usually take the band path, which
  // needs no transform of size n (nor FFTW's plans for it).
  std::optional<RealTransform> transform;
  std::once_flag transformMade;
  BufferPool buffers(2 * (n / 2 + 1));
  auto composeJob = [&](std::size_t k) {
    RunJob& job = jobs[k];
    if (std::optional<DiscretePld> banded =
            composeBand(job.parts, job.estimate, tau, job.plan, n, threads, &job.info)) {
      job.composed = std::move(*banded);
      controls[k].report(1.0);
      return;
    }
    std::call_once(transformMade, [&] { transform.emplace(n, threads); });
    Result<DiscretePld> composed = composeWith(job.parts, job.estimate, tau, job.plan, *transform,
                                               KeptLosses::kNonNegative, controls[k], &job.info, &buffers);
    if (composed) {
      job.composed = std::move(*composed);
    } else {
      job.status = composed.status();
    }
  };
  if (sideBySide) {
    auto every = [&](std::size_t from) {
      for (std::size_t k = from; k < jobs.size(); k += 2) composeJob(k);
    };
    twoLanes([&] { every(0); }, [&] { every(1); });
  } else {
    for (std::size_t k = 0; k < jobs.size(); ++k) composeJob(k);
  }
  for (const RunJob& job : jobs) DPX_RETURN_IF_ERROR(job.status);

  ComposedRun run;
  run.interval = interval;
  run.tau = tau;
  run.info = jobs.front().info;
  for (RunJob& job : jobs) {
    (job.direction == Direction::kRemove ? run.remove : run.add)[job.estimate == Estimate::kPessimistic ? 0 : 1] =
        std::move(job.composed);
  }
  if (!withOptimistic) {
    run.remove[1] = run.remove[0];
    run.add[1] = run.add[0];
  }
  control.report(1.0);
  return run;
}

namespace {

// Each PLD replaced by its tables, side by side as the run was composed (copies share a
// spectrum: its tables are made once).
void replaceByTables(std::span<DiscretePld* const> plds, std::size_t fftSize) {
  auto tabulate = [&](std::size_t k) { *plds[k] = plds[k]->tables(); };
  if (fftSize <= kParallelJobsMaximumSize) {
    auto every = [&](std::size_t from) {
      for (std::size_t k = from; k < plds.size(); k += 2) tabulate(k);
    };
    twoLanes([&] { every(0); }, [&] { every(1); });
  } else {
    for (std::size_t k = 0; k < plds.size(); ++k) tabulate(k);
  }
}

}  // namespace

ComposedRun ComposedRun::tabulated() const {
  ComposedRun out = *this;
  DiscretePld* const plds[] = {&out.remove[0], &out.remove[1], &out.add[0], &out.add[1]};
  replaceByTables(plds, info.fftSize);
  return out;
}

ComposedRun ComposedRun::tabulated(Estimate only) const {
  ComposedRun out = *this;
  const int e = only == Estimate::kPessimistic ? 0 : 1;
  DiscretePld* const plds[] = {&out.remove[e], &out.add[e]};
  replaceByTables(plds, info.fftSize);
  return out;
}

}  // namespace dpx::core::accounting::pld
