#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The table of `make demo-torch` from the files ddp_netns.sh leaves.

usage: ddp_report.py DIR RUNS JOB

For run i (1..RUNS) and comm in esa, gloo: DIR/<comm><i>.r<r>.json (one
JSON object per rank, train_digits.py), DIR/<comm><i>.job0/.job1 and
.all0/.all1 (aggctl -j stats of the job and of the switch, before and
after). Prints accuracy, ms per step and the switch's counters of each
run, min/median/max of ms per step over the runs, and last:
  torch esa_acc=<a> gloo_acc=<a> esa_ms_per_step=<t> gloo_ms_per_step=<t>
(accuracy of the first run, ms per step the medians). Exit 1 if a run is
incomplete or its ranks disagree on the parameters.
"""
import glob
import json
import statistics
import sys

COMMS = ("esa", "gloo")
JOB = None      # the job's id (argv)
# Switch counters shown: the job's for esa, the switch's for gloo (its
# TCP is forwarded at L2, not aggregated).
JOB_KEYS = ("rx", "aggregated", "completed", "results", "resends",
            "preemptions", "overflows")
ALL_KEYS = ("forwarded",)


def load(path):
    with open(path) as f:
        return json.load(f)


def counters(path, job):
    """The data plane counters of job (an id or "all") in aggctl -j stats:
    one object (maps flavour) or a list of records (module flavour)."""
    j = load(path)
    recs = j if isinstance(j, list) else [j]
    return next(r for r in recs if str(r.get("job")) == job)["dataplane"]


def delta(d, name, kind, keys):
    job = JOB if kind == "job" else "all"
    a = counters("%s/%s.%s0" % (d, name, kind), job)
    b = counters("%s/%s.%s1" % (d, name, kind), job)
    return {k: b[k] - a[k] for k in keys}


def run_of(d, comm, i):
    name = "%s%d" % (comm, i)
    ranks = []
    for f in sorted(glob.glob("%s/%s.r*.json" % (d, name))):
        try:
            ranks.append(load(f))
        except (OSError, ValueError):
            return None, "%s: no result (see %s)" % (f, f[:-5] + ".err")
    if not ranks:
        return None, "%s: no rank's result" % name
    shas = {r["params_sha256"] for r in ranks}
    accs = {r["accuracy"] for r in ranks}
    if len(shas) != 1 or len(accs) != 1:
        return None, "%s: ranks disagree: %d parameter sets" % (name, len(shas))
    counters = delta(d, name, "job", JOB_KEYS)
    counters.update(delta(d, name, "all", ALL_KEYS))
    hook = ranks[0].get("hook") or {}
    return dict(comm=comm, run=i, ranks=len(ranks), accuracy=ranks[0]["accuracy"],
                ms=statistics.mean(r["ms_per_step"] for r in ranks),
                steps=ranks[0]["steps"], counters=counters,
                overflow_buckets=hook.get("overflow_buckets", 0),
                fallback_buckets=hook.get("fallback_buckets", 0),
                fallbacks=hook.get("fallbacks", 0),
                returns=hook.get("returns", 0),
                away_s=hook.get("switch_downtime_s", 0.0),
                resends=sum((r.get("hook") or {}).get("endpoint", {})
                            .get("resends", 0) for r in ranks)), None


def main():
    global JOB
    d, runs, JOB = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rows, bad = [], []
    for i in range(1, runs + 1):
        for comm in COMMS:
            row, why = run_of(d, comm, i)
            if row:
                rows.append(row)
            else:
                bad.append(why)
    print("%-4s %-5s %5s %8s %7s %6s  %s" % ("run", "comm", "ranks", "accuracy",
                                             "ms/step", "steps", "switch counters (delta)"))
    for r in rows:
        c = r["counters"]
        keys = JOB_KEYS if r["comm"] == "esa" else ALL_KEYS
        extra = (" hook: overflow_buckets=%d fallback_buckets=%d resends=%d"
                 % (r["overflow_buckets"], r["fallback_buckets"], r["resends"])
                 if r["comm"] == "esa" else "")
        if r["comm"] == "esa" and (r["fallbacks"] or r["returns"]):
            extra += (" fallbacks=%d returns=%d switch_downtime_s=%.1f"
                      % (r["fallbacks"], r["returns"], r["away_s"]))
        print("%-4d %-5s %5d %7.2f%% %7.2f %6d  %s%s" % (
            r["run"], r["comm"], r["ranks"], r["accuracy"], r["ms"], r["steps"],
            " ".join("%s=%d" % (k, c[k]) for k in keys), extra))
    for why in bad:
        print("ddp_report: %s" % why, file=sys.stderr)
    summary = {}
    for comm in COMMS:
        ms = [r["ms"] for r in rows if r["comm"] == comm]
        acc = [r["accuracy"] for r in rows if r["comm"] == comm]
        if not ms:
            continue
        summary[comm] = (acc[0], statistics.median(ms))
        print("%s: accuracy %s%%, ms/step min/median/max %.2f / %.2f / %.2f over %d run(s)"
              % (comm, "/".join("%.2f" % a for a in sorted(set(acc))),
                 min(ms), statistics.median(ms), max(ms), len(ms)))
    if "esa" in summary and "gloo" in summary:
        if not bad:
            print("parameters bit-identical across the ranks of every run")
        print("esa/gloo ms per step (medians): %.2f"
              % (summary["esa"][1] / summary["gloo"][1]))
        print("torch esa_acc=%.2f gloo_acc=%.2f esa_ms_per_step=%.2f gloo_ms_per_step=%.2f"
              % (summary["esa"][0], summary["gloo"][0], summary["esa"][1],
                 summary["gloo"][1]))
    return 1 if bad or len(summary) < 2 else 0


if __name__ == "__main__":
    sys.exit(main())
