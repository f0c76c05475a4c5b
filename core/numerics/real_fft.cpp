#include "numerics/real_fft.h"

#include <fftw3.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <list>
#include <mutex>
#include <unsupported/Eigen/FFT>
#include <utility>
#include <vector>

#include "numerics/code_paths.h"
#include "numerics/vector_math.h"

namespace dpx::core::numerics {
namespace detail {
// resources/fftw/wisdom, embedded at build time (core/numerics/fftw_wisdom.cmake).
extern const char* const kShippedFftwWisdom;
}  // namespace detail

namespace {

// FFTW's planner is not re-entrant unless told so; the GUI may compose on a worker while a test
// or the CLI composes on another thread.
std::mutex& fftwMutex() {
  static std::mutex m;
  return m;
}

bool wisdomAccepted = false;  // written once, under the once_flag

// Threads, thread-safe planning and the shipped wisdom: once per process, on the first FFTW use
// (a run small enough for kissfft never parses the wisdom).
void initialiseFftw() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftw_make_planner_thread_safe();
    const std::lock_guard lock(fftwMutex());
    wisdomAccepted = fftw_import_wisdom_from_string(detail::kShippedFftwWisdom) != 0;
  });
}

}  // namespace

std::unique_lock<std::mutex> lockFftwPlanner() {
  initialiseFftw();
  return std::unique_lock<std::mutex>(fftwMutex());
}

// Smallest n ≥ minimum, a multiple of 4 of the form 2^a 3^b 5^c: kissfft has butterflies for 2,
// 3, 4 and 5 only, and its fast real path needs n ≡ 0 (mod 4).
std::size_t kissFftSize(std::size_t minimum) {
  std::size_t best = std::numeric_limits<std::size_t>::max();
  for (std::size_t p2 = 4; p2 < 2 * minimum + 8; p2 *= 2) {
    for (std::size_t p3 = p2; p3 < 2 * minimum + 8; p3 *= 3) {
      for (std::size_t p5 = p3; p5 < 2 * minimum + 8; p5 *= 5) {
        if (p5 >= minimum && p5 < best) best = p5;
      }
    }
  }
  return best;
}

namespace {

// kissfft's plans of one real size n (a multiple of 4), made once per process and read by every
// thread: the complex plan of n/2, the n/4 twiddles that split its output into the real
// spectrum, and (at the first inverse) the inverse plan. Eigen's kissfft_impl keeps its plans in
// the object, so one object per thread made n/2 sines, cosines and complex exponentials on each
// thread of a run, and faulted in their pages again: a third of a thread's first composition at
// n = 32 400. The transforms below are Eigen's real-input ones (kissfft_impl::fwd and inv) step
// for step, with the same arithmetic in the same order: compiled with this file's options, they
// give the bits Eigen's objects gave here.
//
// The inverse plan is the forward plan conjugated (kissfft's source leaves that as a to-do): both
// hold (cos θ_k, ∓sin θ_k) of the same angles and the same factorisation, bit for bit once the two
// entries make_twiddles writes as (±1, +0) are restored.
//
// A plan is shared without a lock: kiss_cpx_fft::work, not a const member, writes to the plan
// only in its butterfly for radices above 5 (its scratch buffer), and kissFftSize's sizes have
// none.
using KissPlan = Eigen::internal::kiss_cpx_fft<double>;
using Complex = std::complex<double>;

}  // namespace

struct KissRealPlans {
  int n = 0;
  mutable KissPlan forward;
  std::vector<Complex> split;
  mutable std::once_flag inversePlanned;
  mutable KissPlan inverse;

