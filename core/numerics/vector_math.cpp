#include "numerics/vector_math.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>

#include "numerics/code_paths.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>
#define DPX_LIBMVEC_WIDTH 4
#elif defined(__x86_64__)
#include <emmintrin.h>
#define DPX_LIBMVEC_WIDTH 2
#endif
#ifdef DPX_LIBMVEC_WIDTH
#define DPX_LIBMVEC_PAIRS 1  // SSE's two-lane variants exist wherever libmvec does
#endif

#ifdef DPX_LIBMVEC_WIDTH
// libmvec's entry points, named by the x86-64 vector function ABI: _ZGV, the ISA (b = SSE, d =
// AVX2), N = unmasked, the lane count, v = one vector argument, then the scalar function's name.
extern "C" {
__m128d _ZGVbN2v_exp(__m128d);
__m128d _ZGVbN2v_erfc(__m128d);
#if DPX_LIBMVEC_WIDTH == 4
__m256d _ZGVdN4v_exp(__m256d);
__m256d _ZGVdN4v_expm1(__m256d);
__m256d _ZGVdN4v_log(__m256d);
__m256d _ZGVdN4v_log1p(__m256d);
__m256d _ZGVdN4v_erfc(__m256d);
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
#else
__m128d _ZGVbN2v_expm1(__m128d);
__m128d _ZGVbN2v_log(__m128d);
__m128d _ZGVbN2v_log1p(__m128d);
__m128d _ZGVbN2v_sin(__m128d);
__m128d _ZGVbN2v_cos(__m128d);
#endif
}
#endif

namespace dpx::core::numerics {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kMinusLog2 = -0.6931471805599453;

#ifdef DPX_LIBMVEC_WIDTH
constexpr std::size_t kWidth = DPX_LIBMVEC_WIDTH;
#if DPX_LIBMVEC_WIDTH == 4
using Pack = __m256d;
inline Pack load(const double* p) { return _mm256_loadu_pd(p); }
inline void store(double* p, Pack v) { _mm256_storeu_pd(p, v); }
#define DPX_VECTOR_FUNCTION(name) _ZGVdN4v_##name
#else
using Pack = __m128d;
inline Pack load(const double* p) { return _mm_loadu_pd(p); }
inline void store(double* p, Pack v) { _mm_storeu_pd(p, v); }
#define DPX_VECTOR_FUNCTION(name) _ZGVbN2v_##name
#endif

// f on every element; the last, partial pack is padded with zeros (in every function's domain).
template <Pack (*f)(Pack)>
void applyInPlace(std::span<double> values) {
  double* data = values.data();
  const std::size_t n = values.size();
  std::size_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store(data + i, f(load(data + i)));
  if (i == n) return;
  std::array<double, kWidth> tail{};
  std::copy(data + i, data + n, tail.begin());
  store(tail.data(), f(load(tail.data())));
  std::copy(tail.begin(), tail.begin() + static_cast<std::ptrdiff_t>(n - i), data + i);
}

// The portable paths (code_paths.h) take <cmath>'s scalar functions.
#define DPX_APPLY(name, values)                        \
  do {                                                 \
    if (portableNumerics()) {                          \
      for (double& v_ : values) v_ = std::name(v_);    \
    } else {                                           \
      applyInPlace<DPX_VECTOR_FUNCTION(name)>(values); \
    }                                                  \
  } while (false)
#else
#define DPX_APPLY(name, values)                   \
  do {                                            \
    for (double& v_ : values) v_ = std::name(v_); \
  } while (false)
#endif

}  // namespace

void expInPlace(std::span<double> values) { DPX_APPLY(exp, values); }
void expm1InPlace(std::span<double> values) { DPX_APPLY(expm1, values); }
void logInPlace(std::span<double> values) { DPX_APPLY(log, values); }
void log1pInPlace(std::span<double> values) { DPX_APPLY(log1p, values); }
void erfcInPlace(std::span<double> values) { DPX_APPLY(erfc, values); }
void sinInPlace(std::span<double> values) { DPX_APPLY(sin, values); }
void cosInPlace(std::span<double> values) { DPX_APPLY(cos, values); }

void log1mExpInPlace(std::span<double> values) {
  // Each branch's elements are gathered into a buffer, transformed together and put back.
  constexpr std::size_t kPiece = 256;
  std::array<double, kPiece> nearZero{}, farFromZero{};
  std::array<std::size_t, kPiece> nearIndex{}, farIndex{};
  for (std::size_t start = 0; start < values.size(); start += kPiece) {
    const std::size_t end = std::min(values.size(), start + kPiece);
    std::size_t nNear = 0;
    std::size_t nFar = 0;
    for (std::size_t i = start; i < end; ++i) {
      const double x = values[i];
      if (x >= 0.0 || std::isnan(x)) {
        values[i] = x == 0.0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      } else if (x > kMinusLog2) {
        nearIndex[nNear] = i;
        nearZero[nNear++] = x;
      } else {
        farIndex[nFar] = i;
        farFromZero[nFar++] = x;
      }
    }
    const std::span<double> near(nearZero.data(), nNear);
    expm1InPlace(near);
    for (double& v : near) v = -v;
    logInPlace(near);
    const std::span<double> far(farFromZero.data(), nFar);
    expInPlace(far);
    for (double& v : far) v = -v;
    log1pInPlace(far);
    for (std::size_t k = 0; k < nNear; ++k) values[nearIndex[k]] = nearZero[k];
    for (std::size_t k = 0; k < nFar; ++k) values[farIndex[k]] = farFromZero[k];
  }
}

void normalCdfInPlace(std::span<double> values) {
  for (double& v : values) v *= -kInvSqrt2;
  erfcInPlace(values);
  for (double& v : values) v *= 0.5;
}

namespace {
// f at a and b in one call of its SSE variant, or two scalar calls without libmvec.
#ifdef DPX_LIBMVEC_PAIRS
template <__m128d (*pair)(__m128d), double (*scalar)(double)>
std::array<double, 2> ofTwo(double a, double b) {
  std::array<double, 2> out;
  if (portableNumerics()) return {scalar(a), scalar(b)};
  _mm_storeu_pd(out.data(), pair(_mm_set_pd(b, a)));
  return out;
}
#define DPX_OF_TWO(name, a, b) ofTwo<_ZGVbN2v_##name, static_cast<double (*)(double)>(std::name)>(a, b)
#else
#define DPX_OF_TWO(name, a, b) \
  std::array<double, 2> { std::name(a), std::name(b) }
#endif
}  // namespace

std::array<double, 2> erfcOfTwo(double a, double b) { return DPX_OF_TWO(erfc, a, b); }
std::array<double, 2> expOfTwo(double a, double b) { return DPX_OF_TWO(exp, a, b); }

}  // namespace dpx::core::numerics
