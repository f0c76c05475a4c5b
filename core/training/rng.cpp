#include "training/rng.h"

#include <boost/random/normal_distribution.hpp>

namespace dpx::core::training {
namespace {

inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t splitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Xoshiro256::Xoshiro256(std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::uint64_t& s : m_s) s = splitMix64(state);
}

Xoshiro256::result_type Xoshiro256::operator()() {
  const std::uint64_t result = rotl(m_s[0] + m_s[3], 23) + m_s[0];
  const std::uint64_t t = m_s[1] << 17;
  m_s[2] ^= m_s[0];
  m_s[3] ^= m_s[1];
  m_s[1] ^= m_s[2];
  m_s[0] ^= m_s[3];
  m_s[2] ^= t;
  m_s[3] = rotl(m_s[3], 45);
  return result;
}

double Xoshiro256::uniformOpen() { return (static_cast<double>((*this)() >> 11) + 1.0) * 0x1.0p-53; }

Xoshiro256 streamFor(std::uint64_t seed, Stream purpose, std::uint64_t index, std::uint64_t part) {
  std::uint64_t state = seed;
  std::uint64_t key = splitMix64(state);
  state = key ^ (static_cast<std::uint64_t>(purpose) * 0xD1B54A32D192ED03ull);
  key = splitMix64(state);
  state = key ^ (index * 0xABC98388FB8FAC03ull);
  key = splitMix64(state);
  state = key ^ (part * 0x8CB92BA72F3D8DD7ull);
  return Xoshiro256(splitMix64(state));
}

void addGaussianNoise(std::span<float> out, double stddev, Xoshiro256& engine) {
  boost::random::normal_distribution<double> normal(0.0, stddev);
  for (float& v : out) v += static_cast<float>(normal(engine));
}

void fillGaussian(std::span<double> out, double stddev, Xoshiro256& engine) {
  boost::random::normal_distribution<double> normal(0.0, stddev);
  for (double& v : out) v = normal(engine);
}

}  // namespace dpx::core::training
