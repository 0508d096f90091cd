#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""esa-bench's closing table and line.

usage: summary.py JCT_CSV STATS_CSV SLOTS
       summary.py --sweep-row SLOTS JOBS JCT_CSV POLICY...

The table has each job's JCT per policy (the mean over runs) and each policy's switch memory
utilisation: the mean, over the samples taken while jobs ran, of the share
of the aggregator array held. The last line is
  avg_jct esa=<s> atp=<s> static=<s> speedup_esa_vs_atp=<x>
(policies that did not run are left out; the speedup needs esa and atp).
Exits 1 if any job did not finish with verified sums.
"""
import csv
import sys


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def avg_jct(rows):
    """policy -> mean JCT over its jobs and runs, in order of appearance."""
    out = {}
    for r in rows:
        out.setdefault(r['policy'], []).append(float(r['jct_s']))
    return {p: sum(v) / len(v) for p, v in out.items()}


def utilisation(stats, slots):
    """policy -> mean share of the array held over samples with any holder."""
    per_t = {}
    for r in stats:
        key = (r['policy'], r['run'], r['t_s'])
        per_t[key] = per_t.get(key, 0) + int(r['occupancy'])
    out = {}
    for (p, _, _), held in per_t.items():
        out.setdefault(p, []).append(held / slots)
    return {p: sum(v) / len(v) for p, v in out.items() if v}


FINAL_COUNTERS = ('collisions', 'preemptions', 'evictions', 'stranded', 'stranded_us')
# Rows of the table: (label, counter, divisor)
COUNTER_ROWS = (('collis', 'collisions', 1), ('preemp', 'preemptions', 1),
                ('strand', 'stranded', 1), ('strd_s', 'stranded_us', 1e6))


def final_counters(stats):
    """policy -> {counter: mean over runs of the total over jobs}, from each
    job's last sample of each run."""
    last = {}
    for r in stats:
        key = (r['policy'], r['run'], r['job'])
        if key not in last or float(r['t_s']) >= float(last[key]['t_s']):
            last[key] = r
    out, runs = {}, {}
    for (p, run, _), r in last.items():
        tot = out.setdefault(p, {})
        runs.setdefault(p, set()).add(run)
        for k in FINAL_COUNTERS:
            tot[k] = tot.get(k, 0) + int(r[k])
    return {p: {k: v // len(runs[p]) for k, v in tot.items()}
            for p, tot in out.items()}


def secs(v):
    """A JCT in seconds: milliseconds above 0.1 s, 4 significant digits
    below (esa-sim's virtual runs at 100 Gbit/s last milliseconds)."""
    return f'{v:.3f}' if v >= 0.1 else f'{v:#.4g}'


def closing_line(avg):
    parts = [f'{p}={secs(avg[p])}' for p in avg]
    if 'esa' in avg and 'atp' in avg and avg['esa'] > 0:
        parts.append(f'speedup_esa_vs_atp={avg["atp"] / avg["esa"]:.3f}')
    return 'avg_jct ' + ' '.join(parts)


def main(argv):
    if argv[1] == '--sweep-row':
        slots, jobs, path, policies = argv[2], argv[3], argv[4], argv[5:]
        avg = avg_jct(read(path))
        cols = [secs(avg[p]) if p in avg else '' for p in policies]
        ratio = (f'{avg["atp"] / avg["esa"]:.3f}'
                 if 'esa' in avg and 'atp' in avg and avg['esa'] > 0 else '')
        print(','.join([slots, jobs] + cols + [ratio]))
        return 0
    jct, stats, slots = read(argv[1]), read(argv[2]), int(argv[3])
    policies = list(dict.fromkeys(r['policy'] for r in jct))
    jobs = list(dict.fromkeys(r['job'] for r in jct))
    by = {}
    for r in jct:
        by.setdefault((r['policy'], r['job']), []).append(r)
    util = utilisation(stats, slots)
    print(f'{"job":>6}' + ''.join(f'{p + " JCT (s)":>16}' for p in policies))
    for j in jobs:
        cells = []
        for p in policies:
            rs = by.get((p, j))
            if not rs:
                cells.append('-')
                continue
            mean = sum(float(r['jct_s']) for r in rs) / len(rs)
            failed = any(r['ok'] != '1' for r in rs)
            cells.append(secs(mean) + (' FAILED' if failed else ''))
        print(f'{j:>6}' + ''.join(f'{c:>16}' for c in cells))
    avg = avg_jct(jct)
    print(f'{"avg":>6}' + ''.join(f'{secs(avg[p]):>16}' for p in policies))
    print(f'{"mem%":>6}' + ''.join(f'{100 * util.get(p, 0):>15.1f}%' for p in policies))
    final = final_counters(stats)
    for label, k, div in COUNTER_ROWS:
        cells = [final.get(p, {}).get(k, 0) / div for p in policies]
        print(f'{label:>6}' + ''.join(f'{c:>16.3f}' if div != 1 else f'{c:>16.0f}' for c in cells))
    print(closing_line(avg))
    return 0 if all(r['ok'] == '1' for r in jct) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
