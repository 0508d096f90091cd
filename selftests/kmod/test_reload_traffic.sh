#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module unload and reload with jobs configured and traffic flowing (in
# the VM, the module loaded): each cycle attaches the module-flavour data
# plane to a PS and two worker hosts, registers a job, starts it, and once
# the switch aggregates its packets tries what an operator would: rmmod
# while the data plane runs (refused: the data plane's kfunc programs hold
# the module, and the test says so), then `aggctl switch unload` and
# rmmod again, which may have to wait for the released programs to drop
# their module reference (an RCU grace period: how long is reported), then
# insmod. A fresh module has no job; at the end the kmalloc objects in
# use are where they were after the first cycle.
#
# usage: test_reload_traffic.sh [CYCLES]   (default 3; the figure in
# Documentation/reliability.rst runs 100)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"
CYCLES=${1:-3}
AGG=$ROOT/build/tools/aggctl
ESA_JOB=$ROOT/build/tools/esa-job
ESA_PS=$ROOT/build/tools/esa-ps
KO=$ROOT/build/kmod/$(uname -r)/esa.ko	# the module for this kernel (kmod/Makefile)

[ -d /sys/module/esa ] || { skip "module reload with traffic" "needs the esa module loaded (the VM)"; tap_done; }
[ -f "$KO" ] || bail "no $KO"

NET=198.18.$(( $$ % 200 + 20 ))
JOB=7
PIN=$(pin_path sw)
host_add ps "$NET.100/24" || bail "topology"
host_add w0 "$NET.1/24" || bail "topology"
host_add w1 "$NET.2/24" || bail "topology"
PORTS="dev $(port ps) dev $(port w0) dev $(port w1)"
# A failed cycle leaves the next a module without data plane or jobs.
recover() {
	stop_hosts
	"$AGG" -d "$PIN" switch detach $PORTS > /dev/null 2>&1
	"$AGG" -d "$PIN" switch unload > /dev/null 2>&1
	"$AGG" job del id $JOB > /dev/null 2>&1
}
cleanup_add rm -rf "$PIN"
cleanup_add "$AGG" job del id $JOB
# The module must be loaded when the test ends, as the VM list expects.
cleanup_add 'grep -q "^esa " /proc/modules || insmod '"$KO"

# kmalloc objects in use, after shrinking the caches (see genl_fuzz.c).
kmalloc_objects() {
	local c sum=0
	sleep 0.3
	for c in /sys/kernel/slab/kmalloc-*; do
		echo 1 > "$c/shrink" 2> /dev/null
		sum=$((sum + $(cut -d' ' -f1 "$c/objects")))
	done
	echo $sum
}

# The data plane's aggregated counter of the job (no python: slow in TCG).
aggregated() {
	local n
	n=$("$AGG" -d "$PIN" -j stats job $JOB 2> /dev/null | tr -d ' \n' |
		sed 's/.*"dataplane"://' | grep -o '"aggregated":[0-9]*' | cut -d: -f2)
	echo "${n:-0}"
}

stop_hosts() {
	local h
	for h in ps w0 w1; do
		ip netns pids "$(ns $h)" 2> /dev/null | xargs -r kill 2> /dev/null
	done
	sleep 0.2
}

