#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-sim's report for one output directory, with esa-bench's own
# summary and plots (the outputs have esa-bench's columns):
#   report.sh DIR SLOTS plots|no-plots
# writes DIR/summary.txt (and prints it), DIR/jct-cdf.csv and, with
# plots, DIR/occupancy.png, DIR/jct.png and DIR/jct-cdf.png. Exit status 1
# if a job did not finish with every sum right (summary.py's verdict).
set -u
SIM_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
BENCH_DIR=$SIM_DIR/../esa-bench
. "$BENCH_DIR/plot.sh"
DIR=$1 SLOTS=$2 MODE=$3
rc=0

/usr/bin/python3 "$BENCH_DIR/summary.py" "$DIR/jct.csv" "$DIR/stats.csv" "$SLOTS" \
	> "$DIR/summary.txt" || rc=1
cat "$DIR/summary.txt"
cdf_csv "$DIR/jct.csv" > "$DIR/jct-cdf.csv" || rc=1
if [ "$MODE" = plots ]; then
	command -v gnuplot > /dev/null || { echo "esa-sim: gnuplot is missing: run make deps (or --no-plots)" >&2; exit 1; }
	plot_occupancy "$DIR/stats.csv" "$DIR/occupancy.png" || rc=1
	plot_jct "$DIR/jct.csv" "$DIR/jct.png" || rc=1
	plot_cdf "$DIR/jct-cdf.csv" "$DIR/jct-cdf.png" || rc=1
fi
exit $rc
