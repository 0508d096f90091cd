#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One rank of a gloo allreduce benchmark, as PyTorch runs it: the baseline
of `make bench` (bench/allreduce.sh).

    gloo_allreduce.py --rank R --world N --master ADDR:PORT --size BYTES
                      --iterations K

Every rank allreduces a float32 tensor of --size bytes K times through
torch.distributed's gloo backend (TCP between the ranks, over whatever
network joins them: in the benchmark, the ESA switch's ports, forwarding
at layer 2). Each iteration starts after a barrier, so all ranks enter
together; its time is the all_reduce call alone. Prints one JSON object:
{"rank", "world", "size", "iterations": [{"iter", "allreduce_ms"}], "ok"}
with ok = every element equals the sum of the ranks' values (the values
are small integers, exact in float32). Exit status 0, 1 on a wrong sum,
2 on bad arguments. With --ready-file and --start-file (a profiler's
hooks, bench/profile_allreduce.sh) the rank creates the first
once it is connected and waits for the second before the first iteration.
"""
import argparse
import json
import os
import sys
import time

# Debian 13 builds torch without libuv, which its TCPStore asks for unless
# told otherwise (Documentation/pytorch.rst); older torch ignores this.
os.environ.setdefault("USE_LIBUV", "0")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="ADDR:PORT of rank 0's rendezvous")
    ap.add_argument("--size", type=int, required=True, help="bytes per allreduce")
    ap.add_argument("--iterations", type=int, default=1)
    ap.add_argument("--timeout-s", type=int, default=120,
                    help="rendezvous and collective timeout")
    ap.add_argument("--ready-file", help="create once connected")
    ap.add_argument("--start-file", help="wait for it before iterating")
    a = ap.parse_args()
    if not 0 <= a.rank < a.world or a.size <= 0 or a.size % 4 or a.iterations < 1:
        ap.error("need 0 <= rank < world, size a positive multiple of 4, iterations >= 1")

    import datetime
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://{a.master}",
                            rank=a.rank, world_size=a.world,
                            timeout=datetime.timedelta(seconds=a.timeout_s))
    n = a.size // 4
    want = float(sum(range(1, a.world + 1)))
    if a.ready_file:
        open(a.ready_file, "w").close()
    deadline = time.monotonic() + a.timeout_s
    while a.start_file and not os.path.exists(a.start_file):
        if time.monotonic() > deadline:
            sys.exit(f"gloo_allreduce: no {a.start_file} within {a.timeout_s} s")
        time.sleep(0.05)
    iters, ok = [], True
    for it in range(a.iterations):
        x = torch.full((n,), float(a.rank + 1), dtype=torch.float32)
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        ms = (time.perf_counter() - t0) * 1e3
        iters.append({"iter": it + 1, "allreduce_ms": round(ms, 3)})
        ok = ok and bool(torch.all(x == want))
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps({"rank": a.rank, "world": a.world, "size": a.size,
                      "iterations": iters, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
