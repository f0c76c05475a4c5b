#pragma once
// A band of a long DFT of a short real sequence, without the long transform: Bluestein's chirp-z
// algorithm (Bluestein 1970; Rabiner, Schafer & Rader 1969). With jk = (j² + k² − (k − j)²)/2,
//   Σ_j x_j W^{jk} = W^{k²/2} Σ_j (x_j W^{j²/2}) W^{−(k−j)²/2},   W = e^{−2πi/n},
// a convolution of the chirped sequence with a chirp, made on complex FFTs of a size
// ≥ length + band − 1 instead of n. The PLD composition needs the K-th power of a step's
// spectrum only at the frequencies where a double still holds it, about a hundred of the
// transform's 10⁵ at K = 10⁶: this computes them from transforms of the step's length.
//
// Every chirp angle is reduced exactly in integers (π·(j² mod 2n)/n) before its sine and cosine,
// so the result carries the round-off of an FFT of the short size (~1e−16·log₂ N·Σ|x_j|),
// independent of n.
//
// Both functions run on three buffers of the transform size kept per thread (up to 2¹⁶ points;
// larger ones are freed after the call): on a 2-core VM a page touched for the first time costs
// ~3 µs, as much as a tenth of one of these transforms.
#include <complex>
#include <cstddef>
#include <span>

namespace dpx::core::numerics {

// out[t] = Σ_{j < x.size()} x_j e^{−2πi·j·(first + t)/n} for t = 0 … out.size() − 1, on complex
// transforms of `size` points: at least bandDftSize(x.size(), out.size()), a kissfft size (0: that
// size). Requires x nonempty, n ≥ 1 and first + out.size() ≤ n; n, x.size() and out.size() below
// 2³¹.
void bandDft(std::span<const double> x, std::size_t n, std::size_t first, std::span<std::complex<double>> out,
             std::size_t size = 0);

// The smallest transform size bandDft can run on for `length` inputs and `band` outputs.
std::size_t bandDftSize(std::size_t length, std::size_t band);

// |Σ_j x_j e^{−2πijr/size}| for r = 0 … size/2 (into out, of size/2 + 1 values): the spectrum's
// magnitudes on a grid of `size` ≥ x.size() points, a kissfft size — the same transform as a
// bandDft of that size, on the same buffers.
void dftMagnitudes(std::span<const double> x, std::size_t size, std::span<double> out);

}  // namespace dpx::core::numerics
