// The frequency-domain half of the composition: the steps' spectra powered, the surviving band
// found without the long transform, and the sparse spectrum a run's PLD keeps. Apart from the loss
// window and its bounds (pld_composition.cpp), which never look at a frequency.
#include "accounting/pld_spectrum.h"

#include <algorithm>

#include "common/parallel.h"
#include "numerics/band_dft.h"
#include "numerics/real_fft.h"

namespace dpx::core::accounting::pld::detail {
namespace {

// z^k by squaring, with plain arithmetic (std::complex's operator* checks for NaN/∞ per C
// Annex G, which costs more than the multiplication).
inline void complexPower(double& re, double& im, std::int64_t k) {
  double rr = 1.0, ri = 0.0;
  double br = re, bi = im;
  while (k > 0) {
    if (k & 1) {
      const double t = rr * br - ri * bi;
      ri = rr * bi + ri * br;
      rr = t;
    }
    k >>= 1;
    if (k > 0) {
      const double t = br * br - bi * bi;
      bi = 2.0 * br * bi;
      br = t;
    }
  }
  re = rr;
  im = ri;
}

// Frequencies are powered in blocks of this many; a block's count of surviving ones lets a
// sparse spectrum be collected from the few live blocks.
constexpr std::size_t kPowerBlock = 8192;

// |z|^count below 1e−300 contributes nothing a double can hold: such a z (most high frequencies
// of a many-step composition) is dead, tested on |z|² against e^{−1380/count} without a logarithm.
double smallestLivingSquare(std::int64_t count) { return std::exp(-1380.0 / static_cast<double>(count)); }

}  // namespace

std::vector<std::size_t> multiplyByPower(std::complex<double>* product, const std::complex<double>* spectrum,
                                         std::size_t size, std::int64_t count, bool first) {
  const double smallest = smallestLivingSquare(count);
  std::vector<std::size_t> alive((size + kPowerBlock - 1) / kPowerBlock, 0);
  parallelFor(std::size_t{0}, alive.size(), [&](std::size_t block) {
    std::size_t live = 0;
    const std::size_t end = std::min(size, (block + 1) * kPowerBlock);
    for (std::size_t k = block * kPowerBlock; k != end; ++k) {
      double re = spectrum[k].real();
      double im = spectrum[k].imag();
      if (re * re + im * im < smallest || (!first && product[k] == 0.0)) {
        product[k] = 0.0;
        continue;
      }
      complexPower(re, im, count);
      if (first) {
        product[k] = std::complex<double>(re, im);
      } else {
        const double pr = product[k].real();
        const double pi = product[k].imag();
        product[k] = std::complex<double>(pr * re - pi * im, pr * im + pi * re);
      }
      live += product[k] != 0.0 ? 1 : 0;
    }
    alive[block] = live;
  });
  return alive;
}

// A run's PLD as the spectrum of its composition, when few enough frequencies survived the K-th
// power (null otherwise). δ from a spectrum costs ~25 ns a frequency, ε about forty δs; the
// inverse and tables it replaces ~10 ns a transform point. Beyond one frequency per 64 points
// the tables win.
constexpr std::size_t kTransformPointsPerSpectralFrequency = 64;

bool fewEnoughForSpectrum(std::size_t frequencies, std::size_t n) {
  return frequencies * kTransformPointsPerSpectralFrequency <= n;
}

std::shared_ptr<DiscretePld::Spectrum> sparseSpectrum(SparseHalfSpectrum z, std::size_t n, int threads,
                                                      std::size_t start, std::size_t points, double interval) {
  auto s = std::make_shared<DiscretePld::Spectrum>();
  s->n = n;
  s->threads = threads;
  s->start = start;
  s->points = points;
  s->interval = interval;
  const double scale = 1.0 / static_cast<double>(n);
  const std::size_t count = z.frequency.size();
  s->constant = z.value[0].real() * scale;
  const double negligible = 1e-17 * std::abs(z.value[0]) / static_cast<double>(std::max<std::size_t>(count, 1));
  s->frequency.reserve(count);
  s->sumWeight.reserve(count);
  s->tiltWeight.reserve(count);
  s->end.reserve(count);
  const double radiansPerStep = 2.0 * std::numbers::pi / static_cast<double>(n);
  auto root = [&](std::size_t k, std::size_t power) {  // ω^{k·power}
    const double angle = radiansPerStep * static_cast<double>((static_cast<std::uint64_t>(k) * power) % n);
    return std::complex<double>(std::cos(angle), std::sin(angle));
  };
  const double decay = std::exp(-interval);
  const double oneMinusDecay = -std::expm1(-interval);
  for (std::size_t f = 1; f < count; ++f) {
    const std::size_t k = z.frequency[f];
    const std::complex<double> zk = z.value[f];
    if (std::abs(zk) < negligible) continue;
    s->frequency.push_back(k);
    const bool nyquist = 2 * k == n;  // the real inverse reads its real part once
    const std::complex<double> value = nyquist ? std::complex<double>(zk.real(), 0.0) : 2.0 * zk;
    const std::complex<double> c = value * root(k, start) * scale;
    const double angle = radiansPerStep * static_cast<double>(k);
    const double halfSine = std::sin(0.5 * angle);
    const double versine = 2.0 * halfSine * halfSine;  // 1 − cos θ, without cancellation
    const double sine = std::sin(angle);
    s->sumWeight.push_back(c / std::complex<double>(versine, -sine));
    s->tiltWeight.push_back(c / std::complex<double>(oneMinusDecay + decay * versine, -decay * sine));
    s->end.push_back(root(k, points));
  }
  s->rawFrequency = std::move(z.frequency);
  s->raw = std::move(z.value);
  return s;
}

SparseHalfSpectrum liveFrequencies(const std::complex<double>* z, std::size_t n, std::span<const std::size_t> alive) {
  std::size_t count = 0;
  for (std::size_t live : alive) count += live;
  SparseHalfSpectrum out;
  out.frequency.reserve(count + 1);
  out.value.reserve(count + 1);
  out.frequency.push_back(0);
  out.value.push_back(z[0]);
  const std::size_t half = n / 2 + 1;
  for (std::size_t block = 0; block < alive.size(); ++block) {
    if (alive[block] == 0) continue;
    for (std::size_t k = std::max<std::size_t>(1, block * kPowerBlock); k < std::min(half, (block + 1) * kPowerBlock);
         ++k) {
      if (z[k] == 0.0) continue;
      out.frequency.push_back(k);
      out.value.push_back(z[k]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The surviving band of a long composition
//
// At K = 10⁶ (q = 0.004, σ = 1, Δ = 1e−3) a step has ~5 000 grid points, the composed window
// ~10⁵, and about 120 of the transform's 51 201 frequencies survive the K-th power: the spectrum
// of a long run is a narrow band around 0 (|z(θ)| ≈ 1 − Var·θ²/2). The survivors are found from
// a transform of the step's own length and computed by chirp-z (numerics/band_dft), with no
// transform of the window's length at all.
//
// Which frequencies can survive: with z(θ) = Σ_j ω_j e^{−ijθ} and any centre c,
// |d/dθ (e^{icθ} z(θ))| ≤ D = Σ_j ω_j |j − c|, so ||z(θ)| − |z(θ′)|| ≤ D|θ − θ′|. A transform of
// size N samples z at θ_r = 2πr/N; every fine frequency θ_k = 2πk/n lies within π/N of one of
// them, so |z(θ_k)| ≤ |z(θ_r)| + Dπ/N, and where that bound's count-th power is dead (the test of
// multiplyByPower) the frequency is dead too. The others are computed exactly and powered as
// the full transform's would be: the spectrum is the same up to round-off.

namespace {

// The band path is taken when the full transform is at least this many times the short one:
// it costs about four complex transforms of the short size, the full one a real transform of
// size n and its twiddles. At K = 10⁵, Δ = 1e−3 (n = 32 400, steps of 5 500 points, ratio 5.6)
// the band was as fast in a fresh process and slower in a warm one (1.8 against 0.7–1.2 ms); at
// K = 10⁶ (n = 102 400, ratio 18) 1.6–2.5 against 4.6 ms warm, 7–11 against 18–21 ms cold.
// FFTW's transforms (n ≥ 2¹⁷), planned once per process, are several times faster than
// kissfft's: at K = 10⁶, Δ = 1e−4 (n = 2²⁰, steps of 55 000 points, ratio 19) the band took
// 45 ms against FFTW's 27 ms in a process that had planned before (and 87 against 98 ms in one
// that had not: the path may not depend on what a process did before, or its digits would).
constexpr std::size_t kBandMinimumRatio = 8;
constexpr std::size_t kBandMinimumRatioAgainstFftw = 32;
std::size_t bandMinimumRatio(std::size_t n) {
  return numerics::usesFftw(n) ? kBandMinimumRatioAgainstFftw : kBandMinimumRatio;
}
// Candidate frequencies closer than this are computed in one band (a chirp-z costs three
// transforms: a few extra frequencies cost less).
constexpr std::size_t kBandMergeGap = 256;
// At most this many bands: more means a spectrum the full transform computes faster.
constexpr std::size_t kMaxBands = 4;

// Fine frequency ranges [first, last].
struct FrequencyRange {
  std::size_t first = 0;
  std::size_t last = 0;
};

// The fine frequencies 0 … n/2 whose bound on |z|^count is not dead, for one step's masses,
// from their magnitudes on a coarse grid of `size` points (its cells are what a chirp-z of that
// size then runs on; it also shares that transform's twiddles); nothing when the coarse
// transform would be longer than n/bandMinimumRatio(n).
//
// The bound admits frequencies the power kills: near θ = 0, |z|² ≈ 1 − Var·θ², the survivors
// reach |z|² = e^{−1380/K} and the candidates |z| + Dπ/N as far, about √(1 + DπK/(690N)) times
// wider. A coarse transform of at least DK/1757 points keeps that below 3 (and costs less than
// the band it saves); a step's long tails usually make its own length longer than that already
// (D ≈ 3 points against 5 754 at q = 0.004, σ = 1, Δ = 1e−3: 2.4 times the 116 survivors).
// The grid has room for a band of an eighth of the step (at least 512) beside it, so the
// chirp-z usually runs on the same size.
struct Candidates {
  std::size_t size = 0;  // of the coarse grid
  std::vector<FrequencyRange> ranges;
};

std::optional<Candidates> candidateFrequencies(const std::vector<double>& masses, std::int64_t count, std::size_t n) {
  double total = 0.0;
  double mean = 0.0;
  for (std::size_t j = 0; j < masses.size(); ++j) {
    total += masses[j];
    mean += static_cast<double>(j) * masses[j];
  }
  mean = total > 0.0 ? mean / total : 0.0;
  double spread = 0.0;  // D about the mean
  for (std::size_t j = 0; j < masses.size(); ++j) spread += std::fabs(static_cast<double>(j) - mean) * masses[j];
  const double wanted = std::ceil(spread * static_cast<double>(count) / 1757.0);
  const double withBand = static_cast<double>(masses.size() + std::max<std::size_t>(masses.size() / 8, 512));
  const double least = std::max(withBand, wanted);
  if (static_cast<double>(bandMinimumRatio(n)) * least > static_cast<double>(n)) return std::nullopt;
  Candidates out;
  out.size = numerics::kissFftSize(static_cast<std::size_t>(least));
  std::vector<double> magnitude(out.size / 2 + 1);
  numerics::dftMagnitudes(masses, out.size, magnitude);
  const double smallest = smallestLivingSquare(count);
  // The bound's own round-off: the transform's (~1e−16·log N·Σω) and D's, far below this.
  const double slack = spread * std::numbers::pi / static_cast<double>(out.size) + 1e-12 * std::max(1.0, total);
  const auto nn = static_cast<std::uint64_t>(n);
  const auto size2 = 2 * static_cast<std::uint64_t>(out.size);
  for (std::size_t r = 0; r < magnitude.size(); ++r) {
    const double bound = magnitude[r] + slack;
    if (bound * bound < smallest) continue;
    // k with |k/n − r/N| ≤ 1/(2N): (2r − 1)n/(2N) ≤ k ≤ (2r + 1)n/(2N).
    const std::uint64_t lo = r == 0 ? 0 : ((2 * r - 1) * nn + size2 - 1) / size2;
    const std::uint64_t hi = std::min<std::uint64_t>(nn / 2, (2 * r + 1) * nn / size2);
    if (lo > hi) continue;
    if (!out.ranges.empty() && lo <= out.ranges.back().last + 1) {
      out.ranges.back().last = std::max<std::size_t>(out.ranges.back().last, hi);
    } else {
      out.ranges.push_back({lo, hi});
    }
  }
  return out;
}

// The ranges in both a and b.
std::vector<FrequencyRange> intersect(const std::vector<FrequencyRange>& a, const std::vector<FrequencyRange>& b) {
  std::vector<FrequencyRange> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::size_t lo = std::max(a[i].first, b[j].first);
    const std::size_t hi = std::min(a[i].last, b[j].last);
    if (lo <= hi) out.push_back({lo, hi});
    (a[i].last < b[j].last ? i : j)++;
  }
  return out;
}

std::size_t longestStep(std::span<const Segment> segments) {
  std::size_t longest = 0;
  for (const Segment& s : segments) longest = std::max(longest, s.pld->masses().size());
  return longest;
}

}  // namespace

bool bandPathPossible(std::span<const Segment> segments, std::size_t n) {
  return n >= bandMinimumRatio(n) * numerics::kissFftSize(longestStep(segments));
}

std::optional<SparseHalfSpectrum> bandSpectrum(std::span<const Segment> segments, std::size_t n) {
  if (!bandPathPossible(segments, n)) return std::nullopt;
  const std::size_t longest = longestStep(segments);
  std::vector<FrequencyRange> candidates;
  std::vector<std::size_t> sizes;  // each segment's coarse grid
  for (std::size_t si = 0; si < segments.size(); ++si) {
    std::optional<Candidates> own = candidateFrequencies(segments[si].pld->masses(), segments[si].count, n);
    if (!own) return std::nullopt;
    sizes.push_back(own->size);
    candidates = si == 0 ? std::move(own->ranges) : intersect(candidates, own->ranges);
  }
  std::vector<FrequencyRange> bands{{0, 0}};  // Z_0 is always kept
  for (const FrequencyRange& c : candidates) {
    if (c.first <= bands.back().last + kBandMergeGap) {
      bands.back().last = std::max(bands.back().last, c.last);
    } else {
      bands.push_back(c);
    }
  }
  std::size_t total = 0;
  std::size_t widest = 0;
  for (const FrequencyRange& b : bands) {
    total += b.last - b.first + 1;
    widest = std::max(widest, b.last - b.first + 1);
  }
  if (bands.size() > kMaxBands || !fewEnoughForSpectrum(total, n) ||
      bandMinimumRatio(n) * numerics::bandDftSize(longest, widest) > n) {
    return std::nullopt;
  }
  SparseHalfSpectrum out;
  std::vector<std::complex<double>> product, z;
  for (const FrequencyRange& b : bands) {
    const std::size_t width = b.last - b.first + 1;
    product.assign(width, 0.0);
    z.resize(width);
    for (std::size_t si = 0; si < segments.size(); ++si) {
      const std::vector<double>& masses = segments[si].pld->masses();
      // On the coarse grid's size where the band fits beside the step (its twiddles are made).
      const std::size_t least = numerics::bandDftSize(masses.size(), width);
      numerics::bandDft(masses, n, b.first, z, sizes[si] >= least ? sizes[si] : least);
      multiplyByPower(product.data(), z.data(), width, segments[si].count, si == 0);
    }
    for (std::size_t t = 0; t < width; ++t) {
      if (product[t] == 0.0 && b.first + t != 0) continue;
      out.frequency.push_back(b.first + t);
      out.value.push_back(product[t]);
    }
  }
  return out;
}

}  // namespace dpx::core::accounting::pld::detail