  explicit KissRealPlans(int size) : n(size) {
    const int half = n / 2;
    forward.make_twiddles(half, false);
    forward.factorize(half);
    // Eigen's real_twiddles(n/4), e^{−iπ(k/half + ½)}, with the vector math library's sin and
    // cos on arrays (n/4 scalar complex exponentials were ~0.2 ms at 32 400 points).
    const auto quarter = static_cast<std::size_t>(n / 4);
    std::vector<double> cosines(quarter);
    std::vector<double> sines(quarter);
    const double pi = std::acos(-1.0);
    for (std::size_t k = 1; k <= quarter; ++k) cosines[k - 1] = -pi * (double(k) / half + 0.5);
    sines = cosines;
    cosInPlace(cosines);
    sinInPlace(sines);
    split.resize(quarter);
    for (std::size_t k = 0; k < quarter; ++k) split[k] = Complex(cosines[k], sines[k]);
  }

  KissPlan& inversePlan() const {
    std::call_once(inversePlanned, [this] {
      inverse = forward;
      for (Complex& twiddle : inverse.m_twiddles) twiddle = std::conj(twiddle);
      inverse.m_twiddles[0] = Complex(1.0, 0.0);
      if (n / 2 % 2 == 0) inverse.m_twiddles[static_cast<std::size_t>(n / 4)] = Complex(-1.0, 0.0);
      inverse.m_inverse = true;
    });
    return inverse;
  }

  // Eigen's kissfft_impl::fwd(Complex*, const Scalar*, n) for n ≡ 0 (mod 4).
  void transformForward(const double* in, Complex* out) const {
    const int ncfft = n >> 1;
    const int ncfft2 = n >> 2;
    const Complex* rtw = split.data();
    forward.work(0, out, reinterpret_cast<const Complex*>(in), 1, 1);
    const Complex dc(out[0].real() + out[0].imag());
    const Complex nyquist(out[0].real() - out[0].imag());
    for (int k = 1; k <= ncfft2; ++k) {
      const Complex fpk = out[k];
      const Complex fpnk = std::conj(out[ncfft - k]);
      const Complex f1k = fpk + fpnk;
      const Complex f2k = fpk - fpnk;
      const Complex tw = f2k * rtw[k - 1];
      out[k] = (f1k + tw) * 0.5;
      out[ncfft - k] = std::conj(f1k - tw) * 0.5;
    }
    out[0] = dc;
    out[ncfft] = nyquist;
  }

  // Eigen's kissfft_impl::inv(Scalar*, const Complex*, n) for n ≡ 0 (mod 4), its scratch buffer
  // replaced by `in` (each pair k, n/2 − k is read before it is written, in Eigen's order).
  void transformInverse(Complex* in, double* out) const {
    const int ncfft = n >> 1;
    const Complex* rtw = split.data();
    const Complex first(in[0].real() + in[ncfft].real(), in[0].real() - in[ncfft].real());
    for (int k = 1; k <= ncfft / 2; ++k) {
      const Complex fk = in[k];
      const Complex fnkc = std::conj(in[ncfft - k]);
      const Complex fek = fk + fnkc;
      const Complex tmp = fk - fnkc;
      const Complex fok = tmp * std::conj(rtw[k - 1]);
      in[k] = fek + fok;
      in[ncfft - k] = std::conj(fek - fok);
    }
    in[0] = first;
    inversePlan().work(0, reinterpret_cast<Complex*>(out), in, 1, 1);
  }
};

namespace {

// The plans of the last few sizes (the GUI recomputes runs of the same size); a transform holds
// its own reference, so dropping one from the cache frees it once no transform uses it.
std::shared_ptr<const KissRealPlans> kissPlans(std::size_t n) {
  static std::mutex mutex;
  static std::list<std::shared_ptr<const KissRealPlans>> cache;  // most recent first
  std::shared_ptr<const KissRealPlans> dropped;                  // released after the lock
  const std::lock_guard lock(mutex);
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (static_cast<std::size_t>((*it)->n) != n) continue;
    cache.splice(cache.begin(), cache, it);
    return cache.front();
  }
  cache.push_front(std::make_shared<const KissRealPlans>(static_cast<int>(n)));
  if (cache.size() > 8) {
    dropped = std::move(cache.back());
    cache.pop_back();
  }
  return cache.front();
}

