#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Train a small CNN on scikit-learn's digits with DistributedDataParallel,
gradients summed through the ESA switch (--comm esa, the esa.torch hook) or
by gloo (--comm gloo, plain DDP). Documentation/pytorch.rst.

One process per rank, as torchrun starts them: RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT; with --comm esa the ESA_* variables of esa.torch
(the job registered with the switch). With the same --seed both variants
see the same initial weights and the same batches, so they differ only in
how gradients are summed. Progress on stderr; at the end one JSON object
on stdout: rank, comm, test accuracy, ms per step, the seconds from the
start to the first step (imports, rendezvous, data, DDP, the hook), a
SHA-256 of the parameters (equal on every rank) and the hook's counters.
"""
import time

STARTED = time.monotonic()     # before torch's import (a minute under TCG)

import argparse  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


class Net(nn.Module):
    """Two 3x3 convolutions, a pool and two dense layers: 38,282 weights."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--comm", choices=("esa", "gloo"), default="esa")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--batch", type=int, default=32, help="per rank")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bucket-kb", type=float, default=48,
                   help="DDP bucket size (several buckets per step)")
    p.add_argument("--loss-scale", type=float, default=1.0,
                   help="multiply the loss (and the gradients) by this and "
                   "divide the gradients back before the step: huge "
                   "gradients take the overflow path")
    p.add_argument("--nan-step", type=int, default=0,
                   help="make the loss NaN at this step (1 = first): its "
                   "gradients are not finite (the hook's fallback)")
    p.add_argument("--verify", action="store_true",
                   help="esa: check every bucket against gloo's sum")
    p.add_argument("--timeout-s", type=float, default=60,
                   help="gloo operations and each ESA bucket")
    p.add_argument("--progress", action="store_true",
                   help="a line per epoch and per 10 steps on stderr")
    return p.parse_args()


def shard(n_train, epoch, rank, world, batch, seed):
    """This rank's sample indices per step of an epoch (every rank the
    same number of steps; the same on both --comm variants)."""
    perm = np.random.default_rng(seed * 1000 + epoch).permutation(n_train)
    steps = n_train // (world * batch)
    mine = perm[rank::world][:steps * batch]
    return mine.reshape(steps, batch)


def params_sha256(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def main():
    args = parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    dist.init_process_group(
        "gloo", timeout=datetime.timedelta(seconds=args.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()

    digits = load_digits()
    x = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(digits.target)
    idx_train, idx_test = train_test_split(
        np.arange(len(y)), test_size=0.25, random_state=args.seed,
        stratify=digits.target)
    x_train, y_train = x[idx_train], y[idx_train]
    x_test, y_test = x[idx_test], y[idx_test]

    # Several buckets per step, so their sums overlap with the rest of the
    # backward pass: DDP's first bucket is 1 MiB unless this is set (which
    # DDP's source invites), and this model has 150 KiB of gradients.
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_kb * 1024)
    model = DDP(Net(), bucket_cap_mb=args.bucket_kb / 1024)
    hook = None
    if args.comm == "esa":
        import esa.torch
        hook = esa.torch.register(model, timeout_s=args.timeout_s,
                                  verify=args.verify or None)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    step_ms = []
    startup_s = time.monotonic() - STARTED
    for epoch in range(args.epochs):
        model.train()
        for i, batch in enumerate(shard(len(y_train), epoch, rank, world,
                                        args.batch, args.seed)):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = F.cross_entropy(model(x_train[batch]), y_train[batch])
            if len(step_ms) + 1 == args.nan_step:
                loss = loss * float("nan")
            (loss * args.loss_scale).backward()
            if args.loss_scale != 1.0:
                for p in model.parameters():
                    p.grad.div_(args.loss_scale)
            opt.step()
            step_ms.append((time.perf_counter() - t0) * 1e3)
            if args.progress and len(step_ms) % 10 == 0:
                print("rank %d step %d epoch %d loss %.4f" %
                      (rank, len(step_ms), epoch, loss.item()),
                      file=sys.stderr, flush=True)
    model.eval()
    with torch.no_grad():
        acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    stats = None
    if hook:
        hook.close()
        stats = hook.stats()
    # The first steps build DDP's buckets and warm caches: not counted.
    steady = step_ms[5:] or step_ms
    out = dict(rank=rank, world=world, comm=args.comm, seed=args.seed,
               epochs=args.epochs, steps=len(step_ms),
               startup_s=round(startup_s, 2),
               accuracy=round(100 * acc, 2),
               ms_per_step=round(float(np.mean(steady)), 3),
               ms_per_step_median=round(float(np.median(steady)), 3),
               params_sha256=params_sha256(model), hook=stats)
    print(json.dumps(out), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001: one clear line, then fail
        # (an error DDP rethrows carries a traceback after its first line)
        print("train_digits: rank %s: %s: %s" % (
            os.environ.get("RANK", "?"), type(e).__name__,
            str(e).strip().split("\n")[0]), file=sys.stderr, flush=True)
        sys.exit(1)
