// The privacy loss distribution as a type: DiscretePld's δ(ε) and ε(δ) from its tables or its
// spectrum, and the trade-off curve of a pair. What builds one lives beside it, a concern a file:
// pld_discretisation (one step), pld_composition and pld_spectrum (K steps), pld_composed_run (a run).
#include "accounting/privacy_loss_distribution.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <mutex>
#include <string>

#include "accounting/pld_buffers.h"
#include "accounting/pld_internal.h"
#include "accounting/pld_spectrum.h"
#include "common/format.h"
#include "numerics/real_fft.h"

namespace dpx::core::accounting::pld {
namespace {

using detail::compactWindow;
using numerics::complexBuffer;
using numerics::ComplexBuffer;
using numerics::realBuffer;
using numerics::RealBuffer;
using numerics::RealTransform;

}  // namespace

Status detail::cancelledStatus() {
  return Status::cancelled("the privacy loss distribution computation was cancelled");
}

// ---------------------------------------------------------------------------------------------
// DiscretePld

struct DiscretePld::LazyTables {
  std::once_flag made;
  std::unique_ptr<double[]> storage;  // suffix[0 … n], then tilted[0 … n]
};

DiscretePld::DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
                         double deltaSlack)
    : m_interval(interval),
      m_firstIndex(firstIndex),
      m_points(masses.size()),
      m_masses(std::move(masses)),
      m_infinityMass(infinityMass),
      m_deltaSlack(deltaSlack),
      m_lazyTables(std::make_shared<LazyTables>()) {}

DiscretePld::DiscretePld(double interval, std::int64_t firstIndex, std::vector<double> masses, double infinityMass,
                         double deltaSlack, double lossOffset)
    : DiscretePld(interval, firstIndex, std::move(masses), infinityMass, deltaSlack) {
  m_lossOffset = lossOffset;
}

DiscretePld DiscretePld::profileOnly(double interval, std::int64_t firstIndex, std::shared_ptr<double[]> buffer,
                                     std::size_t points, double infinityMass, double deltaSlack) {
  DiscretePld pld;
  pld.m_interval = interval;
  pld.m_firstIndex = firstIndex;
  pld.m_points = points;
  pld.m_infinityMass = infinityMass;
  pld.m_deltaSlack = deltaSlack;
  std::shared_ptr<double[]> tilted(new double[points + 1]);
  fillTables(buffer.get(), points, interval, buffer.get(), tilted.get());
  pld.m_suffix = buffer.get();
  pld.m_tilted = tilted.get();
  pld.m_suffixStorage = std::move(buffer);
  pld.m_tiltedStorage = std::move(tilted);
  return pld;
}

DiscretePld DiscretePld::spectral(double interval, std::int64_t firstIndex, std::shared_ptr<Spectrum> spectrum,
                                  double infinityMass, double deltaSlack) {
  DiscretePld pld;
  pld.m_interval = interval;
  pld.m_firstIndex = firstIndex;
  pld.m_points = spectrum->points;
  pld.m_infinityMass = infinityMass;
  pld.m_deltaSlack = deltaSlack;
  pld.m_spectrum = std::move(spectrum);
  return pld;
}

const DiscretePld& DiscretePld::tables() const {
  if (!m_spectrum) return *this;
  Spectrum& s = *m_spectrum;
  std::call_once(s.tabulated, [this, &s] {
    const RealTransform transform(s.n, s.threads);
    const std::size_t half = s.n / 2 + 1;
    RealBuffer real = realBuffer(2 * half);
    ComplexBuffer ownSpectrum = transform.inPlace() ? nullptr : complexBuffer(half);
    std::complex<double>* z =
        transform.inPlace() ? reinterpret_cast<std::complex<double>*>(real.get()) : ownSpectrum.get();
    std::fill(z, z + half, std::complex<double>(0.0, 0.0));
    for (std::size_t f = 0; f < s.rawFrequency.size(); ++f) z[s.rawFrequency[f]] = s.raw[f];
    transform.inverse(z, real.get());
    compactWindow(real.get(), s.n, s.start, s.points);
    s.tables = profileOnly(m_interval, m_firstIndex, std::shared_ptr<double[]>(real.release(), numerics::FftwFree{}),
                           s.points, m_infinityMass, m_deltaSlack);
  });
  return s.tables;
}

DiscretePld::Tails DiscretePld::tailsAt(std::size_t j) const {
  if (m_spectrum) return m_spectrum->tails(j);
  if (m_suffix) return {m_suffix[j], m_tilted[j]};
  LazyTables& lazy = *m_lazyTables;
  const std::size_t n = m_points;
  std::call_once(lazy.made, [&] {
    lazy.storage = std::make_unique<double[]>(2 * (n + 1));
    fillTables(m_masses.data(), n, m_interval, lazy.storage.get(), lazy.storage.get() + n + 1);
  });
  return {lazy.storage[j], lazy.storage[n + 1 + j]};
}

