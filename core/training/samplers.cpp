#include "training/samplers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dpx::core::training {

namespace {
__extension__ typedef unsigned __int128 Uint128;  // GCC/Clang extension: the 64×64→128 product
}  // namespace

std::uint64_t uniformBelow(Xoshiro256& engine, std::uint64_t bound) {
  // Lemire's multiply-shift with rejection of the biased low range.
  Uint128 product = static_cast<Uint128>(engine()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Uint128>(engine()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

void poissonBatch(std::int64_t n, double q, Xoshiro256& engine, std::vector<std::int64_t>& out) {
  out.clear();
  if (q >= 1.0) {
    out.resize(static_cast<std::size_t>(n));
    std::iota(out.begin(), out.end(), std::int64_t{0});
    return;
  }
  if (q <= 0.0) return;
  // Gaps between selected records are Geometric(q) on {0, 1, …}: ⌊log U / log(1 − q)⌋.
  const double logKeep = std::log1p(-q);
  std::int64_t index = -1;
  while (true) {
    const double skip = std::floor(std::log(engine.uniformOpen()) / logKeep);
    if (skip >= static_cast<double>(n - index)) break;
    index += static_cast<std::int64_t>(skip) + 1;
    if (index >= n) break;
    out.push_back(index);
  }
}

UniformBatchSampler::UniformBatchSampler(std::int64_t n) : m_order(static_cast<std::size_t>(n)) {
  std::iota(m_order.begin(), m_order.end(), std::int64_t{0});
}

void UniformBatchSampler::sample(std::int64_t m, Xoshiro256& engine, std::vector<std::int64_t>& out) {
  const auto n = static_cast<std::uint64_t>(m_order.size());
  m = std::min<std::int64_t>(m, static_cast<std::int64_t>(n));
  // A partial Fisher–Yates pass over any permutation yields a uniform m-subset.
  for (std::int64_t j = 0; j < m; ++j) {
    const auto r = static_cast<std::size_t>(j) + uniformBelow(engine, n - static_cast<std::uint64_t>(j));
    std::swap(m_order[static_cast<std::size_t>(j)], m_order[r]);
  }
  out.assign(m_order.begin(), m_order.begin() + m);
  std::sort(out.begin(), out.end());
}

BallsInBinsSampler::BallsInBinsSampler(std::int64_t n, std::int64_t steps)
    : m_n(n),
      m_records(static_cast<std::size_t>(n)),
      m_starts(static_cast<std::size_t>(std::max<std::int64_t>(steps, 1)) + 1, 0) {}

void BallsInBinsSampler::allocate(Xoshiro256& engine) {
  const auto t = static_cast<std::uint64_t>(steps());
  std::vector<std::int64_t> bin(static_cast<std::size_t>(m_n));
  std::fill(m_starts.begin(), m_starts.end(), 0);
  for (auto& b : bin) {
    b = static_cast<std::int64_t>(uniformBelow(engine, t));
    ++m_starts[static_cast<std::size_t>(b) + 1];
  }
  for (std::size_t j = 1; j < m_starts.size(); ++j) m_starts[j] += m_starts[j - 1];
  // Counting sort: records in increasing order within each step.
  std::vector<std::int64_t> next(m_starts.begin(), m_starts.end() - 1);
  for (std::int64_t i = 0; i < m_n; ++i) {
    m_records[static_cast<std::size_t>(next[static_cast<std::size_t>(bin[static_cast<std::size_t>(i)])]++)] = i;
  }
}

void BallsInBinsSampler::batch(std::int64_t step, std::vector<std::int64_t>& out) const {
  const auto j = static_cast<std::size_t>(step);
  out.assign(m_records.begin() + m_starts[j], m_records.begin() + m_starts[j + 1]);
}

std::vector<std::int64_t> randomPermutation(std::int64_t n, Xoshiro256& engine) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[uniformBelow(engine, i)]);
  return order;
}

}  // namespace dpx::core::training
