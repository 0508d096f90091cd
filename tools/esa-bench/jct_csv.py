#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A job's JCT row for esa-bench's jct.csv from its workers' esa-job -j
(columns: include/esa_csv.h, ESA_CSV_JCT).

usage: jct_csv.py POLICY RUN JOB WORKERS SIZE ITERATIONS ARRIVAL_MS WORKER_JSON...
       jct_csv.py --header
The job's JCT is its slowest worker's (each started at the job's arrival).
ok is 1 only if every worker finished every iteration with verified sums.
Exits 1 (after printing the row) when the job did not finish correctly.
"""
import sys
from bench_json import objects
from csv_schema import JCT_HEADER


def main(argv):
    if argv[1:] == ['--header']:
        print(JCT_HEADER)
        return 0
    policy, run, job, workers, size, iters, arrival = argv[1:8]
    files = argv[8:]
    reports = []
    for path in files:
        try:
            reports.extend(objects(path))
        except (OSError, ValueError) as e:
            print(f'esa-bench: {path}: {e}', file=sys.stderr)
    ok = (len(reports) == int(workers) and
          all(r.get('ok') and r.get('iterations_done') == int(iters) and
              r.get('verify', {}).get('mismatches', 1) == 0 for r in reports))
    jct = max((r.get('jct_ms', 0) for r in reports), default=0) / 1000.0
    print(f'{policy},{run},{job},{workers},{size},{iters},{arrival},{int(ok)},{jct:.3f}')
    if not ok:
        print(f'esa-bench: {policy} run {run}: job {job}: {len(reports)}/{workers} workers '
              'reported, not every one finished with verified sums', file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
