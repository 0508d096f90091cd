#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A job whose first window collides whole and is lost at its PS, through
# the real XDP switch on veth (Documentation/endpoints.rst, "Window,
# timeouts, results"): job 1's worker holds all 16 aggregators with
# partial sums (veth_peer.py; its other worker, host 13, never exists; no reclaim
# within the test), so under esa job 2's first window (2 workers x 16
# packets, the same priority) collides packet by packet and goes on to its
# PS, whose link loses both workers' 16 copies (drop_first_16 on the PS's
# veth, the first 16 of each sender whenever it starts; the tail drop of
# an incast). No result can come and no round trip was
# measured: each worker's first resend must follow the path's timeout
# (--timeout-us), not a fixed one (libesa waited 100 ms there). Checked
# by counts, not times: both workers' sums verified, the switch counted
# the collisions, each worker resent, and the workers' own records of the
# timeout their first resend waited for (esa-job's first_timeout_us) are
# the configured one (or 0 for one that the PS's pull made resend first).
. "$(dirname "$0")/lib.sh"
PEER=$ROOT/selftests/bpf/veth_peer.py
SLOTS=16
TIMEOUT_US=2000		# the workers' first timeout: 2 ms, far below 100 ms
HOLD=1 JOB=2
PSH=1 W0=10 W1=11 HOLDER=12
cleanup() {
	agg job del id $HOLD 2> /dev/null
	agg job del id $JOB 2> /dev/null
	topo_down
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "TAP version 13"
if [ "$(id -u)" != 0 ]; then
	skip "first window lost at the PS" "needs root (network namespaces, XDP)"
	tap_done
fi
require_tools
if [ -d /sys/module/esa ]; then
	skip "first window lost at the PS" "runs on the module-less switch (the host)"
	tap_done
fi
if [ ! -x "$AGGCTL" ] || [ ! -e "$DROP_DIR/drop_first_16.bpf.o" ]; then
	not_ok "aggctl and drop programs are built (make; make selftests)"
	tap_done
fi
PS=$(haddr $PSH)
topo_up $PSH $W0 $W1 $HOLDER || { not_ok "topology"; tap_done; }
topo_ping $W0 $PSH; topo_ping $W1 $PSH; topo_ping $HOLDER $PSH
check "switch: $SLOTS aggregators, no reclaim within the test, esa, jobs $HOLD and $JOB" \
	bash -c "'$AGGCTL' -d '$PIN' switch set slots $SLOTS timeout 60000000 &&
		 '$AGGCTL' -d '$PIN' policy set esa &&
		 '$AGGCTL' -d '$PIN' job add id $HOLD ps $PS:47000 \
			worker $(haddr $HOLDER):41000 worker $(haddr 13):41000 priority 1 &&
		 '$AGGCTL' -d '$PIN' job add id $JOB ps $PS:47000 \
			worker $(haddr $W0):47000 worker $(haddr $W1):47000 priority 1" ||
	tap_done

# Job 1's worker 0 claims every aggregator with a partial sum of its own.
seq 0 $((SLOTS - 1)) | awk '{ print "send", $1, $1 }' |
	ip netns exec "$(ns $HOLDER)" python3 "$PEER" script 0 "$(haddr $HOLDER)" 41000 \
		"$PS" 64 2 $HOLD > "$TMP/holder" 2>&1 &
holder=$!
for _ in $(seq 100); do
	[ "$(grep -c '^sent$' "$TMP/holder")" -ge $SLOTS ] && break
	sleep 0.05
done
held=$(agg -j occupancy job $HOLD | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(sum(r['occupancy'] for r in (j if isinstance(j, list) else [j])))")
check "job $HOLD holds all $SLOTS aggregators (${held:-?})" test "${held:-0}" = $SLOTS

# The PS's link loses the first 16 aggregation frames of each worker.
ip -n "$(ns $PSH)" link set dev eth0 xdp off &&
	ip -n "$(ns $PSH)" link set dev eth0 xdp obj "$DROP_DIR/drop_first_16.bpf.o" sec xdp ||
	bail "drop program on the PS's link"
ip netns exec "$(ns $PSH)" "$ESA_PS" --bind "$PS" --job "$JOB:2@$(haddr $W0),$(haddr $W1)" \
	--no-result-on-complete --linger-ms 500 --deadline-s 60 -j \
	> "$TMP/ps.json" 2> "$TMP/ps.err" &
pspid=$!
wait_udp_bound $PSH 47000 || echo "# the PS did not bind $PS:47000 in 10 s"
pids=()
for w in 0 1; do
	h=$((W0 + w))
	ip netns exec "$(ns $h)" timeout 60 "$ESA_JOB" --job $JOB --worker $w --fan-in 2 \
		--ps "$PS" --bind "$(haddr $h)" --slots $SLOTS --window $SLOTS --values 64 \
		--size 8K --priority 1 --timeout-us $TIMEOUT_US --verify -j \
		> "$TMP/w$w.json" 2> "$TMP/w$w.err" &
	pids+=($!)
done
for w in 0 1; do
	if wait "${pids[w]}" && [ "$(json_get "$TMP/w$w.json" \
		"j['ok'] and j['verify']['mismatches'] == 0 and j['verify']['checked'] == 2048")" = True ]; then
		ok "worker $w: every sum verified"
	else
		not_ok "worker $w: $(tr '\n' ' ' < "$TMP/w$w.err") $(cat "$TMP/w$w.json" 2> /dev/null)"
	fi
done
kill "$pspid" "$holder" 2> /dev/null
wait "$pspid" "$holder" 2> /dev/null

coll=$(agg -j stats job $JOB | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j[0]['dataplane']['collisions'])" 2> /dev/null)
check "job $JOB's first window collided: ${coll:-?} collisions (at least 32)" \
	test "${coll:-0}" -ge 32
# A worker that started later may resend on the PS's pull (first timeout
# 0) once the other's resends reached the PS; one of them must time out.
longest=0
for w in 0 1; do
	got=$(json_get "$TMP/w$w.json" "j['stats']['resends'], j['stats']['first_timeout_us']" 2> /dev/null)
	read -r resends first <<< "$(tr -d '(),' <<< "$got")"
	check "worker $w: resent (${resends:-?}), first timeout ${first:-?} us (0: pulled first), at most the path's $TIMEOUT_US" \
		test "${resends:-0}" -ge 1 -a -n "$first" -a "${first:-1}" -le $TIMEOUT_US
	[ "${first:-0}" -gt "$longest" ] && longest=$first
done
check "a worker timed out after the path's $TIMEOUT_US us (longest first timeout $longest us)" \
	test "$longest" = $TIMEOUT_US
tap_done
