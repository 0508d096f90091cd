# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the veth tests of job members (test_veth_spoof.sh, test_veth_token.sh)
# share (sourced): selftests/lib/topo.sh, the tools, one job's addresses and
# its run through veth_peer.py, whichever flavour aggctl attaches
# (module-less on the host, the module's in the VM).
#
#   members_setup DESC    print the TAP header; without root or aggctl,
#                         skip DESC and end the test
#   agg ARGS...           aggctl on the test's switch (its pins: PIN)
#   members_run LABEL "PEER_OPTIONS" [PS_ARGS...]
#                         job JOB's PS at PS and workers 0 and 1 (W0, W1,
#                         UDP ports PORT0 + w), NSEQ sums of NVAL values,
#                         fan-in FAN, by veth_peer.py with PEER_OPTIONS
#                         (e.g. "--token HEX"); a check per worker and one
#                         for the PS, each named with LABEL
# Before sourcing, the test sets NSEQ; JOB, FAN, NVAL and PORT0 are set here.

. "$(dirname "${BASH_SOURCE[0]}")/../lib/topo.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AGGCTL=${AGGCTL:-$ROOT/build/tools/aggctl}
# shellcheck disable=SC2034 # the tests that source this use them
PEER=$ROOT/selftests/bpf/veth_peer.py
SPOOF=$ROOT/selftests/bpf/spoof.py
JOB=7 FAN=2 NVAL=64 PORT0=41000
NET=198.18.$(( $$ % 250 ))
PS=$NET.1 W0=$NET.10 W1=$NET.11 X=$NET.66
PIN=$(pin_path sw)
flavour=maps
[ -d /sys/module/esa ] && flavour=kmod

agg() { "$AGGCTL" -d "$PIN" "$@"; }

members_setup() {
	echo "TAP version 13"
	if [ "$(id -u)" != 0 ] || [ ! -x "$AGGCTL" ]; then
		skip "$1" "needs root and $AGGCTL"
		tap_done
	fi
	TMP=$(mktemp -d)
	cleanup_add rm -rf "$TMP"
}

members_run() {
	local label=$1 opts=$2 w pid pspid
	local -a wpid
	shift 2
	# shellcheck disable=SC2086
	in_ns ps python3 "$PEER" $opts ps "$PS" $NSEQ $NVAL $FAN $JOB "$@" > "$TMP/ps.out" 2>&1 &
	pspid=$!
	for _ in $(seq 100); do grep -q '^ready' "$TMP/ps.out" 2>/dev/null && break; sleep 0.1; done
	for w in 0 1; do
		# shellcheck disable=SC2086
		in_ns "w$w" python3 "$PEER" $opts worker $w "$NET.1$w" $((PORT0 + w)) "$PS" \
			$NSEQ $NVAL $FAN $JOB > "$TMP/w$w.out" 2>&1 &
		wpid[w]=$!
	done
	for w in 0 1; do
		pid=${wpid[w]}
		if wait "$pid"; then
			ok "worker $w$label: $(tail -1 "$TMP/w$w.out")"
		else
			not_ok "worker $w$label: $(tr '\n' ' ' < "$TMP/w$w.out")"
		fi
	done
	wait $pspid
	check "the PS$label: $(tail -1 "$TMP/ps.out")" grep -q "^PASS" "$TMP/ps.out"
}
