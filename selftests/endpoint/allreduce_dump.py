#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One worker of an int32 job through libesa's Python binding: each
iteration sums a tensor drawn from (worker, iteration) and appends the
sums, raw int32, to --out, so that runs of the same job over different
switches can be compared byte for byte (e2e_shard.sh). Checks every sum
against the one computed here from every worker's tensor; exits 1 on a
mismatch or a failed allreduce (the library's error on stderr), 2 on bad
arguments.
"""
import argparse
import array
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "python"))
import esa  # noqa: E402


def tensor(worker, iteration, count):
    """Worker @worker's values of @iteration: any worker can redraw them.
    Below 2^24 in size, so that no sum of up to 32 workers saturates."""
    rng = random.Random(worker * 1000003 + iteration)
    return array.array("i", (rng.randrange(-(1 << 24), 1 << 24) for _ in range(count)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--worker", type=int, required=True)
    ap.add_argument("--fan-in", type=int, required=True)
    ap.add_argument("--ps", required=True)
    ap.add_argument("--bind", required=True)
    ap.add_argument("--switch", required=True, help="A[,B...]")
    ap.add_argument("--token", required=True, help="HEX16")
    ap.add_argument("--slots", type=int, required=True, help="per server")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--values", type=int, required=True, help="per packet")
    ap.add_argument("--count", type=int, required=True, help="values per iteration")
    ap.add_argument("--iterations", type=int, required=True)
    ap.add_argument("--out", required=True, help="the sums, raw int32")
    a = ap.parse_args()
    ep = esa.Endpoint(job_id=a.job, worker_id=a.worker, fan_in=a.fan_in,
                      ps=a.ps, bind=a.bind, switch=a.switch,
                      token=esa.parse_token(a.token), agg_slots=a.slots,
                      window=a.window, values_per_packet=a.values)
    bad = 0
    with ep, open(a.out, "wb") as out:
        for it in range(a.iterations):
            buf = tensor(a.worker, it, a.count)
            try:
                ep.allreduce(buf)
            except esa.Error as e:
                print(f"worker {a.worker}: iteration {it}: {e}", file=sys.stderr)
                return 1
            want = [sum(v) for v in zip(*(tensor(w, it, a.count)
                                          for w in range(a.fan_in)))]
            bad += sum(got != sum_ for got, sum_ in zip(buf, want))
            out.write(buf.tobytes())
    if bad:
        print(f"worker {a.worker}: {bad} sums differ from the inputs' sums",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
