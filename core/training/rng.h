// Reproducible randomness for the trainer: one seed derives every stream (per step, per purpose,
// per part), so a run is bit-identical for a given seed whatever the thread count.
// Engine: xoshiro256++ (Blackman & Vigna 2018), seeded through SplitMix64. Gaussians: Boost's
// ziggurat (boost::random::normal_distribution), in double precision, then rounded to the
// parameter type. Note: like every floating-point DP library that does not implement a discrete
// Gaussian, the sampler is a faithful double-precision Gaussian, not an exact one.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

namespace dpx::core::training {

class Xoshiro256 {
 public:
  using result_type = std::uint64_t;
  explicit Xoshiro256(std::uint64_t seed);
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()();
  // Uniform in (0, 1] with 53 random bits (never 0: safe for log).
  double uniformOpen();

 private:
  std::uint64_t m_s[4];
};

// Purposes of the random streams (part of the stream key).
enum class Stream : std::uint64_t {
  kInit = 1,
  kBatch = 2,
  kNoise = 3,
  kPermutation = 4,
  kReleaseNoise = 5,
  kDisplayNoise = 6,
  kSplit = 7,
  kAudit = 8,
};

// An independent engine for (seed, purpose, index, part).
Xoshiro256 streamFor(std::uint64_t seed, Stream purpose, std::uint64_t index, std::uint64_t part = 0);

// Adds N(0, stddev²) to every element of `out` (stddev ≥ 0).
void addGaussianNoise(std::span<float> out, double stddev, Xoshiro256& engine);
void fillGaussian(std::span<double> out, double stddev, Xoshiro256& engine);

}  // namespace dpx::core::training
