#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-job and esa-ps with a one-armed switch's address and a job token, on
# loopback sockets, no switch: a worker of a one-worker job and its PS name
# each other as the switch (--switch, ESA_SWITCH), so the worker's packets
# reach the PS from the worker's "switch" address and port and the PS's
# RESULTs reach the worker from its "switch", as through a one-armed
# switch. Checks that the options and variables reach the library: every
# sum bit-exact with the token on every packet (the PS's target counts
# 361 values per packet), no packet refused; a worker whose token differs
# from the PS's gets no result, the PS counts bad_token and sums nothing;
# a PS with a switch address takes nothing from elsewhere (not_switch).
# Each run has its own loopback addresses, 127.X.Y.Z from the pid.
. "$(dirname "$0")/lib.sh"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
require_tools

NET="127.$((20 + $$ % 200)).$((($$ / 200) % 250))"
PS_ADDR=$NET.1
W_ADDR=$NET.10
TOK=00c0ffee12345678
TOK2=00c0ffee12345679

# Until the PS's socket is bound: a worker that gives up after a few
# resends must not spend them on a PS still starting.
wait_ps() {
	local t
	for ((t = 0; t < 200; t++)); do
		ss -Huln "src $PS_ADDR" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# run NAME "PS ARGS" "WORKER ARGS" [ENV=VALUE for the worker...]
run() {
	local name=$1 ps_args=$2 w_args=$3 rc=0
	shift 3
	"$ESA_PS" --bind "$PS_ADDR" --switch "$W_ADDR" --linger-ms 300 \
		--idle-s 3 --deadline-s 60 -j $ps_args \
		> "$TMP/$name.ps" 2> "$TMP/$name.ps.err" &
	local ps=$!
	wait_ps
	env "$@" "$ESA_JOB" --job 1 --worker 0 --fan-in 1 --ps "$PS_ADDR" \
		--bind "$W_ADDR" --slots 4096 -j $w_args \
		> "$TMP/$name.w" 2> "$TMP/$name.w.err" || rc=1
	wait $ps || rc=$((rc | 2))
	return $rc
}

psj() { json_get "$TMP/$1.ps" "$2"; }
wj() { json_get "$TMP/$1.w" "$2"; }

# 3 x 256 KiB = 3 x 182 packets of at most 361 values.
if run tok "--job 1:1:$TOK --iterations 3 --size 256K" \
	"--iterations 3 --size 256K --verify --token $TOK" ESA_SWITCH="$PS_ADDR"; then
	check "token: 3 x 256 KiB bit-exact through the 'switch' (ESA_SWITCH)" \
		test "$(wj tok "j['verify']['mismatches'] == 0 and j['verify']['checked'] == 3 * 65536")" = True
	check "token: 546 packets of <= 361 values, every one taken" \
		test "$(wj tok "j['stats']['packets_sent'] - j['stats']['resends'] == 546 and j['stats']['bad_token'] == 0 and j['stats']['ignored'] == 0")" = True
	check "token: the PS reached its target of 546 at 361 values per packet" \
		test "$(psj tok "j['exit'] == 'done' and j['jobs'][0]['finished'] == 546 and j['jobs'][0]['bad_token'] == 0 and j['not_switch'] == 0")" = True
else
	not_ok "token: 3 x 256 KiB bit-exact through the 'switch' (ESA_SWITCH)"
	diag < "$TMP/tok.w.err"
	diag < "$TMP/tok.ps.err"
fi

# The PS's job token from ESA_TOKEN, the worker's from its own ESA_TOKEN.
if ESA_TOKEN=$TOK run envtok "--job 1:1 --iterations 1 --size 64K" \
	"--iterations 1 --size 64K --verify --switch $PS_ADDR" ESA_TOKEN=$TOK; then
	check "ESA_TOKEN: sums bit-exact, the token taken" \
		test "$(wj envtok "j['verify']['mismatches'] == 0 and j['stats']['bad_token'] == 0")" = True
else
	not_ok "ESA_TOKEN: sums bit-exact, the token taken"
	diag < "$TMP/envtok.w.err"
fi

# Another token: the PS sums nothing and the worker gives up.
run badtok "--job 1:1:$TOK --iterations 1 --size 4K" \
	"--iterations 1 --size 4K --switch $PS_ADDR --token $TOK2 --timeout-us 2000 --max-resends 3 --silence-s 0"
rc=$?
check "wrong token: the worker gets no result, the PS fails its target" test $rc = 3
check "wrong token: the PS counted bad_token and finished nothing" \
	test "$(psj badtok "j['jobs'][0]['bad_token'] >= 1 and j['jobs'][0]['finished'] == 0 and j['jobs'][0]['rx'] == 0")" = True

# A PS whose switch is another address takes nothing from this worker.
run notsw "--job 1:1 --iterations 1 --size 4K --switch $NET.99" \
	"--iterations 1 --size 4K --switch $PS_ADDR --timeout-us 2000 --max-resends 3 --silence-s 0"
check "other switch: the PS counted not_switch and served nothing" \
	test "$(psj notsw "j['not_switch'] >= 1 and j['jobs'][0]['rx'] == 0")" = True

tap_done
