#!/usr/bin/env python3
"""Peer timing: DP-SGD on the CNN of Tramèr & Boneh 2021, DP Explorer against Opacus, in one run on
one machine (examples per second of training, batch, clip, noise, thread count and architecture the
same on both sides).

Set-up on Debian 12 (nothing from Opacus is copied into any repository):
    apt-get install -y python3-torch python3-packaging dataset-fashion-mnist
    fetch github:pytorch/opacus and github:dgasmith/opt_einsum (bare snapshots), then
    mkdir -p /tmp/opacus-1.4.0 /tmp/opt_einsum-3.4.0
    git --git-dir=<opacus snapshot> archive v1.4.0 | tar -x -C /tmp/opacus-1.4.0
    git --git-dir=<opt_einsum snapshot> archive v3.4.0 | tar -x -C /tmp/opt_einsum-3.4.0
    (Opacus 1.4.0 is the last release whose requirements allow torch 1.13, Debian 12's python3-torch.)

Run:  PYTHONPATH=/tmp/opacus-1.4.0:/tmp/opt_einsum-3.4.0 /usr/bin/python3 bench/cnn_vs_opacus.py build/app/dpx
      [--batch 256] [--threads 2] [--steps 40] [--full]

1. Opacus 1.4 (GradSampleModule + DPOptimizer, per-sample gradients by its hooks): Conv(1→16, 8×8,
   stride 2, pad 2) tanh MaxPool(2, 1) Conv(16→32, 4×4, stride 2) tanh MaxPool(2, 1) FC 512→32 tanh
   FC 32→10, Poisson batches at q = batch/60000, σ = 1, clip 0.1, SGD momentum 0.9, lr 4; examples/s
   over --steps steps after three warm-up steps.
2. DP Explorer: `dpx train --model cnn --mechanism dp-sgd` with the same settings for one epoch; its
   examples_per_second (training only; its evaluation is not counted, as Opacus' is not run).
3. The ratio. With --full, also the 40-epoch run of `dpx reproduce tramer-boneh-2021-fmnist-cnn`'s
   settings end to end (wall clock, evaluation included).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np

FMNIST_DIR = "/usr/share/datasets/fashion-mnist"


def fashion_train():
    def read(name):
        with gzip.open(os.path.join(FMNIST_DIR, name), "rb") as f:
            data = f.read()
        dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(data[3])]
        return np.frombuffer(data, np.uint8, offset=4 + 4 * data[3]).reshape(dims)

    return read("train-images-idx3-ubyte.gz"), read("train-labels-idx1-ubyte.gz")


def opacus_examples_per_second(batch, threads, steps):
    import torch
    from torch import nn
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    images, labels = fashion_train()
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    y = torch.from_numpy(labels.astype(np.int64))
    n = x.shape[0]
    model = GradSampleModule(nn.Sequential(
        nn.Conv2d(1, 16, 8, stride=2, padding=2), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Conv2d(16, 32, 4, stride=2), nn.Tanh(), nn.MaxPool2d(2, 1),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 32), nn.Tanh(), nn.Linear(32, 10)))
    assert sum(p.numel() for p in model.parameters()) == 26010
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=4.0, momentum=0.9), noise_multiplier=1.0,
                            max_grad_norm=0.1, expected_batch_size=batch)
    loss = nn.CrossEntropyLoss()
    q = batch / n

    def step():
        rows = (torch.rand(n) < q).nonzero().squeeze(1)  # Poisson sampling
        optimizer.zero_grad()
        loss(model(x[rows]), y[rows]).backward()
        optimizer.step()
        return rows.numel()

    for _ in range(3):
        step()
    seen, start = 0, time.perf_counter()
    for _ in range(steps):
        seen += step()
    return seen / (time.perf_counter() - start)


def dpx_train(dpx, arguments):
    out = subprocess.run([dpx, "train", "--data", "builtin:fashion-mnist", "--model", "cnn", "--mechanism", "dp-sgd",
                          "--optimizer", "momentum", "--eta", "4", "-L", "0.1", "--lambda", "0", "--json",
                          "--quiet"] + arguments, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dpx", help="the dpx binary (build/app/dpx)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--full", action="store_true", help="also time the 40-epoch Tramèr & Boneh run")
    a = ap.parse_args()

    peer = opacus_examples_per_second(a.batch, a.threads, a.steps)
    print(f"Opacus 1.4 (torch {__import__('torch').__version__}): {peer:.0f} examples/s "
          f"(batch {a.batch}, {a.threads} threads, {a.steps} steps)")
    ours = dpx_train(a.dpx, ["-m", str(a.batch), "--sigma", "1", "--epochs", "1", "--threads", str(a.threads)])
    rate = ours["examples_per_second"]
    print(f"DP Explorer: {rate:.0f} examples/s (batch {a.batch}, {a.threads} threads, one epoch, "
          f"{ours['training_seconds']:.2f} s)")
    print(f"ratio: {rate / peer:.1f}x")
    if a.full:
        start = time.perf_counter()
        run = dpx_train(a.dpx, ["-m", "2048", "--epochs", "40", "--target-epsilon", "3", "--delta", "1e-5",
                                "--threads", str(a.threads)])
        print(f"40 epochs at batch 2048 (ε = 3): {time.perf_counter() - start:.1f} s end to end, "
              f"{run['training_seconds']:.1f} s training, test accuracy {100 * run['test_accuracy']:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
