#include "numerics/scattering_transform.h"

#include <fftw3.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>
#include <string>
#include <vector>

#include "numerics/real_fft.h"

namespace dpx::core::numerics {
namespace {

using Complex = std::complex<double>;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ComplexRowMatrix = Eigen::Matrix<Complex, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double kPi = 3.14159265358979323846;
// kymatio normalises its Gabor filters by 2·3.1415·σ²/slant: its coefficients' exact scale.
constexpr double kGaborPi = 3.1415;
constexpr int kPeriodicCopies = 2;  // kymatio sums the Gabor over the grid and 2 copies each way

int paddedSize(int size, int scales) { return ((size + (1 << scales)) / (1 << scales) + 1) * (1 << scales); }

// e^{−2πi·jk/n} with the exponent reduced mod n first, so large products stay exact.
Complex twiddle(long long j, long long k, int n, double sign) {
  const long long r = (j * k) % n;
  const double angle = sign * 2.0 * kPi * static_cast<double>(r) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// The forward DFT matrix of size n (symmetric).
ComplexRowMatrix dftMatrix(int n) {
  ComplexRowMatrix f(n, n);
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < n; ++k) f(j, k) = twiddle(j, k, n, -1.0);
  }
  return f;
}

// kymatio's gabor_2d on an m × n grid: Σ over 5 × 5 copies of the grid of
// exp(−xᵀCx + iξ(x cos θ + y sin θ)), C = R·diag(1, slant²)·R⁻¹/(2σ²), x along rows.
ComplexRowMatrix gabor2d(int m, int n, double sigma, double theta, double xi, double slant) {
  const double c = std::cos(theta);
  const double s = std::sin(theta);
  const double s2 = slant * slant;
  const double scale = 1.0 / (2.0 * sigma * sigma);
  const double c00 = (c * c + s * s * s2) * scale;
  const double c01 = (c * s - c * s * s2) * scale;
  const double c10 = (s * c - s * c * s2) * scale;
  const double c11 = (s * s + c * c * s2) * scale;
  ComplexRowMatrix g = ComplexRowMatrix::Zero(m, n);
  for (int ex = -kPeriodicCopies; ex <= kPeriodicCopies; ++ex) {
    for (int ey = -kPeriodicCopies; ey <= kPeriodicCopies; ++ey) {
      for (int r = 0; r < m; ++r) {
        const double x = r + ex * m;
        for (int col = 0; col < n; ++col) {
          const double y = col + ey * n;
          const double real = -(c00 * x * x + (c01 + c10) * x * y + c11 * y * y);
          const double imag = x * xi * c + y * xi * s;
          g(r, col) += std::exp(Complex(real, imag));
        }
      }
    }
  }
  return g / (2.0 * kGaborPi * sigma * sigma / slant);
}

ComplexRowMatrix morlet2d(int m, int n, double sigma, double theta, double xi, double slant) {
  const ComplexRowMatrix wave = gabor2d(m, n, sigma, theta, xi, slant);
  const ComplexRowMatrix envelope = gabor2d(m, n, sigma, theta, 0.0, slant);
  return wave - (wave.sum() / envelope.sum()) * envelope;
}

// kymatio's periodize_filter_fft on one axis: zero the frequencies a grid 2^res times coarser
// cannot hold (the band [P·2^{−res−1}, P·2^{−res−1} + P(1 − 2^{−res})) ), then sum the aliases.
std::vector<double> periodizeAxis(const std::vector<double>& spectrum, int res) {
  const int p = static_cast<int>(spectrum.size());
  const int n = p >> res;
  const int length = static_cast<int>(p * (1.0 - std::ldexp(1.0, -res)));
  const int start = static_cast<int>(p * std::ldexp(1.0, -res - 1));
  std::vector<double> out(static_cast<std::size_t>(n), 0.0);
  for (int k = 0; k < p; ++k) {
    if (k >= start && k < start + length) continue;
    out[static_cast<std::size_t>(k % n)] += spectrum[static_cast<std::size_t>(k)];
  }
  return out;
}

// periodize_filter_fft in 2-D: the band mask is a product of the axes' masks, then the aliases
// are summed.
RowMatrix periodize2d(const RowMatrix& spectrum, int res) {
  const int pm = static_cast<int>(spectrum.rows());
  const int pn = static_cast<int>(spectrum.cols());
  const auto kept = [res](int k, int p) {
    const int length = static_cast<int>(p * (1.0 - std::ldexp(1.0, -res)));
    const int start = static_cast<int>(p * std::ldexp(1.0, -res - 1));
    return !(k >= start && k < start + length);
  };
  const int m = pm >> res;
  const int n = pn >> res;
  RowMatrix out = RowMatrix::Zero(m, n);
  for (int r = 0; r < pm; ++r) {
    if (!kept(r, pm)) continue;
    for (int c = 0; c < pn; ++c) {
      if (kept(c, pn)) out(r % m, c % n) += spectrum(r, c);
    }
  }
  return out;
}

// The low-pass's factor on one axis of P points: the real part of the DFT of the periodised 1-D
// Gaussian (φ's Gabor is the product of two, and its DFT's imaginary part is round-off).
std::vector<double> lowPassAxis(int p, double sigma) {
  std::vector<double> g(static_cast<std::size_t>(p), 0.0);
  for (int x = 0; x < p; ++x) {
    for (int e = -kPeriodicCopies; e <= kPeriodicCopies; ++e) {
      const double t = x + e * p;
      g[static_cast<std::size_t>(x)] += std::exp(-t * t / (2.0 * sigma * sigma));
    }
  }
  std::vector<double> spectrum(static_cast<std::size_t>(p), 0.0);
  for (int k = 0; k < p; ++k) {
    double sum = 0.0;
    for (int x = 0; x < p; ++x) sum += g[static_cast<std::size_t>(x)] * twiddle(x, k, p, -1.0).real();
    spectrum[static_cast<std::size_t>(k)] = sum;
  }
  return spectrum;
}

// The 1-D map of the low-pass at resolution level r: an axis of n = P/2^r samples → multiply its
// spectrum by the filter a_r, average the aliases down to P/2^J frequencies, inverse DFT, drop
// the first and last samples (kymatio's unpad). Complex: the real and imaginary parts.
std::pair<RowMatrix, RowMatrix> lowPassMap(const std::vector<double>& filter, int outputPoints) {
  const int n = static_cast<int>(filter.size());
  const int k = n / outputPoints;
  ComplexRowMatrix map(outputPoints - 2, n);
  for (int i = 0; i < n; ++i) {
    // The subsampled, filtered spectrum of the unit vector e_i.
    std::vector<Complex> sub(static_cast<std::size_t>(outputPoints), Complex(0.0, 0.0));
    for (int kappa = 0; kappa < n; ++kappa) {
      sub[static_cast<std::size_t>(kappa % outputPoints)] +=
          filter[static_cast<std::size_t>(kappa)] * twiddle(kappa, i, n, -1.0) / static_cast<double>(k);
    }
    for (int o = 0; o < outputPoints - 2; ++o) {
      Complex value(0.0, 0.0);
      for (int kappa = 0; kappa < outputPoints; ++kappa) {
        value += sub[static_cast<std::size_t>(kappa)] * twiddle(kappa, o + 1, outputPoints, 1.0);
      }
      map(o, i) = value / static_cast<double>(outputPoints);
    }
  }
  return {map.real(), map.imag()};
}

// np.pad's "reflect" (the edge sample is not repeated): the source index of padded index i.
int reflectIndex(int i, int size) {
  while (i < 0 || i >= size) {
    if (i < 0) i = -i;
    if (i >= size) i = 2 * (size - 1) - i;
  }
  return i;
}

struct Level {
  int rows = 0;
  int cols = 0;
};

// Output columns computed together by lowPassMap: one AVX-512 register of doubles.
constexpr int kLanes = 8;

// A (inputs × outputs) matrix as blocks of kLanes outputs: [block][input][lane], zero-padded.
std::vector<double> laneBlocks(const RowMatrix& m) {
  const auto blocks = static_cast<int>((m.cols() + kLanes - 1) / kLanes);
  std::vector<double> out(static_cast<std::size_t>(blocks) * m.rows() * kLanes, 0.0);
  for (int b = 0; b < blocks; ++b) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (int l = 0; l < kLanes && b * kLanes + l < m.cols(); ++l) {
        out[(static_cast<std::size_t>(b) * m.rows() + i) * kLanes + l] = m(i, b * kLanes + l);
      }
    }
  }
  return out;
}

