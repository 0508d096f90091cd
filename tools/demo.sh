#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the default multi-job scenario under esa, atp and static.
#
# Where the switch runs:
#   VM=1                 inside the Debian test VM (KERNEL=6.1 or 6.12), with
#                        the esa module (scripts/vm-run.sh loads it), module
#                        flavour;
#   a module built for the running kernel and module loading available:
#                        insmod build/kmod/$(uname -r)/esa.ko here, module
#                        flavour;
#   otherwise            natively with the module-less flavour (this is said).
# Results (CSV, PNG, table) go to build/demo (ESA_DEMO_OUT), or from the VM
# (whose view of the tree is read-only) through scripts/vm-run.sh's
# ESA_VM_OUT to build/demo-vm. esa-bench keeps its directory to one run and
# marks a run cut short PARTIAL; a demo stopped with Ctrl-C stops there
# (the module it loaded unloaded), says so, and runs nothing more.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCENARIO=${SCENARIO:-$ROOT/tools/esa-bench/scenarios/default.scn}
# Each policy runs this often, interleaved: one run of a 2-core machine is
# noisy, the mean of three is steadier and still takes a few minutes.
REPEAT=${REPEAT:-3}

if [ "${1:-}" = --in-vm ]; then
	# Inside the VM (started below): the host's settings came as ESA_DEMO_*
	# (scripts/vm-run.sh passes ESA_* variables on). A scenario the guest
	# cannot see (/tmp, /run and /var/tmp are the guest's own) is
	# rewritten from its text.
	SCENARIO=${ESA_DEMO_SCENARIO:-$SCENARIO}
	REPEAT=${ESA_DEMO_REPEAT:-$REPEAT}
	if [ ! -r "$SCENARIO" ] && [ -n "${ESA_DEMO_SCENARIO_TEXT:-}" ]; then
		mkdir -p /tmp/esa-demo-scenario
		SCENARIO=/tmp/esa-demo-scenario/$(basename "$SCENARIO")
		printf '%s\n' "$ESA_DEMO_SCENARIO_TEXT" > "$SCENARIO"
	fi
	cd "$ROOT" || exit 1
	exec tools/esa-bench/esa-bench --repeat "$REPEAT" \
		-o "${ESA_VM_OUT:-/tmp}/demo" "$SCENARIO"
fi

DEMO_OUT=${ESA_DEMO_OUT:-$ROOT/build/demo}
# Ctrl-C reaches esa-bench (it marks its results PARTIAL and exits); the
# demo then stops too instead of going on with the next part.
STOPPED=
trap 'STOPPED=SIGINT' INT
trap 'STOPPED=SIGTERM' TERM
stopped() { # what was running
	[ -n "$STOPPED" ] || return 1
	echo "demo: stopped by $STOPPED during $1; nothing more is run" >&2
	return 0
}

[ -r "$SCENARIO" ] || { echo "demo: cannot read the scenario '$SCENARIO'" >&2; exit 2; }
SCENARIO=$(readlink -f "$SCENARIO")
cd "$ROOT" || exit 1

# The same policies at paper scale in virtual time (tools/esa-sim,
# Documentation/esa-sim.rst): 100 Gbit/s links and scarce aggregator
# memory, a regime this machine cannot reach in real time. Its line
# (sim_avg_jct ...) goes before the real-time run's closing line, which is
# printed again so that it stays the last line.
sim_part() { # SUMMARY_TXT of the real-time run
	local line
	echo "demo: the same policies at paper scale in virtual time" \
	     "(tools/esa-sim/scenarios/demo.scn, results in build/demo-sim)"
	line=$(build/tools/esa-sim --quiet -o "$ROOT/build/demo-sim" \
		tools/esa-sim/scenarios/demo.scn | tail -n 1)
	if [[ "$line" == "avg_jct "* ]]; then
		echo "sim_$line"
	else
		echo "demo: FAILED: esa-sim (its messages above; build/demo-sim)" >&2
		rc=1
	fi
	[ -s "$1" ] && tail -n 1 "$1"
}

if [ "${VM:-0}" = 1 ]; then
	echo "demo: running in the Debian 6.1 VM with the esa module (TCG: slower than native);" \
	     "results to build/demo-vm"
	rm -rf "$ROOT/build/demo-vm"
	# About 5 minutes per repeat of the default scenario under TCG; twice
	# that for a loaded machine.
	ESA_VM_TIMEOUT=${ESA_VM_TIMEOUT:-$((600 + 600 * REPEAT))} \
	ESA_DEMO_SCENARIO=$SCENARIO ESA_DEMO_REPEAT=$REPEAT \
	ESA_DEMO_SCENARIO_TEXT=$(cat "$SCENARIO") \
	ESA_VM_OUTDIR=$ROOT/build/demo-vm scripts/vm-run.sh "tools/demo.sh --in-vm"
	rc=$?
	stopped "the VM run" && exit 130
	case $rc in
	0) ;;
	125) echo "demo: FAILED: the VM run (vm-run's FAIL line above says why)" >&2 ;;
	*) echo "demo: FAILED: esa-bench in the VM exited with status $rc" \
		"(its FAILED lines above name the step)" >&2 ;;
	esac
	for f in summary.txt jct.csv stats.csv jct.png occupancy.png; do
		[ -s "$ROOT/build/demo-vm/demo/$f" ] && continue
		echo "demo: FAILED: the results did not come back from the VM" \
		     "(no build/demo-vm/demo/$f)" >&2
		[ $rc = 0 ] && rc=1
	done
	sim_part "$ROOT/build/demo-vm/demo/summary.txt"
	exit $rc
fi

KO=build/kmod/$(uname -r)/esa.ko	# the module for this kernel, if built
loaded_here=0
if [ -d /sys/module/esa ]; then
	echo "demo: the esa module is loaded: module flavour"
elif [ -e /proc/modules ] && [ -e "$KO" ]; then
	echo "demo: loading $KO into the running kernel: module flavour"
	insmod "$KO" || { echo "demo: insmod failed" >&2; exit 1; }
	loaded_here=1
else
	echo "demo: no esa module built for this kernel ($(uname -r)," \
	     "make kmod KERNEL=...): running the module-less flavour natively," \
	     "priorities from the packets (make demo VM=1 runs it with the module)"
fi
tools/esa-bench/esa-bench --repeat "$REPEAT" -o "$DEMO_OUT" "$SCENARIO"
rc=$?
[ $loaded_here = 1 ] && { rmmod esa || echo "demo: rmmod esa failed" >&2; }
stopped "esa-bench (its results in $DEMO_OUT are PARTIAL)" && exit 130
[ $rc = 0 ] || echo "demo: FAILED: esa-bench exited with status $rc" \
	"(its FAILED lines above name the step)" >&2
sim_part "$DEMO_OUT/summary.txt"
exit $rc
