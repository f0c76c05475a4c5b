#include "numerics/real_fft.h"

#include <fftw3.h>

#include <atomic>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <unsupported/Eigen/FFT>
#include <utility>

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

// kissfft plans each inverse size afresh: n more sines and cosines, and their pages, on a thread's
// first inverse (its source leaves "conjugate the forward plan's twiddles" as a to-do). Both
// plans hold (cos θ_k, ∓sin θ_k) of the same angles and the same factorisation, so the inverse
// plan is the forward plan conjugated — bit for bit once the two entries make_twiddles writes as
// (±1, +0) are restored. A real inverse of n ≡ 0 (mod 4) runs the complex plan of n/2.
class KissWithConjugatePlans : public Eigen::internal::kissfft_impl<double> {
  using Base = Eigen::internal::kissfft_impl<double>;

 public:
  using Base::inv;
  void inv(Complex* dst, const Complex* src, int nfft) {
    planInverseFromForward(nfft);
    Base::inv(dst, src, nfft);
  }
  void inv(Scalar* dst, const Complex* src, int nfft) {
    planInverseFromForward((nfft & 3) != 0 ? nfft : nfft / 2);
    Base::inv(dst, src, nfft);
  }

 private:
  void planInverseFromForward(int nfft) {
    const auto forward = m_plans.find(PlanKey(nfft, false));
    if (forward == m_plans.end() || m_plans.contains(PlanKey(nfft, true))) return;
    PlanData inverse = forward->second;
    for (Complex& twiddle : inverse.m_twiddles) twiddle = std::conj(twiddle);
    inverse.m_twiddles[0] = Complex(1.0, 0.0);
    if (nfft % 2 == 0) inverse.m_twiddles[static_cast<std::size_t>(nfft / 2)] = Complex(-1.0, 0.0);
    inverse.m_inverse = true;
    m_plans.emplace(PlanKey(nfft, true), std::move(inverse));
  }
};

using KissFft = Eigen::FFT<double, KissWithConjugatePlans>;

// Per thread: kissfft keeps scratch buffers in the object.
KissFft& kissTransform(std::size_t n) {
  thread_local std::map<std::size_t, KissFft> transforms;
  if (transforms.size() > 8) transforms.clear();
  auto [it, inserted] = transforms.try_emplace(n);
  if (inserted) {
    it->second.SetFlag(KissFft::HalfSpectrum);
    it->second.SetFlag(KissFft::Unscaled);
  }
  return it->second;
}

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

std::size_t realFftSize(std::size_t points) {
  return points >= kFftwMinimumSize ? fftwSize(points) : kissFftSize(points);
}

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
  if (n >= kFftwMinimumSize) m_fftw = fftwPlans(n, threads);
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
    kissTransform(m_n).fwd(out, in, static_cast<Eigen::Index>(m_n));
  }
}

void RealTransform::inverse(std::complex<double>* in, double* out) const {
  if (m_fftw) {
    fftw_execute_dft_c2r(m_fftw->inversePlan(), reinterpret_cast<fftw_complex*>(in), out);
  } else {
    kissTransform(m_n).inv(out, in, static_cast<Eigen::Index>(m_n));
  }
}

void prepareRealTransform(std::size_t n, int threads) {
  if (n >= kFftwMinimumSize) fftwPlans(n, threads);
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
