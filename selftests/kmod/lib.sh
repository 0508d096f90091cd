# SPDX-License-Identifier: GPL-2.0
# Helpers of the module tests (sourced; TAP from selftests/lib/tap.sh).
# Paths are from the repo root.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
AGGCTL=${AGGCTL:-build/tools/aggctl}
RAW=build/selftests/kmod/genl_raw
PROBE=build/selftests/kmod/kfunc_probe

flat() { tr '\n' ' ' <<< "$1" | cut -c1-400; }

# expect DESC RC REGEX CMD...: CMD exits RC and its output matches REGEX.
expect() {
	local desc=$1 rc=$2 pat=$3 out r
	shift 3
	out=$("$@" 2>&1)
	r=$?
	if [ "$r" = "$rc" ] && grep -qE -- "$pat" <<< "$out"; then
		ok "$desc"
	else
		not_ok "$desc: exit $r (want $rc), output: $(flat "$out")"
	fi
}

# same DESC A B: two strings are equal.
same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1: got '$(flat "$2")', want '$(flat "$3")'"
	fi
}

# Module state as one comparable string: every job, config, occupancy.
state() {
	$AGGCTL -j job show
	$AGGCTL -j switch show
	$AGGCTL -j occupancy
}

# Back to a known state: no jobs, policy esa, default settings, no data
# plane generation current (the probe's events, generation 0, count).
reset_module() {
	local id
	for id in $($AGGCTL job show | awk '$1 == "job" { print $2 }'); do
		$AGGCTL job del id "$id"
	done
	$AGGCTL policy set esa
	$AGGCTL switch set slots 4096 timeout 100000 aging 1000
	$RAW config-set dp-generation:u32:0 > /dev/null
}

# need_no_module WHAT: skip the test unless this host is module-less.
need_no_module() {
	if grep -q '^esa ' /proc/modules 2> /dev/null; then
		skip "$1" "the esa module is loaded here"
		tap_done
	fi
}

# A released BPF program drops its module reference a little later
# (RCU): rmmod esa, retried for a few seconds.
rmmod_retry() {
	local i
	for i in $(seq 1 50); do
		rmmod esa 2> /dev/null && return 0
		sleep 0.1
	done
	rmmod esa
}

need_module() {
	if ! grep -q '^esa ' /proc/modules; then
		echo "not ok 1 - the esa module is not loaded"
		exit 1
	fi
}

PY=$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
json_ok() { $PY -c 'import json,sys; json.loads(sys.stdin.read())' 2>/dev/null; }


# foreign_xdp_add IF: attach xdp_pass, an XDP program that is not ESA's,
# to port IF. Through bpftool, not `ip link set ... xdp obj`: iproute2's
# loader pins the object's maps under the bpffs it finds in /proc/mounts,
# which in a chroot names the mount by its path outside it. The pin goes
# once attached; the port holds the program.
foreign_xdp_add() {
	local pin=/sys/fs/bpf/esa-foreign-$$-$1 rc
	bpftool prog load build/selftests/kmod/xdp_pass.bpf.o "$pin" type xdp || return 1
	bpftool net attach xdp pinned "$pin" dev "$1"
	rc=$?
	rm -f "$pin"
	return $rc
}
