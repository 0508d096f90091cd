# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # the variables are the sourcer's
# Scenario files of esa-bench (sourced, bash), read by the simulator's
# parser: `esa-sim parse` (tools/esa-sim/scenario.c) validates a file
# against esa-bench's limits (scn_bench_limits: its testbed's jobs,
# workers, aggregators and sizes; none of the simulator's own keys) and
# prints it as the variables below. Every error names the file, line and
# key. Documentation/esa-bench.rst has the meaning of each key.
#
# After scn_load FILE [POLICIES] (POLICIES: a list that overrides the
# file's; returns non-zero and prints the reason on error):
#   SW_SLOTS SW_TIMEOUT_US SW_LOSS SW_INTERVAL_MS SW_VALUES SW_WINDOW
#   SW_POLICIES (array)   JOB_IDS (array, in file order)
#   JOB_WORKERS[id] JOB_SIZE[id] (bytes) JOB_ITERS[id] JOB_COMPUTE_MS[id]
#   JOB_ARRIVAL_MS[id] JOB_PRIO[id] ("auto" or 0..255)
#   SCN_MAX_SLOTS   the largest aggregator array esa-bench's switch has

ESA_SIM=${ESA_SIM:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/tools/esa-sim}

scn_load() {
	local out
	[ -x "$ESA_SIM" ] || { echo "esa-bench: $ESA_SIM is not built (make)" >&2; return 1; }
	out=$("$ESA_SIM" parse ${2:+--policy "$2"} "$1") || return 1
	JOB_IDS=() SW_POLICIES=()
	declare -gA JOB_WORKERS=() JOB_SIZE=() JOB_ITERS=() JOB_COMPUTE_MS=() \
		JOB_ARRIVAL_MS=() JOB_PRIO=()
	eval "$out"
}