// s (±)= rowMap · u · colMapᵀ for one rows × cols map u, colMapᵀ given as laneBlocks. A dozen
// small products per image: hand-blocked loops of kLanes, which the compiler vectorises, cost a
// fraction of a general matrix product's packing.
void lowPassMap(const double* u, int rows, int cols, const RowMatrix& rowMap, const std::vector<double>& colLanes,
                int outRows, int outCols, bool subtract, double* s, double* scratch) {
  using Lanes = Eigen::Array<double, kLanes, 1>;
  const int blocks = (outCols + kLanes - 1) / kLanes;
  for (int b = 0; b < blocks; ++b) {
    const double* lanes = colLanes.data() + static_cast<std::ptrdiff_t>(b) * cols * kLanes;
    for (int r = 0; r < rows; ++r) {  // scratch[r] = u[r] · colMapᵀ (this block's lanes)
      Lanes acc = Lanes::Zero();
      const double* row = u + static_cast<std::ptrdiff_t>(r) * cols;
      for (int c = 0; c < cols; ++c) acc += row[c] * Eigen::Map<const Lanes>(lanes + c * kLanes);
      Eigen::Map<Lanes>(scratch + r * kLanes) = acc;
    }
    const int width = std::min(kLanes, outCols - b * kLanes);
    for (int o = 0; o < outRows; ++o) {
      Lanes acc = Lanes::Zero();
      for (int r = 0; r < rows; ++r) acc += rowMap(o, r) * Eigen::Map<const Lanes>(scratch + r * kLanes);
      double* target = s + static_cast<std::ptrdiff_t>(o) * outCols + b * kLanes;
      for (int l = 0; l < width; ++l) target[l] = subtract ? target[l] - acc[l] : acc[l];
    }
  }
}

}  // namespace

