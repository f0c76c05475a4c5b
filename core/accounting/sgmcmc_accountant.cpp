#include "accounting/sgmcmc_accountant.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "accounting/subsampled_gaussian_rdp.h"
#include "common/format.h"

namespace dpx::core::accounting {
namespace {

// Lattice spacing in log σ: neighbouring points differ by 0.2 %. Charging a cell the RDP at its
// lower point overstates it by about 0.2 %·|d log ε_α / d log σ| at worst — under 1 % for the
// orders that set ε unless σ is well below 1.
const double kLatticeStep = std::log(1.002);

// The first steps are charged at their own σ_t: there consecutive σ_t differ by more than a
// lattice cell anyway, and a run of a few steps is then exact (K = 1 equals the constant
// schedule). Past the head every lattice floor is above σ₁, so the decreasing schedule is never
// charged more than the constant one at the same σ₁.
constexpr std::int64_t kExactHead = 32;

std::int64_t latticeIndex(double logSigma1, std::int64_t t) {
  return static_cast<std::int64_t>(std::floor((logSigma1 + std::log(static_cast<double>(t)) / 6.0) / kLatticeStep));
}

// Memo keys: the exact doubles (q, α) or (q, σ₁, α), hashed by their bits.
template <std::size_t N>
struct KeyHash {
  std::size_t operator()(const std::array<double, N>& key) const {
    std::uint64_t h = 0;
    for (const double x : key) {
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      h = (h ^ (h >> 29) ^ bits) * 0xBF58476D1CE4E5B9ull;
    }
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

// Per-step RDP at the lattice points, one row of cells per (q, α). The lattice does not depend on
// σ₁, so every profile of a run (ε, δ(ε), the trade-off, the RDP chart) and every σ₁ a calibration
// or the step-size search tries shares the same cells. A profile needs ~420 orders × up to ~1400
// cells; the general (q, σ, α) memo of subsampledGaussianRdpCached, keyed per cell, would hold
// those as ~600 k hash nodes (more than it keeps), so the rows are plain arrays instead (8 bytes
// a cell), bounded by kCapacity cells in all and evicted least recently used first.
class LatticeMemo {
 public:
  // values[i] = memoised ε_α(q, e^{(first + i)h}) for i < values.size(), NaN where unknown.
  void lookup(double q, double alpha, std::int64_t first, std::span<double> values) {
    std::fill(values.begin(), values.end(), kUnknown);
    std::lock_guard lock(m_mutex);
    const auto it = m_rows.find({q, alpha});
    if (it == m_rows.end()) return;
    Row& row = it->second;
    row.lastUse = ++m_clock;
    const std::int64_t lo = std::max(first, row.first);
    const std::int64_t hi = std::min(first + static_cast<std::int64_t>(values.size()), row.end());
    for (std::int64_t j = lo; j < hi; ++j) {
      values[static_cast<std::size_t>(j - first)] = row.values[static_cast<std::size_t>(j - row.first)];
    }
  }

  // Adds the known entries of values (same layout as lookup) to the row of (q, α).
  void store(double q, double alpha, std::int64_t first, std::span<const double> values) {
    std::lock_guard lock(m_mutex);
    Row& row = m_rows[{q, alpha}];
    row.lastUse = ++m_clock;
    m_size -= row.values.size();
    const std::int64_t end = first + static_cast<std::int64_t>(values.size());
    if (row.values.empty() || std::max(end, row.end()) - std::min(first, row.first) > kMaxRowCells) {
      // A new row, or one that would span more cells than any run needs (σ₁ jumped across
      // decades): start it afresh at this call's cells.
      row.first = first;
      row.values.assign(values.size(), kUnknown);
    } else if (first < row.first || end > row.end()) {
      const std::int64_t newFirst = std::min(first, row.first);
      std::vector<double> grown(static_cast<std::size_t>(std::max(end, row.end()) - newFirst), kUnknown);
      std::copy(row.values.begin(), row.values.end(), grown.begin() + (row.first - newFirst));
      row.first = newFirst;
      row.values = std::move(grown);
    }
    m_size += row.values.size();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!std::isnan(values[i])) row.values[static_cast<std::size_t>(first - row.first) + i] = values[i];
    }
    if (m_size > kCapacity) evictLeastRecentlyUsed();
  }