# One cycle: "# " lines to show, and "FAIL: why" if it failed.
cycle() {
	local c=$1 a0 a1 t0 waited
	if ! grep -q '^esa ' /proc/modules; then
		insmod "$KO" 2>&1 || { echo "FAIL: insmod failed"; return 1; }
	fi
	[ -z "$("$AGG" job show 2>&1)" ] || { echo "FAIL: a fresh module has jobs: $("$AGG" job show 2>&1 | head -3)"; return 1; }
	"$AGG" -d "$PIN" switch attach $PORTS > /dev/null ||
		{ echo "FAIL: switch attach failed"; return 1; }
	"$AGG" -d "$PIN" job add id $JOB ps "$NET.100:47000" worker "$NET.1:$((47000 + JOB))" \
		worker "$NET.2:$((47000 + JOB))" priority 5 ||
		{ echo "FAIL: job add failed"; return 1; }
	in_ns w0 ping -c1 -W1 "$NET.100" > /dev/null 2>&1
	in_ns w1 ping -c1 -W1 "$NET.100" > /dev/null 2>&1
	in_ns ps "$ESA_PS" --bind "$NET.100" --job "$JOB:2" --size 64K --iterations 1000000 \
		--no-result-on-complete > /dev/null 2>&1 &
	udp_bound_wait ps 47000 || echo "# the PS did not bind $NET.100:47000 in 10 s"
	for w in 0 1; do
		in_ns w$w "$ESA_JOB" --job $JOB --worker $w --fan-in 2 --ps "$NET.100" \
			--bind "$NET.$((w + 1)):$((47000 + JOB))" --slots 4096 --window 16 \
			--size 64K --iterations 1000000 > /dev/null 2>&1 &
	done
	# traffic flowing: the job's aggregated counter rises
	a0=$(aggregated) t0=$SECONDS
	while a1=$(aggregated); [ "$a1" -le "$a0" ] || [ "$a1" -lt 100 ]; do
		[ $((SECONDS - t0)) -lt 60 ] || { stop_hosts; echo "FAIL: no traffic through the switch in 60 s"; return 1; }
		sleep 0.5
	done
	if rmmod esa 2> /dev/null; then
		stop_hosts
		echo "FAIL: rmmod succeeded under an attached data plane"
		return 1
	fi
	[ "$c" = 1 ] && echo "# rmmod refused while the data plane runs: its programs call the" \
		"module's kfuncs, holding $(cat /sys/module/esa/refcnt) reference(s)"
	"$AGG" -d "$PIN" switch detach $PORTS > /dev/null && "$AGG" -d "$PIN" switch unload > /dev/null ||
		{ stop_hosts; echo "FAIL: switch detach and unload failed"; return 1; }
	t0=$(date +%s%N) waited=0
	until rmmod esa 2> /dev/null; do
		[ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 10000 ] ||
			{ stop_hosts; echo "FAIL: rmmod still refused 10 s after the data plane went: refcnt $(cat /sys/module/esa/refcnt)"; return 1; }
		waited=1
		sleep 0.05
	done
	[ $waited = 1 ] && echo "# cycle $c: rmmod waited $(( ($(date +%s%N) - t0) / 1000000 )) ms:" \
		"the released programs drop their module reference after an RCU grace period"
	stop_hosts
	grep -q '^esa ' /proc/modules && { echo "FAIL: still loaded after rmmod"; return 1; }
	"$AGG" job show > /dev/null 2>&1 && { echo "FAIL: the esa family answers after rmmod"; return 1; }
	return 0
}

fails=0 objs_first=
for ((c = 1; c <= CYCLES; c++)); do
	out=$(cycle "$c" 2>&1)
	grep '^# ' <<< "$out"
	why=$(grep '^FAIL: ' <<< "$out" | head -n1)
	if [ -n "$why" ]; then
		not_ok "cycle $c: ${why#FAIL: }"
		fails=$((fails + 1))
		recover
		grep -q '^esa ' /proc/modules || insmod "$KO"
		[ $fails -lt 3 ] || break
	fi
	[ "$c" = 1 ] && objs_first=$(kmalloc_objects)
done
grep -q '^esa ' /proc/modules || insmod "$KO" || bail "insmod after the cycles"
[ $fails = 0 ] && ok "$CYCLES unload/reload cycles with a job configured and traffic flowing"
objs_last=$(kmalloc_objects)
diag "kmalloc objects in use: after cycle 1 $objs_first, after cycle $CYCLES $objs_last"
if [ "$CYCLES" -ge 10 ]; then
	check "no kmalloc objects left behind by $((CYCLES - 1)) cycles ($((objs_last - objs_first)))" \
		[ $((objs_last - objs_first)) -le 256 ]
fi
tap_done