void DiscretePld::fillTables(const double* masses, std::size_t n, double interval, double* suffix, double* tilted) {
  const double step = std::exp(-interval);
  double s = 0.0;
  double t = 0.0;
  suffix[n] = 0.0;
  tilted[n] = 0.0;
  for (std::size_t j = n; j-- > 0;) {
    const double w = masses[j];  // read before suffix[j] (which may be masses[j]) is written
    s += w;
    t = w + step * t;  // Σ_{i≥j} ω_i e^{ℓ_j − ℓ_i}
    suffix[j] = s;
    tilted[j] = t;
  }
}

double DiscretePld::delta(double epsilon) const {
  const std::size_t n = m_points;
  // First index j with ℓ_j > ε.
  const double position = (epsilon - m_lossOffset) / m_interval - static_cast<double>(m_firstIndex);
  std::size_t j;
  if (position < 0.0) {
    j = 0;
  } else if (position >= static_cast<double>(n)) {
    j = n;
  } else {
    j = static_cast<std::size_t>(std::floor(position)) + 1;
    if (j > 0 && loss(j - 1) > epsilon) --j;  // guard the rounding of ε/Δ
    if (j < n && !(loss(j) > epsilon)) ++j;
  }
  double value = m_infinityMass;
  if (j < n) {
    const Tails t = tailsAt(j);
    value += t.suffix - std::exp(epsilon - loss(j)) * t.tilted;
  }
  return std::clamp(value - m_deltaSlack, 0.0, 1.0);
}

Result<double> DiscretePld::epsilon(double delta) const {
  if (!(delta > 0.0 && delta < 1.0)) return Status::invalidArgument("δ must be in (0, 1)");
  if (this->delta(0.0) <= delta) return 0.0;
  const std::size_t n = m_points;
  if (m_infinityMass - m_deltaSlack >= delta || n == 0) {
    return Status::numericalIssue("δ = " + formatNumber(delta) + " is below the privacy loss mass at infinity (" +
                                  formatNumber(m_infinityMass) + "): no finite ε");
  }
  // δ at grid points decreases with the index; find the segment [ℓ_{j−1}, ℓ_j) holding the answer.
  std::size_t lo = 0;  // δ(ℓ_lo) > delta or below the positive losses
  std::size_t hi = n;  // δ(ℓ_{n−1}) = ω_∞ − slack ≤ delta
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (this->delta(loss(mid)) > delta) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  // On (ℓ_lo, ℓ_hi]: δ(ε) = ω_∞ − slack + S(hi) − e^{ε−ℓ_hi}·T(hi) for ε < ℓ_hi.
  double eps;
  const std::size_t j = std::min(hi, n - 1);
  const Tails t = tailsAt(j);
  const double numerator = m_infinityMass - m_deltaSlack + t.suffix - delta;
  if (t.tilted > 0.0 && numerator > 0.0) {
    eps = loss(j) + std::log(numerator / t.tilted);
  } else {
    eps = loss(j);
  }
  eps = std::clamp(eps, loss(lo), loss(j));
  return std::max(0.0, eps);
}

// ---------------------------------------------------------------------------------------------
// Trade-off of a discrete pair