 private:
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  // 2²¹ cells = 16 MiB: a few full profiles (a run at K = 10⁷ spans ~1100 cells) plus the bracket
  // of a step-size search, which moves σ₁ over a factor T^{1/6} and so doubles a row's span.
  static constexpr std::size_t kCapacity = std::size_t{1} << 21;
  // σ_eff spans ~40 in log σ over the knob ranges (20 000 cells) and a run's own schedule ~3
  // more: no search needs a wider row.
  static constexpr std::int64_t kMaxRowCells = 32768;

  using Key = std::array<double, 2>;
  struct Row {
    std::int64_t first = 0;
    std::vector<double> values;
    std::uint64_t lastUse = 0;
    std::int64_t end() const { return first + static_cast<std::int64_t>(values.size()); }
  };

  // Drops the least recently used rows down to half the capacity, so the sort over the rows runs
  // once per many stores rather than on every one.
  void evictLeastRecentlyUsed() {
    std::vector<std::pair<std::uint64_t, Key>> byAge;
    byAge.reserve(m_rows.size());
    for (const auto& [key, row] : m_rows) byAge.emplace_back(row.lastUse, key);
    std::sort(byAge.begin(), byAge.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [lastUse, key] : byAge) {
      if (m_size <= kCapacity / 2) break;
      const auto it = m_rows.find(key);
      m_size -= it->second.values.size();
      m_rows.erase(it);
    }
  }

  std::mutex m_mutex;
  std::unordered_map<Key, Row, KeyHash<2>> m_rows;
  std::size_t m_size = 0;  // cells held over all rows
  std::uint64_t m_clock = 0;
};

// The exact head's per-step values by (q, σ₁, α). Every profile of one run asks for the same
// heads, and at small σ (slowly converging fractional-order series) the 32 head steps cost more
// than all the memoised cells together. Two generations bound it: when the current one is full
// it becomes the previous one, and a head found there moves back into the current.
class HeadMemo {
 public:
  using Head = std::array<double, kExactHead>;

  // Copies the memoised head of (q, σ₁, α) into head; returns how many leading steps it holds.
  std::int64_t lookup(double q, double sigma1, double alpha, Head& head) {
    std::lock_guard lock(m_mutex);
    const Key key{q, sigma1, alpha};
    auto it = m_current.find(key);
    if (it == m_current.end()) {
      const auto old = m_previous.find(key);
      if (old == m_previous.end()) return 0;
      // A copy: a full current generation replaces the previous one inside insert, and with it
      // the entry found there.
      const Entry found = old->second;
      it = insert(key, found);
    }
    head = it->second.values;
    return it->second.count;
  }

  void store(double q, double sigma1, double alpha, const Head& head, std::int64_t count) {
    std::lock_guard lock(m_mutex);
    insert({q, sigma1, alpha}, Entry{head, count});
  }

 private:
  // 4096 heads (~1.3 MiB) a generation: the ~420 orders of about ten runs.
  static constexpr std::size_t kGeneration = 4096;

  using Key = std::array<double, 3>;
  struct Entry {
    Head values;
    std::int64_t count;
  };
  using Map = std::unordered_map<Key, Entry, KeyHash<3>>;

  Map::iterator insert(const Key& key, const Entry& entry) {
    if (m_current.size() >= kGeneration && !m_current.count(key)) {
      m_previous = std::move(m_current);
      m_current.clear();
    }
    auto [it, inserted] = m_current.try_emplace(key, entry);
    if (!inserted && entry.count > it->second.count) it->second = entry;
    return it;
  }

