#!/usr/bin/env python3
"""Reference values for the 2-D wavelet scattering transform (Oyallon & Mallat 2015) as Tramèr &
Boneh 2021 compute their ScatterNet features: kymatio 0.2's Scattering2D(J=2, shape=(28, 28)),
L = 8 angles, order 2, then a per-example GroupNorm(27 groups, no affine parameters, eps = 1e-5).
Written to tests/data/scattering_reference.json.

Independent of the C++ code (core/numerics/scattering_transform.cpp): this follows kymatio's
algorithm literally — every filter built on the padded grid as a periodised Gabor/Morlet in space
and taken to Fourier by a 2-D FFT, each convolution a product of spectra, each subsampling the
mean over the k × k aliases of the spectrum, each modulus in space — whereas the C++ code folds
the low-pass-and-subsample steps into separable real matrices and reuses spectra. kymatio's own
constants are kept (the Gabor normalisation's 3.1415, the filters' real part, the 5 × 5 periodic
copies); its float32 storage is not: everything here is float64, so the C++ double-precision
result must agree to round-off.

Inputs: the first two images of Fashion-MNIST's test set (Debian package dataset-fashion-mnist)
and two synthetic 28 × 28 images (an oriented grating, a fixed pseudo-random texture), pixel
values x/255 in [0, 1] as torchvision's ToTensor gives them. Coefficients are printed to 10
significant digits (the tests compare to 1e-5).

Usage: /usr/bin/python3 scripts/reference/scattering_reference.py > tests/data/scattering_reference.json
(needs python3-numpy; reads /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz).
"""
import gzip
import json
import sys

import numpy as np

J = 2
L = 8
HEIGHT = WIDTH = 28
GROUPS = 27
GROUP_NORM_EPS = 1e-5
FASHION_TEST_IMAGES = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"


def gabor_2d(m, n, sigma, theta, xi, slant=1.0):
    """kymatio.scattering2d.filter_bank.gabor_2d, in float64."""
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    rotation_inv = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    d = np.array([[1.0, 0.0], [0.0, slant * slant]])
    curv = rotation @ d @ rotation_inv / (2 * sigma * sigma)
    gab = np.zeros((m, n), np.complex128)
    for ex in (-2, -1, 0, 1, 2):
        for ey in (-2, -1, 0, 1, 2):
            xx, yy = np.mgrid[ex * m:m + ex * m, ey * n:n + ey * n].astype(np.float64)
            arg = -(curv[0, 0] * xx * xx + (curv[0, 1] + curv[1, 0]) * xx * yy + curv[1, 1] * yy * yy) \
                + 1j * (xx * xi * np.cos(theta) + yy * xi * np.sin(theta))
            gab += np.exp(arg)
    return gab / (2 * 3.1415 * sigma * sigma / slant)


def morlet_2d(m, n, sigma, theta, xi, slant):
    wave = gabor_2d(m, n, sigma, theta, xi, slant)
    envelope = gabor_2d(m, n, sigma, theta, 0.0, slant)
    return wave - (np.sum(wave) / np.sum(envelope)) * envelope


