// The 2-D wavelet scattering transform (Mallat 2012; Bruna & Mallat 2013; Oyallon & Mallat 2015)
// exactly as kymatio 0.2's Scattering2D computes it (Andreux et al. 2020, "Kymatio: scattering
// transforms in Python"), the ScatterNet features of Tramèr & Boneh 2021 ("Differentially private
// learning needs better features (or much more data)", ICLR 2021, §3).
//
// An image of H × W pixels is reflect-padded to P_H × P_W, P = ((H + 2^J) div 2^J + 1)·2^J
// (28 → 36 for J = 2). Filters live on the padded grid: J·L Morlet wavelets ψ_{j,θ} (σ = 0.8·2^j,
// ξ = 3π/(4·2^j), slant 4/L, angle (⌊L/2⌋ − 1 − θ)π/L) and one Gaussian low-pass φ (σ = 0.8·2^{J−1},
// which averages over 2^J pixels), each a periodised Gabor summed over 5 × 5 copies of the grid and
// normalised by 2·3.1415·σ²/slant (kymatio's constant), taken to Fourier as the real part of its
// DFT. The coefficients, all subsampled by 2^J and cut by one sample at each border:
//   order 0: S0 = x ⋆ φ;
//   order 1: S1(j1, θ1) = |x ⋆ ψ_{j1,θ1}| ⋆ φ   (the modulus computed at resolution 2^{j1});
//   order 2: S2(j1, θ1, j2, θ2) = ||x ⋆ ψ_{j1,θ1}| ⋆ ψ_{j2,θ2}| ⋆ φ,  j1 < j2,
// in that channel order (kymatio ≥ 0.2): 1 + JL + L²J(J−1)/2 channels of (H div 2^J) × (W div 2^J)
// — 81 × 7 × 7 = 3 969 for a 28 × 28 image at J = 2, L = 8. Every convolution is circular on the
// padded grid; subsampling a spectrum averages its aliases, as kymatio does.
//
// How it is computed here (the values are kymatio's; the order of operations is not): the
// wavelets' convolutions by FFTW (double precision, FFTW_ESTIMATE plans, so the transforms a
// machine runs do not depend on timing), the low-pass-subsample-and-crop of every channel — a
// linear map of a real image that is separable because φ is — as two small real matrices,
// S = A_r·U·A_rᵀ, built once from the same spectral definition. scripts/reference/
// scattering_reference.py computes kymatio's algorithm literally in NumPy for the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "common/status.h"

namespace dpx::core::numerics {

struct ScatteringGeometry {
  int height = 28;
  int width = 28;
  int scales = 2;  // J: the low-pass averages over 2^J pixels
  int angles = 8;  // L: wavelet orientations over [0, π)
};

// The buffers of one thread's transforms (FFTW-aligned); make one per thread or block of images.
class ScatteringWorkspace {
 public:
  ScatteringWorkspace(ScatteringWorkspace&&) noexcept;
  ScatteringWorkspace& operator=(ScatteringWorkspace&&) noexcept;
  ~ScatteringWorkspace();

 private:
  friend class ScatteringTransform;
  struct Buffers;
  explicit ScatteringWorkspace(std::unique_ptr<Buffers> buffers);
  std::unique_ptr<Buffers> m_buffers;
};

class ScatteringTransform {
 public:
  // The transform of this geometry, made once per process and shared (it is immutable). Refuses
  // images smaller than the padding (each side must exceed its pad) or outside 1 ≤ J ≤ 4,
  // 1 ≤ L ≤ 16.
  static Result<std::shared_ptr<const ScatteringTransform>> create(const ScatteringGeometry& geometry);
  ~ScatteringTransform();
  ScatteringTransform(const ScatteringTransform&) = delete;
  ScatteringTransform& operator=(const ScatteringTransform&) = delete;

  const ScatteringGeometry& geometry() const { return m_geometry; }
  int channels() const;  // 1 + JL + L²J(J−1)/2
  int outputHeight() const;
  int outputWidth() const;
  int outputSize() const;  // channels · outputHeight · outputWidth

  ScatteringWorkspace makeWorkspace() const;

  // The coefficients of one image (height × width values, row-major) into `out` (outputSize()
  // values, channel-major: channel, row, column).
  void apply(std::span<const float> image, std::span<double> out, ScatteringWorkspace& workspace) const;
  void apply(std::span<const double> image, std::span<double> out, ScatteringWorkspace& workspace) const;

  // Min and max over the padded grid's frequencies of |φ̂|² + Σ_{j,θ} |ψ̂_{j,θ}|² (the
  // Littlewood–Paley sum): the frame bounds of one layer of the filter bank.
  std::pair<double, double> littlewoodPaleyRange() const;

  struct Filters;  // built once by create(); shared read-only by every thread

 private:
  ScatteringTransform() = default;
  static Result<std::shared_ptr<const ScatteringTransform>> build(const ScatteringGeometry& geometry);
  void transformPadded(std::span<double> out, ScatteringWorkspace& workspace) const;
  template <typename Pixel>
  void pad(std::span<const Pixel> image, ScatteringWorkspace& workspace) const;
  ScatteringGeometry m_geometry;
  std::unique_ptr<Filters> m_filters;
};

}  // namespace dpx::core::numerics