struct ScatteringTransform::Filters {
  int scales = 0;
  int angles = 0;
  int paddedRows = 0;
  int paddedCols = 0;
  int outRows = 0;  // after the crop
  int outCols = 0;
  std::vector<int> rowSource;  // padded row → image row
  std::vector<int> colSource;
  std::vector<Level> levels;  // resolution 2^r: (P_H >> r) × (P_W >> r)

  struct Wavelet {
    int scale = 0;
    int angle = 0;
    // Real spectra at each stored resolution level, scaled by 1/(rows·cols) of their level (the
    // inverse DFT's normalisation and the alias average folded in once), each value twice: the
    // multipliers of a complex spectrum's real and imaginary parts.
    std::vector<std::vector<double>> spectra;
  };
  std::vector<Wavelet> wavelets;

  // Per level r: S = rowMap·U·colMapᵀ − rowMapImag·U·colMapImagᵀ (the second term only where
  // the map's imaginary part is more than round-off).
  std::vector<RowMatrix> rowMap, colMapT, rowMapImag, colMapImagT;
  std::vector<bool> complexMap;
  // colMapᵀ (and its imaginary part) cut into blocks of kLanes output columns, zero-padded:
  // [block][input column][lane], the layout of lowPassMap's vectorised inner loop.
  std::vector<std::vector<double>> colLanes, colLanesImag;

  fftw_plan imageForward = nullptr;  // the padded image → its half spectrum
  // Per level, over the L maps of a scale at once: inverse complex DFTs, and real → half
  // spectrum (null where no second order follows).
  std::vector<fftw_plan> inverse;
  std::vector<fftw_plan> forward;

  double littlewoodPaleyMin = 0.0;
  double littlewoodPaleyMax = 0.0;

  ~Filters() {
    const auto lock = lockFftwPlanner();
    if (imageForward) fftw_destroy_plan(imageForward);
    for (fftw_plan p : forward) {
      if (p) fftw_destroy_plan(p);
    }
    for (fftw_plan p : inverse) {
      if (p) fftw_destroy_plan(p);
    }
  }
};