// kissfft for the chirp-z's complex transforms: its plans per thread and size.
using KissFft = Eigen::FFT<double>;

// In place: the spectrum's n/2 + 1 complex values overwrite the n reals. The planner's flags
// are part of the wisdom's key, so the measuring tool and the library plan through this one
// function. The caller holds fftwMutex.
fftw_plan planInPlace(std::size_t n, bool forward, unsigned flags) {
  RealBuffer r = realBuffer(2 * (n / 2 + 1));
  auto* cc = reinterpret_cast<fftw_complex*>(r.get());
  const int size = static_cast<int>(n);
  return forward ? fftw_plan_dft_r2c_1d(size, r.get(), cc, flags) : fftw_plan_dft_c2r_1d(size, cc, r.get(), flags);
}

// Measured from the wisdom where it has the plan (FFTW_WISDOM_ONLY: no measuring, a null plan
// otherwise), FFTW_ESTIMATE's heuristic elsewhere. The caller holds fftwMutex.
std::pair<fftw_plan, bool> planFromWisdom(std::size_t n, int threads, bool forward) {
  fftw_plan_with_nthreads(threads);
  if (fftw_plan plan = planInPlace(n, forward, FFTW_MEASURE | FFTW_WISDOM_ONLY)) return {plan, true};
  return {planInPlace(n, forward, FFTW_ESTIMATE), false};
}

}  // namespace

// The inverse is planned at its first use: a long run's PLDs keep their spectra and most
// processes never transform back (4 ms of planning at 2^20 points).
struct FftwPlans {
  std::size_t n = 0;
  int threads = 1;
  fftw_plan forward = nullptr;
  bool forwardFromWisdom = false;
  mutable std::once_flag inversePlanned;
  mutable fftw_plan inverse = nullptr;
  mutable std::atomic<bool> inverseFromWisdom{true};  // until planned: no plan, no estimate

  fftw_plan inversePlan() const {
    std::call_once(inversePlanned, [this] {
      const std::lock_guard lock(fftwMutex());
      const auto [plan, fromWisdom] = planFromWisdom(n, threads, false);
      inverse = plan;
      inverseFromWisdom = fromWisdom;
    });
    return inverse;
  }
};

namespace {

// The plans of size n with `threads` threads, made on first use. Kept for the process (a few
// sizes: the GUI recomputes runs of the same size); beyond 8 sizes the oldest are dropped once no
// transform uses them.
std::shared_ptr<const FftwPlans> fftwPlans(std::size_t n, int threads) {
  initialiseFftw();
  std::mutex& mutex = fftwMutex();  // constructed first, so it outlives the cache at exit
  static std::list<std::pair<std::pair<std::size_t, int>, std::shared_ptr<const FftwPlans>>> cache;
  std::shared_ptr<const FftwPlans> dropped;  // released after the lock: its deleter takes it
  const std::lock_guard lock(mutex);
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (it->first == std::pair{n, threads}) {
      cache.splice(cache.begin(), cache, it);
      return cache.front().second;
    }
  }
  auto* plans = new FftwPlans;
  plans->n = n;
  plans->threads = threads;
  std::tie(plans->forward, plans->forwardFromWisdom) = planFromWisdom(n, threads, true);
  std::shared_ptr<const FftwPlans> shared(plans, [](const FftwPlans* p) {
    const std::lock_guard destroyLock(fftwMutex());
    fftw_destroy_plan(p->forward);
    if (p->inverse) fftw_destroy_plan(p->inverse);
    delete p;
  });
  cache.emplace_front(std::pair{n, threads}, shared);
  if (cache.size() > 8) {
    dropped = std::move(cache.back().second);
    cache.pop_back();
  }
  return shared;
}

}  // namespace