  std::mutex m_mutex;
  Map m_current;
  Map m_previous;
};

LatticeMemo& latticeMemo() {
  static LatticeMemo memo;
  return memo;
}

HeadMemo& headMemo() {
  static HeadMemo memo;
  return memo;
}

// Σ of the exact per-step RDP of steps 1…headSteps (σ_t = σ₁t^{1/6}), from the memo where known.
Result<double> exactHeadRdp(double q, double sigma1, double alpha, std::int64_t headSteps) {
  HeadMemo::Head head;
  const std::int64_t known = headMemo().lookup(q, sigma1, alpha, head);
  for (std::int64_t t = known + 1; t <= headSteps; ++t) {
    DPX_ASSIGN_OR_RETURN(head[static_cast<std::size_t>(t - 1)],
                         subsampledGaussianRdp(q, sigma1 * std::pow(static_cast<double>(t), 1.0 / 6.0), alpha));
  }
  if (headSteps > known) headMemo().store(q, sigma1, alpha, head, headSteps);
  double total = 0.0;
  for (std::int64_t t = 1; t <= headSteps; ++t) total += head[static_cast<std::size_t>(t - 1)];
  return total;
}

// The lattice cells that steps first…steps occupy, as (lattice index j, steps in it). Per thread
// and reused: a profile asks for this hundreds of times.
const std::vector<std::pair<std::int64_t, std::int64_t>>& latticeCells(double logSigma1, std::int64_t first,
                                                                       std::int64_t steps) {
  thread_local std::vector<std::pair<std::int64_t, std::int64_t>> cells;
  cells.clear();
  std::int64_t t = first;
  while (t <= steps) {
    const std::int64_t j = latticeIndex(logSigma1, t);
    // Last step of this lattice cell: σ₁ t^{1/6} < e^{(j+1)h} ⇔ t < e^{6((j+1)h − log σ₁)}.
    const double bound = std::exp(6.0 * ((j + 1) * kLatticeStep - logSigma1));
    std::int64_t last = bound >= static_cast<double>(steps) ? steps : static_cast<std::int64_t>(std::ceil(bound)) - 1;
    last = std::max(last, t);
    while (last < steps && latticeIndex(logSigma1, last + 1) == j) ++last;
    while (last > t && latticeIndex(logSigma1, last) != j) --last;
    cells.emplace_back(j, last - t + 1);
    t = last + 1;
  }
  return cells;
}

// total + Σ over the cells of (steps in the cell) × the per-step RDP at the cell's σ, from the
// memo where known; what was computed is memoised, even when a later cell fails.
Result<double> addLatticeRdp(double q, double alpha, const std::vector<std::pair<std::int64_t, std::int64_t>>& cells,
                             double total) {
  thread_local std::vector<double> values;
  const std::int64_t first = cells.front().first;  // the indices increase along the run
  values.resize(static_cast<std::size_t>(cells.back().first - first + 1));
  latticeMemo().lookup(q, alpha, first, values);
  bool computed = false;
  for (const auto& [j, count] : cells) {
    double& value = values[static_cast<std::size_t>(j - first)];
    if (std::isnan(value)) {
      const double sigmaCell = std::exp(static_cast<double>(j) * kLatticeStep);  // ≤ σ_t for every t in the cell
      Result<double> perStep = subsampledGaussianRdp(q, sigmaCell, alpha);
      if (!perStep) {
        if (computed) latticeMemo().store(q, alpha, first, values);  // the cells before the failing one
        return perStep;
      }
      value = *perStep;
      computed = true;
    }
    total += value * static_cast<double>(count);
  }
  if (computed) latticeMemo().store(q, alpha, first, values);
  return total;
}

}  // namespace

double sgmcmcNoiseMultiplier(const Params& p, double eta) {
  return static_cast<double>(p.m) / (p.L * std::sqrt(eta * static_cast<double>(p.n)));
}

Result<double> sgmcmcTotalRdp(double q, double sigma1, std::int64_t steps, bool decreasing, double alpha) {
  if (!decreasing) {
    DPX_ASSIGN_OR_RETURN(const double perStep, subsampledGaussianRdpCached(q, sigma1, alpha));
    return perStep * static_cast<double>(steps);
  }
  // The first steps exactly; the tail over the lattice of σ values, each step's σ rounded down.
  const std::int64_t headSteps = std::min(steps, kExactHead);
  DPX_ASSIGN_OR_RETURN(const double head, exactHeadRdp(q, sigma1, alpha, headSteps));
  if (headSteps + 1 > steps) return head;
  return addLatticeRdp(q, alpha, latticeCells(std::log(sigma1), headSteps + 1, steps), head);
}

namespace {

// Thm 3's step-size conditions q²N/(256L²) < η ≤ N/L².
void sgmcmcViolations(const Params& p, std::vector<Violation>& out) {
  const double N = static_cast<double>(p.n);
  const double upper = N / (p.L * p.L);
  const double lower = p.q() * p.q() * N / (256.0 * p.L * p.L);
  if (p.eta > upper) {
    out.push_back({"step size", "η = " + formatNumber(p.eta, 4) + " > N/L² = " + formatNumber(upper, 4) +
                                    ": Thm 3 condition 1 needs η ≤ N/L²"});
  }
  if (!(p.eta > lower)) {
    out.push_back({"step size", "η = " + formatNumber(p.eta, 4) + " ≤ q²N/(256L²) = " + formatNumber(lower, 4) +
                                    ": Thm 3 condition 2 needs η > q²N/(256L²)"});
  }
}

Result<std::vector<NativeValue>> sgmcmcNative(const Params& p) {
  DPX_RETURN_IF_ERROR(p.validate());
  return std::vector<NativeValue>{
      {"sigma_eff", "effective noise multiplier σ = τ/(L√(ηN))", sgmcmcNoiseMultiplier(p, p.eta)},
      {"q", "sampling rate q = τ/N", p.q()},
      {"steps", "steps T", static_cast<double>(p.K)},
  };
}

Result<double> sgmcmcRdp(const Params& p, double alpha, std::string_view) {
  return sgmcmcTotalRdp(p.q(), sgmcmcNoiseMultiplier(p, p.eta), p.K, p.schedule == Schedule::kDecreasing, alpha);
}

}  // namespace

SgmcmcAccountant::SgmcmcAccountant()
    : RdpBasedAccountant(
          {
              .id = "sgmcmc",
              .name = "SG-MCMC posterior sampling (SGLD)",
              .citation = "Li, Chen, Liu & Carin 2019, On connecting SG-MCMC and DP, Alg. 1, Thm 3–4; Wang, Fienberg & "
                          "Smola 2015",
              .assumptions =
                  {.sampling = Sampling::kPoisson,
                   .neighbouring = Neighbouring::kAddRemove,
                   .release = Release::kAllIterates,
                   .statements = {"SGLD posterior sampling: Poisson batches at rate q = τ/N, gradients clipped "
                                  "to L",
                                  "Langevin noise N(0, η_t/N): effective noise multiplier σ_t = τ/(L√(η_t N))",
                                  "schedule: constant η, or η_t = η·t^{−1/3} when the schedule is decreasing",
                                  "every sample (iterate) may be released; add/remove neighbours"},
                   .plainGradientSteps = true},
              .nativeKeys = {"sigma_eff"},
              .color = 0x17becf,
              // The Langevin noise N(0, η_t/N) is fixed by the step size: σ does not enter.
              .noiseSetBySigma = false,
          },
          {.totalRdp = &sgmcmcRdp, .native = &sgmcmcNative, .addViolations = &sgmcmcViolations}) {}

}  // namespace dpx::core::accounting
