#pragma once
// Real discrete Fourier transforms of one size and their unscaled inverses, for the PLD
// composition: FFTW for large sizes (planned once per size and process, from wisdom measured on
// this machine when it has it), Eigen's kissfft for small ones (whose set-up is a table of
// twiddles, cheaper than any FFTW plan below ~10⁵ points).
#include <complex>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>

namespace dpx::core::numerics {

// Below this size the transforms are kissfft's.
constexpr std::size_t kFftwMinimumSize = std::size_t{1} << 17;
// Whether a transform of size n is FFTW's: from kFftwMinimumSize on, unless the portable paths are
// selected (code_paths.h), which are kissfft's at every size.
bool usesFftw(std::size_t n);

// The transform size used for `points` ≥ 1 points: the smallest size ≥ points of the form the
// chosen library handles fastest (kissfft: 2^a 3^b 5^c, a multiple of 4; FFTW: 2^a, 3·2^a or
// 5·2^a).
std::size_t realFftSize(std::size_t points);

// FFTW's sizes alone (2^a, 3·2^a or 5·2^a ≥ minimum): the sizes its wisdom is measured at.
std::size_t fftwSize(std::size_t minimum);

// kissfft's sizes alone (2^a 3^b 5^c, a multiple of 4, ≥ minimum): the complex transforms'.
std::size_t kissFftSize(std::size_t minimum);

// The unscaled complex DFT of size n (from kissFftSize), out of place:
// out_k = Σ_j in_j e^{−2πijk/n}. kissfft's, whose twiddles are made once per thread and size.
// Usable from any thread at once; `in` and `out` must not overlap.
void complexForward(const std::complex<double>* in, std::complex<double>* out, std::size_t n);

// FFTW's planner, held by whoever plans outside this file (the scattering transform): the planner
// is shared by the whole process, and plans made with more than one thread change its state.
// Initialises FFTW once, as every use here does. Plans must be made with
// fftw_plan_with_nthreads(1) unless the caller wants FFTW's own threads.
std::unique_lock<std::mutex> lockFftwPlanner();

// Buffers with FFTW's SIMD alignment (every FFTW transform must see the alignment it was
// planned with).
struct FftwFree {
  void operator()(void* p) const;
};
using RealBuffer = std::unique_ptr<double[], FftwFree>;
using ComplexBuffer = std::unique_ptr<std::complex<double>[], FftwFree>;
RealBuffer realBuffer(std::size_t n);
ComplexBuffer complexBuffer(std::size_t n);

struct FftwPlans;
struct KissRealPlans;

// A real transform of size n (from realFftSize) and its inverse. FFTW's run in place (a page
// touched for the first time costs about as much as an FFT pass over it): the spectrum's
// n/2 + 1 values overwrite the n reals of a buffer of 2(n/2 + 1) doubles. kissfft's run out of
// place. Usable from any thread at once.
class RealTransform {
 public:
  RealTransform(std::size_t n, int threads);
  ~RealTransform();
  RealTransform(const RealTransform&) = delete;
  RealTransform& operator=(const RealTransform&) = delete;
  std::size_t size() const { return m_n; }
  int threads() const { return m_threads; }
  // Whether the spectrum must share the reals' buffer (of 2(n/2 + 1) doubles).
  bool inPlace() const { return m_fftw != nullptr; }
  // Whether FFTW planned this transform from measured wisdom (false: FFTW_ESTIMATE, or kissfft):
  // the forward plan, and the inverse once planned (at its first use).
  bool fromWisdom() const;
  bool forwardFromWisdom() const;
  void forward(const double* in, std::complex<double>* out) const;
  // Overwrites `in` (FFTW's complex-to-real transforms destroy their input; kissfft's use it as
  // their scratch, so `in` and `out` must not overlap there).
  void inverse(std::complex<double>* in, double* out) const;

 private:
  std::size_t m_n;
  int m_threads;
  std::shared_ptr<const FftwPlans> m_fftw;
  std::shared_ptr<const KissRealPlans> m_kiss;
};

// Makes (and keeps) the plan of size n ahead of its first use: FFTW's forward plan, or kissfft's
// twiddles (shared by every thread of the process). Planning costs ~8 ms at 2^20 points even
// from the wisdom (FFTW computes its twiddles) and ~0.4 ms at 32 400 (kissfft), which a caller
// can overlap with other work. FFTW's inverse (~4 ms) is planned at its first use: planning it
// ahead on a third thread cost a run that keeps its spectra 4–5 ms at K = 10⁶ and 10⁵ (two
// cores), and gained a run that needs it nothing measurable (K = 30, Δ = 2e−5: 173 against
// 175 ms).
void prepareRealTransform(std::size_t n, int threads);

// The wisdom shipped with DP Explorer (resources/fftw/wisdom): FFTW_MEASURE plans for the sizes
// the PLD composition uses, measured on the reference machine. Whether FFTW accepted it (it
// refuses wisdom from another FFTW build; plans then fall back to FFTW_ESTIMATE, slower by up to
// 1.6× on the inverse).
bool fftwWisdomLoaded();

// Measures FFTW_MEASURE plans for real transforms of the given sizes with `threads` threads,
// the way RealTransform plans them (in place, aligned), starting from no wisdom when `fresh`;
// returns FFTW's wisdom text of everything measured. Takes seconds to minutes: for the tool that
// regenerates the shipped wisdom, never for a computation.
std::string measureFftwWisdom(std::span<const std::size_t> sizes, std::span<const int> threads, bool fresh);

}  // namespace dpx::core::numerics