struct ScatteringWorkspace::Buffers {
  struct FftwFreeDeleter {
    void operator()(void* p) const { fftw_free(p); }
  };
  template <typename T>
  using Aligned = std::unique_ptr<T[], FftwFreeDeleter>;
  // The L maps of one scale at one level, side by side (the batched transforms' layout).
  struct Stage {
    Aligned<fftw_complex> filtered;   // products of spectrum and filter, aliases averaged
    Aligned<fftw_complex> convolved;  // their inverse DFTs
    Aligned<double> moduli;           // |·| of those
    Aligned<fftw_complex> halves;     // half spectra of the moduli (first order, where a second follows)
  };
  Aligned<double> padded;                 // the padded image
  Aligned<fftw_complex> imageHalf;        // its half spectrum
  Aligned<fftw_complex> imageSpectrum;    // and its full spectrum
  Aligned<fftw_complex> modulusSpectrum;  // full spectrum of one first-order modulus
  std::vector<Stage> first;               // per level: the first order's maps
  std::vector<Stage> second;              // per level: one first-order map's second-order maps
  std::vector<double> scratch;            // lowPassMap's rows × kLanes products
};

ScatteringWorkspace::ScatteringWorkspace(std::unique_ptr<Buffers> buffers) : m_buffers(std::move(buffers)) {}
ScatteringWorkspace::ScatteringWorkspace(ScatteringWorkspace&&) noexcept = default;
ScatteringWorkspace& ScatteringWorkspace::operator=(ScatteringWorkspace&&) noexcept = default;
ScatteringWorkspace::~ScatteringWorkspace() = default;

ScatteringTransform::~ScatteringTransform() = default;

int ScatteringTransform::channels() const {
  const int j = m_geometry.scales;
  const int l = m_geometry.angles;
  return 1 + j * l + l * l * j * (j - 1) / 2;
}
int ScatteringTransform::outputHeight() const { return m_filters->outRows; }
int ScatteringTransform::outputWidth() const { return m_filters->outCols; }
int ScatteringTransform::outputSize() const { return channels() * outputHeight() * outputWidth(); }
std::pair<double, double> ScatteringTransform::littlewoodPaleyRange() const {
  return {m_filters->littlewoodPaleyMin, m_filters->littlewoodPaleyMax};
}

Result<std::shared_ptr<const ScatteringTransform>> ScatteringTransform::create(const ScatteringGeometry& g) {
  // One transform per geometry for the process: its filters take milliseconds to build and its
  // measured FFTW plans tenths of a second, and any number of threads can share it.
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const ScatteringTransform>> made;
  const std::lock_guard lock(mutex);
  for (const auto& t : made) {
    const ScatteringGeometry& h = t->geometry();
    if (h.height == g.height && h.width == g.width && h.scales == g.scales && h.angles == g.angles) return t;
  }
  DPX_ASSIGN_OR_RETURN(std::shared_ptr<const ScatteringTransform> fresh, build(g));
  made.push_back(fresh);
  return fresh;
}

