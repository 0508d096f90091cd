#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The table of `make bench` (bench/allreduce.sh) from its runs.

    allreduce_table.py RESULTS.csv DATAPLANE_LINE KERNEL NPROC CPU LOAD0 LOAD1 OUTDIR

RESULTS.csv: policy,size,bytes,workers,run,gbps,cpu_ms_per_mib (gbps
"FAIL" for a failed run, cpu_ms_per_mib "-" where not measured). DATAPLANE_LINE: the last line of bench_dataplane ("" if skipped).
Prints the table and, last, the line
  bench goodput_vs_gloo=<x> goodput_vs_hostonly=<x> dataplane_ratio=<x>
(medians at the largest size with the most workers; "nan" where a figure is
missing). Writes OUTDIR/goodput.dat and, if gnuplot is there,
OUTDIR/goodput.png: median goodput against tensor size per policy and
worker count. Exit status 1 if any run failed.
"""
import collections
import csv
import math
import os
import shutil
import statistics
import subprocess
import sys

POLICIES = ("esa", "onearmed", "sharded", "hostonly", "gloo")
NAMES = {"esa": "esa switch", "onearmed": "esa one-armed",
         "sharded": "one-armed, 2 servers", "hostonly": "esa host-only",
         "gloo": "gloo"}


def parse_kv(line):
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def fmt(v):
    return "nan" if v is None or math.isnan(v) else f"{v:.2f}"


def trio(vals, digits=3):
    if not vals:
        return "-"
    return "/".join(f"{v:.{digits}f}" for v in
                    (min(vals), statistics.median(vals), max(vals)))


COLOURS = {"esa": "#1b9e77", "onearmed": "#e7298a", "sharded": "#66a61e",
           "hostonly": "#7570b3", "gloo": "#d95f02"}


def size_label(b):
    return f"{b >> 20}M" if b >= 1 << 20 else f"{b >> 10}K"


def plot(outdir, med, sizes, workers):
    dat = os.path.join(outdir, "goodput.dat")
    cols = [(p, w) for w in workers for p in POLICIES
            if any((p, s, w) in med for s in sizes)]
    with open(dat, "w") as f:
        f.write("# bytes size " + " ".join(f"{p}_{w}" for p, w in cols) + "\n")
        for s in sizes:
            row = [med.get((p, s, w), float("nan")) for p, w in cols]
            f.write(f"{s} {size_label(s)} " +
                    " ".join(f"{v:.4f}" for v in row) + "\n")
    if not shutil.which("gnuplot") or not cols:
        return None
    png = os.path.join(outdir, "goodput.png")
    dash = {w: i + 1 for i, w in enumerate(workers)}
    lines = ", ".join(
        f"'{dat}' using 1:{i + 3}:xtic(2) with linespoints lw 2 "
        f"lc rgb '{COLOURS[p]}' dt {dash[w]} pt {dash[w] + 4} "
        f"title '{NAMES[p]}, {w} workers'"
        for i, (p, w) in enumerate(cols))
    script = f"""set terminal pngcairo size 900,520 noenhanced
