// Batch sampling exactly as each accountant's theorem assumes it:
//  * Poisson (dp-sgd, sgld-posterior): every record joins independently with probability q,
//    drawn by geometric skips — O(qn) per step, never n Bernoulli draws; the batch size is
//    Binomial(n, q).
//  * uniform fixed-size (dp-sgld): m distinct records, uniformly, by a partial Fisher–Yates
//    shuffle of a persistent index array — O(m) per step.
//  * cyclic (cyclic, outpert): one data-independent permutation fixed for the whole run, cut into
//    k = ⌈n/m⌉ consecutive batches, visited in the same order every pass.
//  * shuffled (sgd): a fresh permutation per epoch.
//  * balls in bins (random-allocation): every epoch, each record is put in one of the t = ⌈n/m⌉
//    steps, uniformly and independently (Feldman & Shenfeld 2025's 1-of-t allocation); the batch
//    sizes are multinomial, each Binomial(n, 1/t).
#pragma once

#include <cstdint>
#include <vector>

#include "training/rng.h"

namespace dpx::core::training {

// Uniform integer in [0, bound) without modulo bias (Lemire 2019).
std::uint64_t uniformBelow(Xoshiro256& engine, std::uint64_t bound);

// Indices of a Poisson(q) batch over n records, ascending.
void poissonBatch(std::int64_t n, double q, Xoshiro256& engine, std::vector<std::int64_t>& out);

class UniformBatchSampler {
 public:
  explicit UniformBatchSampler(std::int64_t n);
  // m distinct indices, ascending.
  void sample(std::int64_t m, Xoshiro256& engine, std::vector<std::int64_t>& out);

 private:
  std::vector<std::int64_t> m_order;
};

// One epoch of balls-in-bins batches: allocate() draws every record's step; batch(j) is the
// records allocated to step j, ascending. O(n) per epoch.
class BallsInBinsSampler {
 public:
  BallsInBinsSampler(std::int64_t n, std::int64_t steps);
  void allocate(Xoshiro256& engine);
  void batch(std::int64_t step, std::vector<std::int64_t>& out) const;
  std::int64_t steps() const { return static_cast<std::int64_t>(m_starts.size()) - 1; }

 private:
  std::int64_t m_n;
  std::vector<std::int64_t> m_records;  // records grouped by step, ascending within a step
  std::vector<std::int64_t> m_starts;   // step j's records are m_records[m_starts[j] … m_starts[j+1])
};

// A random permutation of 0…n−1.
std::vector<std::int64_t> randomPermutation(std::int64_t n, Xoshiro256& engine);

}  // namespace dpx::core::training