Result<std::shared_ptr<const ScatteringTransform>> ScatteringTransform::build(const ScatteringGeometry& g) {
  if (g.scales < 1 || g.scales > 4) {
    return Status::invalidArgument("scattering scales J = " + std::to_string(g.scales) +
                                   " is out of range: must be in [1, 4]");
  }
  if (g.angles < 1 || g.angles > 16) {
    return Status::invalidArgument("scattering angles L = " + std::to_string(g.angles) +
                                   " is out of range: must be in [1, 16]");
  }
  const int step = 1 << g.scales;
  if (g.height < step || g.width < step || g.height > 4096 || g.width > 4096) {
    return Status::invalidArgument("a " + std::to_string(g.height) + " × " + std::to_string(g.width) +
                                   " image is out of range for scattering at J = " + std::to_string(g.scales) +
                                   ": each side must be in [2^J, 4096]");
  }
  auto filters = std::make_unique<Filters>();
  Filters& f = *filters;
  f.scales = g.scales;
  f.angles = g.angles;
  f.paddedRows = paddedSize(g.height, g.scales);
  f.paddedCols = paddedSize(g.width, g.scales);
  const int padTop = (f.paddedRows - g.height) / 2;
  const int padLeft = (f.paddedCols - g.width) / 2;
  if (padTop >= g.height || padLeft >= g.width) {
    return Status::invalidArgument("a " + std::to_string(g.height) + " × " + std::to_string(g.width) +
                                   " image is smaller than its reflect padding at J = " + std::to_string(g.scales));
  }
  f.outRows = (f.paddedRows >> g.scales) - 2;
  f.outCols = (f.paddedCols >> g.scales) - 2;
  for (int r = 0; r < f.paddedRows; ++r) f.rowSource.push_back(reflectIndex(r - padTop, g.height));
  for (int c = 0; c < f.paddedCols; ++c) f.colSource.push_back(reflectIndex(c - padLeft, g.width));
  for (int r = 0; r < g.scales; ++r) f.levels.push_back({f.paddedRows >> r, f.paddedCols >> r});

  // The wavelets, on the padded grid, then periodised to the levels kymatio keeps for them.
  const ComplexRowMatrix dftRows = dftMatrix(f.paddedRows);
  const ComplexRowMatrix dftCols = dftMatrix(f.paddedCols);
  RowMatrix littlewoodPaley = RowMatrix::Zero(f.paddedRows, f.paddedCols);
  for (int j = 0; j < g.scales; ++j) {
    for (int t = 0; t < g.angles; ++t) {
      const double theta = (static_cast<int>(g.angles - g.angles / 2.0 - 1) - t) * kPi / g.angles;
      const ComplexRowMatrix wavelet = morlet2d(f.paddedRows, f.paddedCols, 0.8 * std::ldexp(1.0, j), theta,
                                                3.0 / 4.0 * kPi / std::ldexp(1.0, j), 4.0 / g.angles);
      const RowMatrix spectrum = (dftRows * wavelet * dftCols).real();
      littlewoodPaley += spectrum.cwiseAbs2();
      Filters::Wavelet w;
      w.scale = j;
      w.angle = t;
      for (int res = 0; res < std::min(j + 1, std::max(g.scales - 1, 1)); ++res) {
        const RowMatrix level = periodize2d(spectrum, res);
        const double scale = 1.0 / static_cast<double>(level.rows() * level.cols());
        std::vector<double> twice(2 * static_cast<std::size_t>(level.size()));
        for (Eigen::Index i = 0; i < level.size(); ++i) twice[2 * i] = twice[2 * i + 1] = level.data()[i] * scale;
        w.spectra.push_back(std::move(twice));
      }
      f.wavelets.push_back(std::move(w));
    }
  }

  // The low-pass φ (σ = 0.8·2^{J−1}): separable, so each level's low-pass-subsample-crop is a
  // pair of 1-D maps; its 2-D normalisation goes into the row map.
  const double phiSigma = 0.8 * std::ldexp(1.0, g.scales - 1);
  const std::vector<double> phiRows = lowPassAxis(f.paddedRows, phiSigma);
  const std::vector<double> phiCols = lowPassAxis(f.paddedCols, phiSigma);
  const double phiNorm = 1.0 / (2.0 * kGaborPi * phiSigma * phiSigma);
  for (int r = 0; r < f.paddedRows; ++r) {
    for (int c = 0; c < f.paddedCols; ++c) {
      const double phi = phiNorm * phiRows[static_cast<std::size_t>(r)] * phiCols[static_cast<std::size_t>(c)];
      littlewoodPaley(r, c) += phi * phi;
    }
  }
  f.littlewoodPaleyMin = littlewoodPaley.minCoeff();
  f.littlewoodPaleyMax = littlewoodPaley.maxCoeff();
  for (int res = 0; res < g.scales; ++res) {
    auto [rowReal, rowImag] = lowPassMap(periodizeAxis(phiRows, res), f.paddedRows >> g.scales);
    auto [colReal, colImag] = lowPassMap(periodizeAxis(phiCols, res), f.paddedCols >> g.scales);
    rowReal *= phiNorm;
    rowImag *= phiNorm;
    const bool complexMap = rowImag.cwiseAbs().maxCoeff() > 1e-14 * rowReal.cwiseAbs().maxCoeff() ||
                            colImag.cwiseAbs().maxCoeff() > 1e-14 * colReal.cwiseAbs().maxCoeff();
    f.rowMap.push_back(std::move(rowReal));
    f.colMapT.push_back(colReal.transpose());
    f.rowMapImag.push_back(std::move(rowImag));
    f.colMapImagT.push_back(colImag.transpose());
    f.complexMap.push_back(complexMap);
    f.colLanes.push_back(laneBlocks(f.colMapT.back()));
    f.colLanesImag.push_back(laneBlocks(f.colMapImagT.back()));
  }

  // FFTW plans, made once per process and run on every thread's own (equally aligned) buffers.
  // FFTW_PATIENT: about 0.8 s of planning, and transforms twice as fast as FFTW_ESTIMATE's and
  // 20 % faster than FFTW_MEASURE's on the reference VM (bench/bench_features). Which algorithm
  // the timing picks can move a coefficient's last bits, far below the float32 the features are
  // stored in.
  {
    const auto lock = lockFftwPlanner();
    fftw_plan_with_nthreads(1);
    const int angles = g.angles;
    for (int res = 0; res < g.scales; ++res) {
      const Level level = f.levels[static_cast<std::size_t>(res)];
      const int points = level.rows * level.cols;
      const int halfPoints = level.rows * (level.cols / 2 + 1);
      const int dims[2] = {level.rows, level.cols};
      double* real = fftw_alloc_real(static_cast<std::size_t>(points) * angles);
      fftw_complex* a = fftw_alloc_complex(static_cast<std::size_t>(points) * angles);
      fftw_complex* b = fftw_alloc_complex(static_cast<std::size_t>(points) * angles);
      if (res == 0) f.imageForward = fftw_plan_dft_r2c_2d(level.rows, level.cols, real, a, FFTW_PATIENT);
      f.inverse.push_back(fftw_plan_many_dft(2, dims, angles, a, nullptr, 1, points, b, nullptr, 1, points,
                                             FFTW_BACKWARD, FFTW_PATIENT));
      const bool needsForward = res + 1 < g.scales;  // a second order follows this level's moduli
      f.forward.push_back(needsForward ? fftw_plan_many_dft_r2c(2, dims, angles, real, nullptr, 1, points, a, nullptr,
                                                                1, halfPoints, FFTW_PATIENT)
                                       : nullptr);
      fftw_free(real);
      fftw_free(a);
      fftw_free(b);
      if ((needsForward && !f.forward.back()) || !f.inverse.back() || !f.imageForward) {
        return Status::numericalIssue("FFTW could not plan the scattering transform's " + std::to_string(level.rows) +
                                      " × " + std::to_string(level.cols) + " transforms");
      }
    }
  }
  std::shared_ptr<ScatteringTransform> transform(new ScatteringTransform());
  transform->m_geometry = g;
  transform->m_filters = std::move(filters);
  return std::shared_ptr<const ScatteringTransform>(std::move(transform));
}