set output '{png}'
set logscale x 2
set xlabel 'allreduce size (bytes)'
set ylabel 'goodput, Gbit/s of tensor per worker (median)'
set yrange [0:*]
set offsets graph 0.04, graph 0.04, 0, 0
set key outside right top
set grid
plot {lines}
"""
    r = subprocess.run(["gnuplot"], input=script, text=True,
                       capture_output=True)
    return png if r.returncode == 0 else None


def shard_ratios(med, cpu, sizes, workers):
    """One-armed over 2 servers against 1: the ratios of the medians."""
    rows = [(s, w) for s in sizes for w in workers
            if med.get(("sharded", s, w)) and med.get(("onearmed", s, w))]
    if not rows:
        return
    print("2 servers against 1 (one-armed), ratio of the medians")
    print(f"{'size':>9} {'workers':>7}  {'goodput':>8} {'CPU/MiB':>8}")
    for s, w in rows:
        g = med[("sharded", s, w)] / med[("onearmed", s, w)]
        c2, c1 = cpu.get(("sharded", s, w)), cpu.get(("onearmed", s, w))
        c = statistics.median(c2) / statistics.median(c1) if c2 and c1 else None
        size = f"{s >> 20}MiB" if s >= 1 << 20 else f"{s >> 10}KiB"
        print(f"{size:>9} {w:>7}  {fmt(g):>8} {fmt(c):>8}")


def main():
    if len(sys.argv) != 9:
        sys.exit(__doc__)
    res, dp_line, kernel, nproc, cpu_model, load0, load1, outdir = sys.argv[1:]
    runs = collections.defaultdict(list)
    cpu = collections.defaultdict(list)
    failed = 0
    with open(res) as f:
        for r in csv.DictReader(f):
            key = (r["policy"], int(r["bytes"]), int(r["workers"]))
            if r["gbps"] == "FAIL":
                failed += 1
                continue
            runs[key].append(float(r["gbps"]))
            if r["cpu_ms_per_mib"] != "-":
                cpu[key].append(float(r["cpu_ms_per_mib"]))
    sizes = sorted({k[1] for k in runs})
    workers = sorted({k[2] for k in runs})
    med = {k: statistics.median(v) for k, v in runs.items()}

    dp = parse_kv(dp_line) if dp_line else {}
    print(f"# machine: {cpu_model}, {nproc} CPUs, kernel {kernel}; "
          f"load average {load0} at the start, {load1} at the end")
    if dp:
        print(f"data plane: {dp.get('add_ns')} ns per packet at "
              f"{dp.get('values')} values, C loop {dp.get('cloop_ns')} ns, "
              f"ratio {dp.get('ratio')}")
    print("allreduce goodput, Gbit/s of tensor per worker, "
          "min/median/max over runs")
    hdr = f"{'size':>9} {'workers':>7}  " + "  ".join(
        f"{NAMES[p]:>20}" for p in POLICIES) + f"  {'vs gloo':>7} {'vs host':>7}"
    print(hdr)
    for s in sizes:
        for w in workers:
            cells = [trio(runs.get((p, s, w), [])) for p in POLICIES]
            esa = med.get(("esa", s, w))
            vg = esa / med[("gloo", s, w)] if esa and med.get(("gloo", s, w)) else None
            vh = esa / med[("hostonly", s, w)] if esa and med.get(("hostonly", s, w)) else None
            size = f"{s >> 20}MiB" if s >= 1 << 20 else f"{s >> 10}KiB"
            print(f"{size:>9} {w:>7}  " + "  ".join(f"{c:>20}" for c in cells) +
                  f"  {fmt(vg):>7} {fmt(vh):>7}")
    print("CPU ms per MiB of tensor (the run's processes), "
          "min/median/max over runs")
    print(f"{'size':>9} {'workers':>7}  " + "  ".join(
        f"{NAMES[p]:>20}" for p in POLICIES))
    for s in sizes:
        for w in workers:
            size = f"{s >> 20}MiB" if s >= 1 << 20 else f"{s >> 10}KiB"
            print(f"{size:>9} {w:>7}  " + "  ".join(
                f"{trio(cpu.get((p, s, w), []), 1):>20}" for p in POLICIES))
    shard_ratios(med, cpu, sizes, workers)
    if failed:
        print(f"# {failed} runs FAILED (see the messages above)")
    png = plot(outdir, med, sizes, workers)
    if png:
        print(f"# plot: {png}")
    top = (max(sizes), max(workers)) if sizes else (0, 0)
    esa = med.get(("esa",) + top)
    g = med.get(("gloo",) + top)
    h = med.get(("hostonly",) + top)
    print(f"bench goodput_vs_gloo={fmt(esa / g if esa and g else None)} "
          f"goodput_vs_hostonly={fmt(esa / h if esa and h else None)} "
          f"dataplane_ratio={dp.get('ratio', 'nan')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
