#!/usr/bin/env python3
"""High-precision reference values for the shuffle lower bound (Chua et al. 2024, "How Private are
DP-SGD Implementations?", the max-of-coordinates test), written to tests/data/shuffle_reference.json.

Independent of the C++ code: mpmath at 40 digits for one epoch, and for two epochs an exact
composition of the sliced statistic by enumerating every pair of slices (no loss grid, no FFT).

One epoch of T shuffled batches, noise multiplier sigma, sensitivity 1 (zero-out neighbours):
  P = (1/T) sum_t N(2 e_t, sigma^2 I),  Q = (1/T) sum_t N(e_t, sigma^2 I)
  P(max_t x_t <= C) = Phi((C-2)/sigma) Phi(C/sigma)^(T-1)   (Q: C-1)
  eps_lb(delta) = max_C log((P(max > C) - delta) / Q(max > C))
Usage: python3 scripts/reference/shuffle_reference.py > tests/data/shuffle_reference.json
"""
import json
import mpmath as mp

mp.mp.dps = 40


def log_cdf_max(c, shift, sigma, steps):
    return mp.log(mp.ncdf((c - shift) / sigma)) + (steps - 1) * mp.log(mp.ncdf(c / sigma))


def sf_max(c, shift, sigma, steps):
    return -mp.expm1(log_cdf_max(c, shift, sigma, steps))


def eps_of_threshold(c, sigma, steps, delta):
    p = sf_max(c, 2, sigma, steps)
    if p <= delta:
        return mp.mpf("-inf")
    return mp.log((p - delta) / sf_max(c, 1, sigma, steps))


def one_epoch_epsilon(sigma, steps, delta):
    sigma = mp.mpf(sigma)
    lo, hi = mp.mpf(-5) * sigma, 2 + 12 * sigma
    grid = [lo + (hi - lo) * i / 4000 for i in range(4001)]
    values = [eps_of_threshold(c, sigma, steps, delta) for c in grid]
    best = max(range(len(grid)), key=lambda i: values[i])
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    # golden-section search on the bracketing cell
    g = (mp.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = eps_of_threshold(x1, sigma, steps, delta), eps_of_threshold(x2, sigma, steps, delta)
    for _ in range(200):
        if f1 > f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = eps_of_threshold(x1, sigma, steps, delta)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = eps_of_threshold(x2, sigma, steps, delta)
    c = (a + b) / 2
    return eps_of_threshold(c, sigma, steps, delta), c


def sliced_masses(sigma, steps, lo, hi, slices):
    """Masses of max_t x_t in (-inf, c0), [c_i, c_i+1), [c_N, inf) under P and Q."""
    cuts = [mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * i / slices for i in range(slices + 1)]
    out = []
    for shift in (2, 1):
        cdf = [mp.exp(log_cdf_max(c, shift, sigma, steps)) for c in cuts]
        masses = [cdf[0]] + [cdf[i + 1] - cdf[i] for i in range(slices)] + [sf_max(cuts[-1], shift, sigma, steps)]
        out.append(masses)
    return out


def two_epoch_epsilon(sigma, steps, delta, lo, hi, slices):
    p, q = sliced_masses(mp.mpf(sigma), steps, lo, hi, slices)
    pairs = []
    for i in range(len(p)):
        for j in range(len(p)):
            pairs.append((float(p[i] * p[j]), float(q[i] * q[j])))
    pairs = [(a, b) for a, b in pairs if a > 0]

    def delta_of(eps):
        e = mp.e ** eps
        return sum(max(a - float(e) * b, 0.0) for a, b in pairs)

    lo_e, hi_e = 0.0, 200.0
    if delta_of(0.0) <= delta:
        return 0.0
    for _ in range(80):
        mid = (lo_e + hi_e) / 2
        if delta_of(mid) > delta:
            lo_e = mid
        else:
            hi_e = mid
    return lo_e


def main():
    delta = mp.mpf("1e-6")
    one_epoch = []
    for sigma in ("0.5", "1", "2"):
        for steps in (10, 100, 1000):
            eps, c = one_epoch_epsilon(sigma, steps, delta)
            one_epoch.append({"sigma": float(sigma), "steps_per_epoch": steps, "delta": float(delta),
                              "epsilon": float(max(eps, 0)), "threshold": float(c)})
    two_epochs = []
    for sigma, steps in (("1", 10), ("2", 100)):
        s = float(sigma)
        lo, hi, slices = -4 * s, 2 + 9 * s, 300
        eps = two_epoch_epsilon(sigma, steps, float(delta), lo, hi, slices)
        two_epochs.append({"sigma": s, "steps_per_epoch": steps, "epochs": 2, "delta": float(delta),
                           "slices": {"lo": lo, "hi": hi, "count": slices}, "epsilon": eps})
    json.dump({"source": "scripts/reference/shuffle_reference.py (mpmath, 40 digits)",
               "one_epoch": one_epoch, "two_epochs_sliced": two_epochs}, fp=__import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