def periodize_filter_fft(x, res):
    """kymatio's periodize_filter_fft: zero the band between the kept frequencies, sum the aliases."""
    m, n = x.shape
    mask = np.ones(x.shape)
    len_x, start_x = int(m * (1 - 2 ** (-res))), int(m * 2 ** (-res - 1))
    len_y, start_y = int(n * (1 - 2 ** (-res))), int(n * 2 ** (-res - 1))
    mask[start_x:start_x + len_x, :] = 0
    mask[:, start_y:start_y + len_y] = 0
    x = x * mask
    k = 2 ** res
    return x.reshape(k, m // k, k, n // k).sum(axis=(0, 2))


def filter_bank(m, n):
    psi = []
    for j in range(J):
        for theta in range(L):
            signal = morlet_2d(m, n, 0.8 * 2 ** j, (int(L - L / 2 - 1) - theta) * np.pi / L,
                               3.0 / 4.0 * np.pi / 2 ** j, 4.0 / L)
            fourier = np.real(np.fft.fft2(signal))
            psi.append({"j": j, "theta": theta,
                        "levels": [periodize_filter_fft(fourier, res) for res in range(min(j + 1, max(J - 1, 1)))]})
    phi_fourier = np.real(np.fft.fft2(gabor_2d(m, n, 0.8 * 2 ** (J - 1), 0.0, 0.0)))
    phi = [periodize_filter_fft(phi_fourier, res) for res in range(J)]
    return psi, phi


def subsample_fourier(x, k):
    m, n = x.shape
    return x.reshape(k, m // k, k, n // k).mean(axis=(0, 2))


def padded_size(size):
    return ((size + 2 ** J) // 2 ** J + 1) * 2 ** J


def scattering(image, psi, phi):
    """kymatio 0.2's scattering2d for one image: S0, then every S1, then every S2 (j1 < j2)."""
    mp, np_ = padded_size(HEIGHT), padded_size(WIDTH)
    pad = ((mp - HEIGHT) // 2, (mp - HEIGHT + 1) // 2), ((np_ - WIDTH) // 2, (np_ - WIDTH + 1) // 2)
    x = np.pad(image, pad, mode="reflect")

    def unpad(s):
        return s[1:-1, 1:-1]

    u0 = np.fft.fft2(x)
    out0 = [unpad(np.real(np.fft.ifft2(subsample_fourier(u0 * phi[0], 2 ** J))))]
    out1, out2 = [], []
    for n1 in psi:
        j1 = n1["j"]
        u1 = u0 * n1["levels"][0]
        if j1 > 0:
            u1 = subsample_fourier(u1, 2 ** j1)
        u1 = np.fft.fft2(np.abs(np.fft.ifft2(u1)))
        out1.append(unpad(np.real(np.fft.ifft2(subsample_fourier(u1 * phi[j1], 2 ** (J - j1))))))
        for n2 in psi:
            j2 = n2["j"]
            if j2 <= j1:
                continue
            u2 = subsample_fourier(u1 * n2["levels"][j1], 2 ** (j2 - j1))
            u2 = np.fft.fft2(np.abs(np.fft.ifft2(u2)))
            out2.append(unpad(np.real(np.fft.ifft2(subsample_fourier(u2 * phi[j2], 2 ** (J - j2))))))
    return np.stack(out0 + out1 + out2)


def group_norm(s):
    """torch.nn.GroupNorm(GROUPS, channels, affine=False) on one example (biased variance)."""
    channels = s.shape[0]
    g = s.reshape(GROUPS, channels // GROUPS, -1)
    mean = g.mean(axis=(1, 2), keepdims=True)
    var = g.var(axis=(1, 2), keepdims=True)
    return ((g - mean) / np.sqrt(var + GROUP_NORM_EPS)).reshape(s.shape)


def fashion_images(count):
    with gzip.open(FASHION_TEST_IMAGES, "rb") as f:
        data = f.read()
    n, rows, cols = (int.from_bytes(data[i:i + 4], "big") for i in (4, 8, 12))
    assert (rows, cols) == (HEIGHT, WIDTH) and n >= count
    pixels = np.frombuffer(data, np.uint8, count * rows * cols, 16)
    return [p.reshape(rows, cols) / 255.0 for p in pixels.reshape(count, -1)]


def synthetic_images():
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    grating = 0.5 + 0.5 * np.cos(0.9 * xx + 0.4 * yy)
    mask, state = (1 << 64) - 1, 88172645463325252
    texture = np.empty(HEIGHT * WIDTH)
    for i in range(texture.size):  # xorshift64 in Python integers: fixed whatever NumPy's RNG
        state ^= (state << 13) & mask
        state ^= state >> 7
        state ^= (state << 17) & mask
        texture[i] = (state >> 11) / float(1 << 53)
    return [("grating", grating), ("texture", texture.reshape(HEIGHT, WIDTH))]


def main():
    psi, phi = filter_bank(padded_size(HEIGHT), padded_size(WIDTH))
    # The Littlewood-Paley sum of the full-resolution filters: one layer's frame bounds.
    littlewood_paley = phi[0] ** 2 + sum(p["levels"][0] ** 2 for p in psi)
    images = [(f"fashion-mnist test #{i}", img) for i, img in enumerate(fashion_images(2))] + synthetic_images()
    cases = []
    for name, image in images:
        s = scattering(image, psi, phi)
        cases.append({"name": name,
                      "pixels": [float(f"{v:.17g}") for v in image.ravel()],
                      "scattering": [float(f"{v:.10g}") for v in s.ravel()],
                      "group_norm": [float(f"{v:.10g}") for v in group_norm(s).ravel()]})
    json.dump({"source": "scripts/reference/scattering_reference.py (NumPy float64, kymatio 0.2's algorithm)",
               "J": J, "L": L, "height": HEIGHT, "width": WIDTH, "channels": 81, "output_height": 7,
               "output_width": 7, "groups": GROUPS, "group_norm_eps": GROUP_NORM_EPS,
               "littlewood_paley": [float(littlewood_paley.min()), float(littlewood_paley.max())],
               "layout": "channel-major (channel, row, column); channels S0, S1 (j1, theta1), S2 (j1 < j2, theta1, theta2)",
               "cases": cases}, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
