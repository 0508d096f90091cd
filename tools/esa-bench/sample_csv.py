#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One esa-bench sample as CSV rows of stats.csv, one per job.

usage: sample_csv.py POLICY RUN T_S OCCUPANCY_JSON STATS_JSON JOB...
       sample_csv.py --header
The counters are the data plane's running totals for the job
(Documentation/esa-bench.rst); --header prints the column names, which
include/esa_csv.h defines.
"""
import sys
from bench_json import objects
from csv_schema import STATS_COUNTERS as COUNTERS, STATS_HEADER as HEADER


def main(argv):
    if argv[1:] == ['--header']:
        print(HEADER)
        return 0
    policy, run, t_s, occ_path, stats_path, jobs = argv[1], argv[2], argv[3], argv[4], argv[5], argv[6:]
    occ = {str(o.get('job')): o.get('occupancy', 0) for o in objects(occ_path)}
    stats = {}
    for o in objects(stats_path):
        if 'dataplane' in o:
            stats[str(o.get('job'))] = o['dataplane']
    for j in jobs:
        c = stats.get(j, {})
        print(','.join([policy, run, t_s, j, str(occ.get(j, 0))] +
                       [str(c.get(k, 0)) for k in COUNTERS]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
