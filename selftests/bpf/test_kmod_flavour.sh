#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM test: the module flavour of the data plane with the module loaded.
# Jobs and policy are set through aggctl (generic netlink to the module);
# test_kmod_flavour then drives the program with BPF_PROG_TEST_RUN, once
# under policy esa and once under atp, and compares what the module
# accounted (aggctl stats) with the data plane's own counters. Job ids 1 and 2 are removed on exit.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AGG=$ROOT/build/tools/aggctl
T=$ROOT/build/selftests/bpf/test_kmod_flavour

if [ ! -d /sys/module/esa ] || [ ! -x "$AGG" ]; then
	echo "TAP version 13"
	echo "ok 1 # SKIP needs the esa module loaded and build/tools/aggctl"
	exit 0
fi
cleanup() {
	"$AGG" job del id 1 >/dev/null 2>&1
	"$AGG" job del id 2 >/dev/null 2>&1
	"$AGG" job del id 3 >/dev/null 2>&1
}
trap cleanup EXIT
cleanup
fail=0
# Reclaim off: under TCG the gaps between test runs exceed any short
# timeout a test before this one may have left, and would turn the
# preemptions checked here into reclaims.
if ! "$AGG" switch set slots 64 timeout 0 ||
   ! "$AGG" job add id 1 ps 10.77.1.1:47000 worker 10.77.1.10:40100 \
	worker 10.77.1.11:40101 priority 1 ||
   ! "$AGG" job add id 2 ps 10.77.2.1:47000 worker 10.77.2.10:40200 \
	worker 10.77.2.11:40201 priority 5; then
	echo "not ok 1 - configure the module with aggctl"
	exit 1
fi
for pol in esa atp; do
	"$AGG" policy set "$pol" || { echo "not ok 1 - policy $pol"; exit 1; }
	# each result names its policy ("ok N - esa: ..."): ksft's lines have
	# no " - ", TAP's may
	"$T" "$pol" "$AGG" |
		sed "s/^\(\(not \)\?ok [0-9]*\) \(- \)\?/\1 - $pol: /"
	[ "${PIPESTATUS[0]}" = 0 ] || fail=1
done
exit $fail
