#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Policy switched while traffic flows: the module flavour of the XDP switch
# attached with aggctl to veth ports in the root namespace, two jobs (2
# workers each, one PS) in network namespaces sharing 32 aggregators,
# and the policy flipped esa -> atp -> static -> esa (and the jobs'
# priorities changed) while they run. Every worker checks every sum
# (esa-job --verify); the module must have accounted both jobs' traffic.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
ESA_JOB=build/tools/esa-job
ESA_PS=build/tools/esa-ps
if [ ! -x "$ESA_JOB" ] || [ ! -x "$ESA_PS" ]; then
	not_ok "esa-job and esa-ps are built"
	tap_done
fi
. selftests/lib/topo.sh	# hosts in namespaces, cleanup at exit
PIN=$(pin_path kmod)
A="$AGGCTL -d $PIN"
NET="10.$((100 + $$ % 50)).$((($$ / 50) % 250))"
TMP=$(mktemp -d)
HOSTS=(1 10 11 12 13)		# 1: PS; 10, 11: job 1; 12, 13: job 2
host() { echo "h$1"; }		# topo.sh's name of host K
addr() { echo "$NET.$1"; }
in_host() { local k=$1; shift; in_ns "$(host "$k")" "$@"; }

# at exit, after the hosts (last added, first run): the data plane, the module
cleanup_add reset_module
cleanup_add rm -rf "$TMP"
cleanup_add "$A switch unload"
reset_module

devs=()
for k in "${HOSTS[@]}"; do
	host_add "$(host $k)" "$(addr $k)/24" || bail "host $k"
	devs+=(dev "$(port "$(host $k)")")
done
cleanup_add "$A switch detach ${devs[*]}"
cleanup_add '[ -n "${FLIP:-}" ] && kill "$FLIP"'
if out=$($A switch attach "${devs[@]}" capacity 256 2>&1); then
	ok "switch attach (module flavour) to 5 ports"
else
	not_ok "switch attach (module flavour) to 5 ports: $(flat "$out")"
	tap_done
fi
expect "switch show: kmod flavour and its ports" 0 "flavour kmod ports $(port "$(host 1)") " $A switch show
for k in 10 11 12 13; do
	in_host $k ping -c1 -W2 "$(addr 1)" > /dev/null 2>&1
done

$A switch set slots 64 timeout 20000
$A job add id 1 ps "$(addr 1):47000" worker "$(addr 10):47000" worker "$(addr 11):47000" quota 32
$A job add id 2 ps "$(addr 1):47000" worker "$(addr 12):47000" worker "$(addr 13):47000" quota 32

ITER=2
SIZE=128K
# one round: the PS and the four workers, every sum verified
round() {
	local j w k p rc=0 pids=()
	in_host 1 $ESA_PS --bind "$(addr 1)" --deadline-s 300 \
		--job "1:2@$(addr 10),$(addr 11)" --job "2:2@$(addr 12),$(addr 13)" \
		--iterations $ITER --size $SIZE -j > "$TMP/ps" 2>> "$TMP/ps.err" &
	local pspid=$!
	udp_bound_wait "$(host 1)" 47000 || echo "# the PS did not bind $(addr 1):47000 in 10 s"
	for j in 1 2; do
		for w in 0 1; do
			k=$((8 + 2 * j + w))
			# both jobs use indices 0..31: shared slots under esa/atp,
			# their own 32-slot slices under static
			in_host $k $ESA_JOB --job $j --worker $w --fan-in 2 \
				--ps "$(addr 1)" --bind "$(addr $k)" --slots 32 --window 16 \
				--iterations $ITER --size $SIZE --timeout-us 20000 \
				--max-resends 1000 --verify -j > "$TMP/j$j.w$w" 2>> "$TMP/j$j.w$w.err" &
			pids+=($!)
		done
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	wait $pspid || rc=1
	return $rc
}
: > "$TMP/flips"
(
	while :; do
		for p in atp static esa; do
			$A policy set $p || echo "policy set $p failed" >> "$TMP/flip.err"
			echo $p >> "$TMP/flips"
			# job records replaced under the readers as well
			$A job change id $((RANDOM % 2 + 1)) priority $((RANDOM % 256)) ||
				echo "job change failed" >> "$TMP/flip.err"
			sleep 0.2
		done
	done
) &
FLIP=$!
# rounds back to back until the policy went round twice (at most 30)
rc=0 rounds=0
while [ $rounds -lt 30 ] && [ "$(wc -l < "$TMP/flips")" -lt 6 ]; do
	round || { rc=1; break; }
	rounds=$((rounds + 1))
done
kill $FLIP 2> /dev/null
wait $FLIP 2> /dev/null
FLIP=
flips=$(wc -l < "$TMP/flips" 2> /dev/null || echo 0)
if [ $rc = 0 ]; then
	ok "2 jobs x 2 workers, $rounds rounds, every sum verified, across $flips policy changes"
else
	not_ok "jobs under policy changes failed"
	for f in "$TMP"/*.err; do [ -s "$f" ] && sed "s|^|# $(basename "$f"): |" "$f" | tail -5; done
fi
same "every policy change was accepted" "$(cat "$TMP/flip.err" 2> /dev/null)" ""
if [ "$flips" -ge 6 ]; then
	ok "the policy went round esa, atp and static twice during the traffic ($flips changes)"
else
	not_ok "only $flips policy changes happened during the run"
fi
agg() { $A -j stats job "$1" | $PY -c "import json,sys; print(json.load(sys.stdin)[0]['module']['aggregated'])"; }
a1=$(agg 1)
a2=$(agg 2)
if [ "${a1:-0}" -gt 0 ] && [ "${a2:-0}" -gt 0 ]; then
	ok "the module accounted aggregation of both jobs ($a1, $a2 packets)"
else
	not_ok "module accounting: job 1 aggregated '$a1', job 2 '$a2'"
fi
expect "attained service grew" 0 'attained [1-9]' $A job show id 1

# the attached program holds the module: rmmod is refused, aggctl says why
expect "switch show hints how to free the module" 0 'hint: [1-9][0-9]* BPF program\(s\) use the esa module; before rmmod esa: aggctl switch detach dev IF...; aggctl switch unload' \
	$A switch show
expect "rmmod refused while the switch is attached" 1 'in use' rmmod esa
expect "switch detach every port" 0 '^$' $A switch detach "${devs[@]}"
expect "switch unload" 0 '^$' $A switch unload
refs=
for _ in $(seq 50); do
	refs=$(cat /sys/module/esa/refcnt)
	[ "$refs" = 0 ] && break
	sleep 0.1
done
same "module references gone after detach and unload" "$refs" 0
expect "switch show: no data plane, no references" 0 'module-refs 0 dataplane no' $A switch show
tap_done