// Smallest n ≥ minimum of the form 2^a, 3·2^a or 5·2^a. FFTW's planning costs a twiddle a point
// on any size, but on radices without codelets its planner picks buffered generic solvers whose
// set-up is several times that (1029000 = 2³·3·5³·7³: 180 ms against 20 ms at 2²⁰); these three
// forms keep the transform within 4/3 of the window, and are the sizes the shipped wisdom covers.
std::size_t fftwSize(std::size_t minimum) {
  std::size_t p = 16;  // even sizes only (10, 12, 16, …)
  while (p < minimum) p *= 2;
  // Below p: p/2 < minimum ≤ p, and 5p/8, 3p/4 lie between.
  for (std::size_t candidate : {(p / 8) * 5, (p / 4) * 3}) {
    if (candidate >= minimum) return candidate;
  }
  return p;
}

bool usesFftw(std::size_t n) { return n >= kFftwMinimumSize && !portableNumerics(); }

std::size_t realFftSize(std::size_t points) { return usesFftw(points) ? fftwSize(points) : kissFftSize(points); }

void complexForward(const std::complex<double>* in, std::complex<double>* out, std::size_t n) {
  // Its own object per thread: kissfft keys its plans by size alone, real or complex.
  thread_local KissFft transform;
  transform.fwd(out, in, static_cast<Eigen::Index>(n));
}

void FftwFree::operator()(void* p) const { fftw_free(p); }

RealBuffer realBuffer(std::size_t n) { return RealBuffer(fftw_alloc_real(n)); }

ComplexBuffer complexBuffer(std::size_t n) {
  return ComplexBuffer(reinterpret_cast<std::complex<double>*>(fftw_alloc_complex(n)));
}

RealTransform::RealTransform(std::size_t n, int threads) : m_n(n), m_threads(threads) {
  if (usesFftw(n)) {
    m_fftw = fftwPlans(n, threads);
  } else {
    m_kiss = kissPlans(n);
  }
}

RealTransform::~RealTransform() = default;

bool RealTransform::forwardFromWisdom() const { return m_fftw && m_fftw->forwardFromWisdom; }

bool RealTransform::fromWisdom() const {
  return m_fftw && m_fftw->forwardFromWisdom && m_fftw->inverseFromWisdom.load();
}

void RealTransform::forward(const double* in, std::complex<double>* out) const {
  if (m_fftw) {
    // New-array execution is thread-safe; FFTW does not write `in` of an r2c transform.
    fftw_execute_dft_r2c(m_fftw->forward, const_cast<double*>(in), reinterpret_cast<fftw_complex*>(out));
  } else {
    m_kiss->transformForward(in, out);
  }
}

void RealTransform::inverse(std::complex<double>* in, double* out) const {
  if (m_fftw) {
    fftw_execute_dft_c2r(m_fftw->inversePlan(), reinterpret_cast<fftw_complex*>(in), out);
  } else {
    m_kiss->transformInverse(in, out);
  }
}

void prepareRealTransform(std::size_t n, int threads) {
  if (usesFftw(n)) {
    fftwPlans(n, threads);
  } else {
    kissPlans(n);
  }
}

bool fftwWisdomLoaded() {
  initialiseFftw();
  return wisdomAccepted;
}

std::string measureFftwWisdom(std::span<const std::size_t> sizes, std::span<const int> threads, bool fresh) {
  initialiseFftw();
  const std::lock_guard lock(fftwMutex());
  if (fresh) fftw_forget_wisdom();
  for (int t : threads) {
    fftw_plan_with_nthreads(t);
    for (std::size_t n : sizes) {
      for (bool forward : {true, false}) fftw_destroy_plan(planInPlace(n, forward, FFTW_MEASURE));
    }
  }
  char* text = fftw_export_wisdom_to_string();
  std::string out = text ? text : "";
  fftw_free(text);
  return out;
}

}  // namespace dpx::core::numerics