ScatteringWorkspace ScatteringTransform::makeWorkspace() const {
  const Filters& f = *m_filters;
  const auto points = static_cast<std::size_t>(f.paddedRows) * static_cast<std::size_t>(f.paddedCols);
  const auto angles = static_cast<std::size_t>(f.angles);
  auto b = std::make_unique<ScatteringWorkspace::Buffers>();
  b->padded.reset(fftw_alloc_real(points));
  b->imageHalf.reset(fftw_alloc_complex(points));
  b->imageSpectrum.reset(fftw_alloc_complex(points));
  b->modulusSpectrum.reset(fftw_alloc_complex(points));
  for (std::vector<ScatteringWorkspace::Buffers::Stage>* stages : {&b->first, &b->second}) {
    for (const Level& level : f.levels) {
      const auto n = static_cast<std::size_t>(level.rows) * static_cast<std::size_t>(level.cols) * angles;
      ScatteringWorkspace::Buffers::Stage stage;
      stage.filtered.reset(fftw_alloc_complex(n));
      stage.convolved.reset(fftw_alloc_complex(n));
      stage.moduli.reset(fftw_alloc_real(n));
      stage.halves.reset(fftw_alloc_complex(n));
      stages->push_back(std::move(stage));
    }
  }
  b->scratch.resize(static_cast<std::size_t>(f.paddedRows) * kLanes);
  return ScatteringWorkspace(std::move(b));
}

