#!/usr/bin/env python3
"""Peer timing and cross-check: DP Explorer's ScatterNet features against kymatio's Scattering2D
(the library Tramèr & Boneh 2021 computed them with), in one run on one machine.

Set-up on Debian 12 (nothing from kymatio is copied into any repository):
    apt-get install -y python3-numpy python3-scipy python3-packaging [python3-torch] dataset-fashion-mnist
    fetch github:kymatio/kymatio (a bare snapshot), then
    mkdir -p /tmp/kymatio-0.3.0 && git --git-dir=<snapshot> archive 0.3.0 | tar -x -C /tmp/kymatio-0.3.0
    (0.3.0 computes what 0.2 did, Tramèr & Boneh's version, and runs on Debian 12's torch 1.13.)

Run:  /usr/bin/python3 bench/scatternet_vs_kymatio.py /tmp/kymatio-0.3.0 build/bench/bench_features [--images N]

1. Cross-check: kymatio's coefficients of the four images of tests/data/scattering_reference.json
   against that file (computed by scripts/reference/scattering_reference.py): kymatio keeps its
   filters in float32, so they agree to ~1e-6 of each channel's largest coefficient.
2. Timing: kymatio's numpy frontend, and its torch frontend on two threads when torch is
   installed, on N Fashion-MNIST training images (default 2000), extrapolated to the 70 000
   images; then bench_features, which extracts all 70 000 images with DP Explorer (cold, two
   threads) and reads them back from the dataset cache.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FMNIST = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"


def fashion_images(count):
    with gzip.open(FMNIST, "rb") as f:
        data = f.read()
    pixels = np.frombuffer(data, np.uint8, count * 784, 16)
    return (pixels.reshape(count, 28, 28) / 255.0).astype(np.float32)


def cross_check(scattering):
    with open(os.path.join(ROOT, "tests", "data", "scattering_reference.json")) as f:
        reference = json.load(f)
    worst = 0.0
    for case in reference["cases"]:
        x = np.array(case["pixels"], dtype=np.float32).reshape(28, 28)
        s = np.asarray(scattering(x)).reshape(81, 49)
        ref = np.array(case["scattering"]).reshape(81, 49)
        scale = np.abs(ref).max(axis=1, keepdims=True)
        worst = max(worst, float((np.abs(s - ref) / scale).max()))
    return worst


def time_frontend(name, make, images):
    scattering = make()
    scattering(images[:8])  # warm-up (filters, plans)
    start = time.perf_counter()
    out = scattering(images)
    seconds = time.perf_counter() - start
    shape = tuple(np.asarray(out).shape)
    per_image = seconds / len(images)
    print(f"kymatio {name}: {len(images)} images {shape} in {seconds:.2f} s = {per_image * 1e6:.0f} µs/image; "
          f"70 000 images ≈ {per_image * 70000:.0f} s")
    return per_image


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kymatio")
    parser.add_argument("bench_features")
    parser.add_argument("--images", type=int, default=2000)
    args = parser.parse_args()
    sys.path.insert(0, args.kymatio)
    from kymatio.numpy import Scattering2D as NumpyScattering

    print(f"cross-check: kymatio against tests/data/scattering_reference.json, largest difference "
          f"{cross_check(NumpyScattering(J=2, shape=(28, 28))):.2e} of a channel's largest coefficient")
    images = fashion_images(args.images)
    time_frontend("numpy", lambda: NumpyScattering(J=2, shape=(28, 28)), images)
    try:
        import torch
        from kymatio.torch import Scattering2D as TorchScattering
        torch.set_num_threads(2)
        tensor = torch.from_numpy(images)
        scattering = TorchScattering(J=2, shape=(28, 28))
        time_frontend("torch (2 threads)", lambda: (lambda x: scattering(x if torch.is_tensor(x) else torch.from_numpy(x))),
                      tensor)
    except ImportError as e:
        print(f"kymatio torch: not available ({e}); apt-get install python3-torch")
    env = dict(os.environ, XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", "/tmp/dpx-bench-cache"))
    result = subprocess.run([args.bench_features, "2"], capture_output=True, text=True, env=env)
    print("DP Explorer:", result.stdout.strip())


if __name__ == "__main__":
    main()
