#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""When the CPUs sat idle during an allreduce, and what ran meanwhile, from
a system-wide sched_switch trace (bench/profile_allreduce.sh
with SCHED=1; Documentation/profile.rst, "Where the idle time goes").

    perf script -F cpu,time,trace -i sched.data | sched_idle.py --comm C...

The window is from the first to the last switch of a task named as the
first C, the workers (the endpoints run under names of their own). Prints, per CPU, the time it was
idle in that window, the number of idle gaps and their median and 90th
percentile; then, over all CPUs, what ran on another CPU while one was
idle (an endpoint by name and pid, others by name), and the CPU time of
every task in the window. An idle CPU while another one runs a single
endpoint says the allreduce waits on a chain of work that runs in one
task's context at a time.
"""
import argparse
import bisect
import collections
import math
import re
import statistics
import sys

SWITCH = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):.*prev_comm=(.*?) prev_pid=(\d+)"
                    r".*next_comm=(.*?) next_pid=(\d+)")


def timelines(lines):
    """Per CPU, the (start, end, task) it ran, task None when idle."""
    tl = collections.defaultdict(list)
    cur = {}
    for line in lines:
        m = SWITCH.match(line)
        if not m:
            continue
        cpu, t = int(m[1]), float(m[2])
        if cpu in cur:
            tl[cpu].append((cur[cpu][1], t, cur[cpu][0]))
        pid = int(m[6])
        cur[cpu] = ((m[5], pid) if pid else None, t)
    return tl


def label(task, ours):
    if task is None:
        return "idle"
    return f"{task[0]}[{task[1]}]" if task[0] in ours else task[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--comm", nargs="+", required=True,
                    help="command names of the endpoints")
    a = ap.parse_args()
    ours = set(a.comm)
    tl = timelines(sys.stdin)
    ends = [t for spans in tl.values() for s, e, task in spans
            if task and task[0] == a.comm[0] for t in (s, e)]
    if not ends:
        sys.exit(f"sched_idle: no task named {a.comm[0]} in the trace")
    t0, t1 = min(ends), max(ends)
    cut = {c: [(max(s, t0), min(e, t1), k) for s, e, k in spans if e > t0 and s < t1]
           for c, spans in tl.items()}
    print(f"window: {1e3 * (t1 - t0):.0f} ms from the first to the last switch of {a.comm[0]}")
    meanwhile = collections.Counter()
    for c in sorted(cut):
        gaps = [(s, e) for s, e, k in cut[c] if k is None]
        d = sorted(e - s for s, e in gaps)
        if not d:
            print(f"cpu {c}: never idle")
            continue
        print(f"cpu {c}: idle {1e3 * sum(d):.0f} ms ({100 * sum(d) / (t1 - t0):.0f} %) in "
              f"{len(d)} gaps, median {1e6 * statistics.median(d):.0f} us, "
              f"90th percentile {1e6 * d[math.ceil(0.9 * len(d)) - 1]:.0f} us")
        for o in cut:
            if o == c:
                continue
            starts = [sp[0] for sp in cut[o]]
            for s, e in gaps:
                i = max(bisect.bisect_right(starts, s) - 1, 0)
                for os_, oe, k in cut[o][i:]:
                    if os_ >= e:
                        break
                    ov = min(e, oe) - max(s, os_)
                    if ov > 0:
                        meanwhile[label(k, ours)] += ov
    print("while a CPU was idle, another one ran:")
    for k, v in meanwhile.most_common(8):
        print(f"  {k:32} {1e3 * v:8.0f} ms")
    run = collections.Counter()
    for spans in cut.values():
        for s, e, k in spans:
            run[label(k, ours)] += e - s
    print("CPU time in the window:")
    for k, v in run.most_common(12):
        print(f"  {k:32} {1e3 * v:8.0f} ms")


if __name__ == "__main__":
    main()
