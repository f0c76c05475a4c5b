// Batch sampling exactly as each accountant's theorem assumes it:
//  * Poisson (dp-sgd, sgld-posterior): every record joins independently with probability q,
//    drawn by geometric skips — O(qn) per step, never n Bernoulli draws; the batch size is
//    Binomial(n, q).
//  * uniform fixed-size (dp-sgld): m distinct records, uniformly, by a partial Fisher–Yates
//    shuffle of a persistent index array — O(m) per step.
//  * cyclic (cyclic, outpert): one data-independent permutation fixed for the whole run, cut into
//    k = ⌈n/m⌉ consecutive batches, visited in the same order every pass.
//  * shuffled (sgd): a fresh permutation per epoch.
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

// A random permutation of 0…n−1.
std::vector<std::int64_t> randomPermutation(std::int64_t n, Xoshiro256& engine);

}  // namespace dpx::core::training
