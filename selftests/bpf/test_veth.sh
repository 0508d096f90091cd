#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real-veth test of the data plane: the XDP program attached natively to
# the veth ports of a switch namespace, a PS and three workers in their own
# namespaces sending real UDP aggregation packets (veth_peer.py). Checks:
# ping through the switch (L2 forwarding, ARP learning), the PS receives
# exact COMPLETE sums, every worker receives exact RESULT sums (devmap
# broadcast + egress program), and the switch's counters agree; under esa
# (switch multicasts the RESULT) and atp (the PS's RESULT releases the slot
# and is multicast by the switch).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SW=$ROOT/build/selftests/bpf/veth_switch
PEER=$ROOT/selftests/bpf/veth_peer.py
NSEQ=${NSEQ:-40}
NVAL=${NVAL:-363}
JOB=7
FAN=3

. "$ROOT/selftests/lib/topo.sh"	# namespaces and veth links, cleanup at exit

cleanup() {
	[ -n "${SWPID:-}" ] && { exec 3>&- 2>/dev/null; wait "$SWPID" 2>/dev/null; }
	rm -rf "${TMP:-/nonexistent}"
}
cleanup_add cleanup

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -x "$SW" ]; then
	echo "ok 1 # SKIP needs root and $SW"
	exit 0
fi
TMP=$(mktemp -d)
switch_add sw || bail "create the switch namespace"
jobspec="$JOB:$FAN:1:10.77.0.1:"
for h in 0 1 2 3; do
	if [ "$h" = 0 ]; then addr=10.77.0.1; else addr=10.77.0.1$h; fi
	host_add "h$h" "$addr/24" || bail "host h$h"
	[ "$h" != 0 ] && jobspec+="10.77.0.1$h/$((41000 + h)),"
done
jobspec=${jobspec%,}

# One run of the scenario under policy $1: under esa the switch multicasts
# the RESULT itself; under atp the PS answers each COMPLETE with a RESULT
# to worker 0, which the switch releases the slot with and multicasts.
run_policy() {
	local pol=$1 answer=() w h pids=() pspid
	[ "$pol" = atp ] && answer=(answer 10.77.0.11)
	rm -f "$TMP/ctl"
	# The switch holds the data plane until its stdin (a fifo) closes.
	mkfifo "$TMP/ctl"
	in_ns sw "$SW" -p "$pol" -s 64 -j "$jobspec" \
		"$(port h0)" "$(port h1)" "$(port h2)" "$(port h3)" < "$TMP/ctl" > "$TMP/switch.out" 2>&1 &
	SWPID=$!
	exec 3> "$TMP/ctl"
	for _ in $(seq 50); do
		grep -q ready "$TMP/switch.out" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q ready "$TMP/switch.out"; then
		not_ok "$pol: switch attached to 4 veth ports: $(cat "$TMP/switch.out")"
		return
	fi
	ok "$pol: switch program attached natively to 4 veth ports"

	if in_ns h1 ping -c 2 -W 2 -q 10.77.0.1 >/dev/null &&
	   in_ns h3 ping -c 2 -W 2 -q 10.77.0.12 >/dev/null; then
		ok "$pol: ping through the switch (L2 forwarding, learning)"
	else
		not_ok "$pol: ping through the switch"
	fi

	in_ns h0 python3 "$PEER" ps 10.77.0.1 "$NSEQ" \
		"$NVAL" "$FAN" "$JOB" "${answer[@]}" > "$TMP/ps.out" 2>&1 &
	pspid=$!
	# the workers start once the PS listens (a loaded machine starts
	# python slowly; COMPLETEs sent before would be lost)
	for _ in $(seq 100); do
		grep -q '^ready' "$TMP/ps.out" 2>/dev/null && break
		sleep 0.1
	done
	for w in 0 1 2; do
		h=$((w + 1))
		in_ns "h$h" python3 "$PEER" worker "$w" \
			"10.77.0.1$h" "$((41000 + h))" 10.77.0.1 "$NSEQ" \
			"$NVAL" "$FAN" "$JOB" > "$TMP/w$w.out" 2>&1 &
		pids+=($!)
	done
	for w in 0 1 2; do
		if wait "${pids[$w]}"; then
			ok "$pol: worker $w: $(tail -1 "$TMP/w$w.out")"
		else
			not_ok "$pol: worker $w: $(tr '\n' ' ' < "$TMP/w$w.out")"
		fi
	done
	if wait $pspid; then
		ok "$pol: $(tail -1 "$TMP/ps.out")"
	else
		not_ok "$pol: $(tr '\n' ' ' < "$TMP/ps.out")"
	fi

	exec 3>&-
	wait "$SWPID"
	SWPID=
	sed 's/^/# /' "$TMP/switch.out"
	if [ "$(cnt completed)" = "$NSEQ" ] && [ "$(cnt results)" = "$NSEQ" ] &&
	   [ "$(cnt aggregated)" = "$((NSEQ * FAN))" ] &&
	   [ "$(cnt collisions)" = 0 ] && [ "$(cnt rx)" = "$RX" ]; then
		ok "$pol: switch counters: $NSEQ completed, $NSEQ results, $((NSEQ * FAN)) aggregated"
	else
		not_ok "$pol: switch counters disagree"
	fi
}
cnt() { awk -v k="$1" '$1 == "counter" && $2 == k { print $3 }' "$TMP/switch.out"; }

RX=$((NSEQ * FAN))
run_policy esa
RX=$((NSEQ * FAN + NSEQ))	# the PS's RESULTs pass the switch too
run_policy atp
tap_done