namespace {

// The full spectrum of a real rows × cols image from its half spectrum (rows × (cols/2 + 1)):
// X(k1, k2) = conj X(−k1, −k2).
void fillHermitian(const fftw_complex* half, int rows, int cols, Complex* full) {
  const int halfCols = cols / 2 + 1;
  const auto* h = reinterpret_cast<const Complex*>(half);
  for (int r = 0; r < rows; ++r) {
    const Complex* row = h + static_cast<std::ptrdiff_t>(r) * halfCols;
    Complex* out = full + static_cast<std::ptrdiff_t>(r) * cols;
    std::copy(row, row + halfCols, out);
    const Complex* mirror = h + static_cast<std::ptrdiff_t>((rows - r) % rows) * halfCols;
    for (int c = halfCols; c < cols; ++c) out[c] = std::conj(mirror[cols - c]);
  }
}

// out = the product of a rows × cols spectrum and a real filter, its aliases averaged down by
// `factor` on each axis. The filter comes with each value twice (f₀, f₀, f₁, f₁, …), so the
// product is one of doubles, which the compiler vectorises; it carries the 1/(rows·cols) of the
// average and of the inverse DFT that follows.
void filterAndSubsample(const double* spectrum, const double* filter, int rows, int cols, int factor, double* out) {
  const int outRows = rows / factor;
  const int width = 2 * cols / factor;  // doubles in a row of the output
  if (factor == 1) {
    const std::ptrdiff_t n = 2 * static_cast<std::ptrdiff_t>(rows) * cols;
    for (std::ptrdiff_t i = 0; i < n; ++i) out[i] = spectrum[i] * filter[i];
    return;
  }
  std::fill(out, out + static_cast<std::ptrdiff_t>(outRows) * width, 0.0);
  for (int r = 0; r < rows; ++r) {
    double* target = out + static_cast<std::ptrdiff_t>(r % outRows) * width;
    const std::ptrdiff_t row = 2 * static_cast<std::ptrdiff_t>(r) * cols;
    for (int block = 0; block < factor; ++block) {
      const double* s = spectrum + row + static_cast<std::ptrdiff_t>(block) * width;
      const double* w = filter + row + static_cast<std::ptrdiff_t>(block) * width;
      for (int i = 0; i < width; ++i) target[i] += s[i] * w[i];
    }
  }
}

// A plain loop the compiler vectorises (this file is built without errno for sqrt, whose
// argument here is never negative).
void modulusOf(const fftw_complex* values, std::ptrdiff_t count, double* out) {
  const double* v = values[0];
  for (std::ptrdiff_t i = 0; i < count; ++i) out[i] = std::sqrt(v[2 * i] * v[2 * i] + v[2 * i + 1] * v[2 * i + 1]);
}

}  // namespace

template <typename Pixel>
void ScatteringTransform::pad(std::span<const Pixel> image, ScatteringWorkspace& workspace) const {
  const Filters& f = *m_filters;
  const int width = m_geometry.width;
  double* padded = workspace.m_buffers->padded.get();
  for (int r = 0; r < f.paddedRows; ++r) {
    const Pixel* source = image.data() + static_cast<std::ptrdiff_t>(f.rowSource[static_cast<std::size_t>(r)]) * width;
    double* row = padded + static_cast<std::ptrdiff_t>(r) * f.paddedCols;
    for (int c = 0; c < f.paddedCols; ++c) row[c] = source[f.colSource[static_cast<std::size_t>(c)]];
  }
}

void ScatteringTransform::apply(std::span<const float> image, std::span<double> out,
                                ScatteringWorkspace& workspace) const {
  pad(image, workspace);
  transformPadded(out, workspace);
}

void ScatteringTransform::apply(std::span<const double> image, std::span<double> out,
                                ScatteringWorkspace& workspace) const {
  pad(image, workspace);
  transformPadded(out, workspace);
}