namespace {

// The grid losses ε_j ≥ 0 of a PLD (ε = 0 first) with δ(ε_j): the lines of one family.
struct ProfileLines {
  std::vector<double> epsilon;
  std::vector<double> delta;
  double infinityMass = 0.0;  // δ(ε → ∞)
};

ProfileLines profileLines(const DiscretePld& pld) {
  ProfileLines lines;
  const auto n = static_cast<std::int64_t>(pld.size());
  const std::int64_t first = std::max<std::int64_t>(0, -pld.firstIndex());
  lines.epsilon.reserve(static_cast<std::size_t>(std::max<std::int64_t>(n - first, 0) + 1));
  lines.epsilon.push_back(0.0);
  for (std::int64_t i = first; i < n; ++i) {
    const double eps = pld.loss(static_cast<std::size_t>(i));
    if (eps > 0.0) lines.epsilon.push_back(eps);
  }
  lines.delta.resize(lines.epsilon.size());
  for (std::size_t j = 0; j < lines.epsilon.size(); ++j) lines.delta[j] = pld.delta(lines.epsilon[j]);
  lines.infinityMass = std::clamp(pld.infinityMass() - pld.deltaSlack(), 0.0, 1.0);
  return lines;
}

// A line y = a + b·x.
struct Line {
  double a;
  double b;
  double at(double x) const { return a + b * x; }
};

// Tests rejecting P below the loss ε ≥ 0: y ≥ e^{−ε}(1 − δ_{P‖Q}(ε) − x); slopes rise with ε.
std::vector<Line> flatLines(const ProfileLines& l) {
  std::vector<Line> lines;
  lines.reserve(l.epsilon.size());
  for (std::size_t j = 0; j < l.epsilon.size(); ++j) {
    const double w = std::exp(-l.epsilon[j]);
    lines.push_back({w * (1.0 - l.delta[j]), -w});
  }
  return lines;
}

// Tests rejecting P below the loss −ε ≤ 0: y ≥ 1 − δ_{Q‖P}(ε) − e^ε x; slopes rise as ε falls.
// Slopes beyond −1e300 only matter at x = 0, which the mass at +∞ answers.
std::vector<Line> steepLines(const ProfileLines& l) {
  std::vector<Line> lines;
  lines.reserve(l.epsilon.size());
  for (std::size_t j = l.epsilon.size(); j-- > 0;) {
    const double slope = -std::exp(l.epsilon[j]);
    if (slope >= -1e300) lines.push_back({1.0 - l.delta[j], slope});
  }
  return lines;
}

// The upper envelope of lines given by increasing slope (convex-hull trick). Exact whatever the
// noise in δ: a sweep that stops at the first local maximum is not (δ's round-off makes the line
// values along ε non-unimodal at K = 10⁶).
std::vector<Line> upperEnvelope(const std::vector<Line>& lines) {
  std::vector<Line> hull;
  for (const Line& l : lines) {
    if (!hull.empty() && l.b == hull.back().b) {
      if (l.a <= hull.back().a) continue;
      hull.pop_back();
    }
    while (hull.size() >= 2) {
      const Line& l1 = hull[hull.size() - 2];
      const Line& l2 = hull.back();
      // l2 is never above both: l1 and l meet at or left of where l1 and l2 meet.
      if ((l1.a - l.a) * (l2.b - l1.b) <= (l1.a - l2.a) * (l.b - l1.b)) {
        hull.pop_back();
      } else {
        break;
      }
    }
    hull.push_back(l);
  }
  return hull;
}

// max over the envelope at every x, visiting x in increasing order (the maximiser moves to
// larger slopes).
void maximiseOver(const std::vector<Line>& hull, std::span<const double> typeOne,
                  std::span<const std::size_t> ascending, std::vector<double>& best) {
  if (hull.empty()) return;
  std::size_t j = 0;
  for (std::size_t k : ascending) {
    const double x = typeOne[k];
    while (j + 1 < hull.size() && hull[j + 1].at(x) >= hull[j].at(x)) ++j;
    best[k] = std::max(best[k], hull[j].at(x));
  }
}

}  // namespace

Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, const DiscretePld& reverse,
                                       std::span<const double> typeOne) {
  for (double x : typeOne) {
    if (!(x >= 0.0 && x <= 1.0)) {
      return Status::invalidArgument("type I error " + formatNumber(x) + " is outside [0, 1]");
    }
  }
  if (pld.interval() != reverse.interval()) {
    return Status::invalidArgument("the two directions of a trade-off must share the loss grid");
  }
  std::vector<std::size_t> ascending(typeOne.size());
  for (std::size_t k = 0; k < ascending.size(); ++k) ascending[k] = k;
  std::stable_sort(ascending.begin(), ascending.end(),
                   [&](std::size_t a, std::size_t b) { return typeOne[a] < typeOne[b]; });
  std::vector<double> y(typeOne.size(), 0.0);
  const ProfileLines forward = profileLines(pld.tables());  // δ at every grid loss ≥ 0
  const ProfileLines backward = profileLines(reverse.tables());
  maximiseOver(upperEnvelope(flatLines(forward)), typeOne, ascending, y);
  maximiseOver(upperEnvelope(steepLines(backward)), typeOne, ascending, y);
  for (std::size_t k = 0; k < y.size(); ++k) {
    const double x = typeOne[k];
    // ε → ∞ of the steep family: the tests that reject only where P has no mass.
    if (x == 0.0) y[k] = std::max(y[k], 1.0 - backward.infinityMass);
    y[k] = std::clamp(y[k], 0.0, 1.0 - x);
  }
  return y;
}

Result<DiscretePld> reversed(const DiscretePld& pld) {
  if (!pld.hasMasses()) {
    return Status::invalidArgument("a composed run's PLD keeps only its profile, not the masses reversing it needs");
  }
  const std::vector<double>& w = pld.masses();
  const std::size_t n = w.size();
  std::vector<double> q(n, 0.0);
  double total = 0.0;
  for (std::size_t i = n; i-- > 0;) {
    if (w[i] > 0.0) q[n - 1 - i] = std::exp(std::log(w[i]) - pld.loss(i));
    total += q[n - 1 - i];
  }
  const std::int64_t first = -(pld.firstIndex() + static_cast<std::int64_t>(n) - 1);
  return DiscretePld(pld.interval(), first, std::move(q), std::clamp(1.0 - total, 0.0, 1.0), pld.deltaSlack(),
                     -pld.lossOffset());
}

Result<std::vector<double>> tradeoffOf(const DiscretePld& pld, std::span<const double> typeOne) {
  DPX_ASSIGN_OR_RETURN(const DiscretePld reverse, reversed(pld));
  return tradeoffOf(pld, reverse, typeOne);
}

}  // namespace dpx::core::accounting::pld