void ScatteringTransform::transformPadded(std::span<double> out, ScatteringWorkspace& workspace) const {
  using Stage = ScatteringWorkspace::Buffers::Stage;
  const Filters& f = *m_filters;
  ScatteringWorkspace::Buffers& b = *workspace.m_buffers;
  const int angles = f.angles;
  const int outPoints = f.outRows * f.outCols;
  // S = A_r·U·A_rᵀ for `count` real maps U at level r (stacked), into channels first, first + 1, ….
  const auto lowPass = [&](const double* maps, int count, int res, int firstChannel) {
    const auto r = static_cast<std::size_t>(res);
    const Level level = f.levels[r];
    const std::ptrdiff_t points = static_cast<std::ptrdiff_t>(level.rows) * level.cols;
    for (int k = 0; k < count; ++k) {
      double* s = out.data() + static_cast<std::ptrdiff_t>(firstChannel + k) * outPoints;
      lowPassMap(maps + k * points, level.rows, level.cols, f.rowMap[r], f.colLanes[r], f.outRows, f.outCols, false, s,
                 b.scratch.data());
      if (f.complexMap[r]) {
        lowPassMap(maps + k * points, level.rows, level.cols, f.rowMapImag[r], f.colLanesImag[r], f.outRows, f.outCols,
                   true, s, b.scratch.data());
      }
    }
  };
  // |x ⋆ ψ| for the L wavelets of scale `to` at level `to`, from a full spectrum at level `from`.
  const auto waveletModuli = [&](const Complex* spectrum, int scale, int from, Stage& stage) {
    const Level in = f.levels[static_cast<std::size_t>(from)];
    const Level level = f.levels[static_cast<std::size_t>(scale)];
    const std::ptrdiff_t points = static_cast<std::ptrdiff_t>(level.rows) * level.cols;
    auto* filtered = reinterpret_cast<Complex*>(stage.filtered.get());
    for (int t = 0; t < angles; ++t) {
      const Filters::Wavelet& w = f.wavelets[static_cast<std::size_t>(scale * angles + t)];
      filterAndSubsample(reinterpret_cast<const double*>(spectrum), w.spectra[static_cast<std::size_t>(from)].data(),
                         in.rows, in.cols, 1 << (scale - from), reinterpret_cast<double*>(filtered + t * points));
    }
    fftw_execute_dft(f.inverse[static_cast<std::size_t>(scale)], stage.filtered.get(), stage.convolved.get());
    modulusOf(stage.convolved.get(), points * angles, stage.moduli.get());
  };

  lowPass(b.padded.get(), 1, 0, 0);  // order 0
  fftw_execute_dft_r2c(f.imageForward, b.padded.get(), b.imageHalf.get());
  auto* imageSpectrum = reinterpret_cast<Complex*>(b.imageSpectrum.get());
  fillHermitian(b.imageHalf.get(), f.paddedRows, f.paddedCols, imageSpectrum);

  // Channels: order 0, then order 1 scale by scale, then order 2 in kymatio's loop order
  // (j1, θ1, j2 > j1, θ2).
  int secondOrderChannel = 1 + f.scales * angles;
  for (int j1 = 0; j1 < f.scales; ++j1) {
    Stage& firstStage = b.first[static_cast<std::size_t>(j1)];
    waveletModuli(imageSpectrum, j1, 0, firstStage);
    lowPass(firstStage.moduli.get(), angles, j1, 1 + j1 * angles);
    if (j1 + 1 >= f.scales) continue;
    const Level level = f.levels[static_cast<std::size_t>(j1)];
    const std::ptrdiff_t halfPoints = static_cast<std::ptrdiff_t>(level.rows) * (level.cols / 2 + 1);
    fftw_execute_dft_r2c(f.forward[static_cast<std::size_t>(j1)], firstStage.moduli.get(), firstStage.halves.get());
    auto* modulusSpectrum = reinterpret_cast<Complex*>(b.modulusSpectrum.get());
    for (int t1 = 0; t1 < angles; ++t1) {
      fillHermitian(firstStage.halves.get() + t1 * halfPoints, level.rows, level.cols, modulusSpectrum);
      for (int j2 = j1 + 1; j2 < f.scales; ++j2) {
        Stage& secondStage = b.second[static_cast<std::size_t>(j2)];
        waveletModuli(modulusSpectrum, j2, j1, secondStage);
        lowPass(secondStage.moduli.get(), angles, j2, secondOrderChannel);
        secondOrderChannel += angles;
      }
    }
  }
}

}  // namespace dpx::core::numerics
