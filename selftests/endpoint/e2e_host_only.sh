#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end on loopback without a switch: esa-ps in --host-only mode does
# all the aggregation and unicasts results; esa-job workers verify every sum
# (bit-exact int32, float32 within the documented bound, float32 overflow
# fallback). Each worker has its own loopback address, 127.X.Y.W with X.Y
# from the pid, so parallel runs do not meet.
. "$(dirname "$0")/lib.sh"
cleanup_add 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"'
require_tools

NET="127.$((20 + $$ % 200)).$((($$ / 200) % 250))"
PS_ADDR=$NET.1

# run_job NAME JOB FANIN PS_EXTRA WORKER_ARGS...: one PS, FANIN workers.
run_job() {
	local name=$1 job=$2 fan=$3 ps_extra=$4 w rc=0
	shift 4
	"$ESA_PS" --bind "$PS_ADDR" --job "$job:$fan" --host-only \
		--linger-ms 300 --deadline-s 60 $ps_extra -j \
		> "$TMP/$name.ps" 2> "$TMP/$name.ps.err" &
	local ps=$!
	for ((w = 0; w < fan; w++)); do
		"$ESA_JOB" --job "$job" --worker $w --fan-in "$fan" --ps "$PS_ADDR" \
			--bind "$NET.$((10 + w))" --slots 4096 -j "$@" \
			> "$TMP/$name.w$w" 2> "$TMP/$name.w$w.err" &
		eval "wk$w=\$!"
	done
	for ((w = 0; w < fan; w++)); do
		eval "wait \$wk$w" || { rc=1; diag < "$TMP/$name.w$w.err"; }
	done
	wait $ps || { rc=1; diag < "$TMP/$name.ps.err"; }
	return $rc
}

all_workers() { # name fan python-expr: true for every worker's JSON
	local w
	for ((w = 0; w < $2; w++)); do
		[ "$(json_get "$TMP/$1.w$w" "$3")" = True ] || return 1
	done
}

if run_job i32 1 4 "--iterations 3 --size 1M" --iterations 3 --size 1M --verify; then
	check "int32: 4 workers x 1 MiB x 3 iterations bit-exact" \
		all_workers i32 4 "j['verify']['mismatches'] == 0 and j['verify']['checked'] == 3 * 262144"
	check "int32: the PS finished every sequence itself" \
		test "$(json_get "$TMP/i32.ps" "j['jobs'][0]['finished_by_ps']")" = $((3 * 723))
else
	not_ok "int32: 4 workers x 1 MiB x 3 iterations bit-exact"
fi

if run_job f32 2 4 "--iterations 2 --size 1M" --iterations 2 --size 1M --type float32 --verify; then
	check "float32: 4 workers x 1 MiB within the quantisation bound" \
		all_workers f32 4 "j['verify']['mismatches'] == 0 and j['stats']['f32_redo_packets'] == 0"
else
	not_ok "float32: 4 workers x 1 MiB within the quantisation bound"
fi

# |x| up to 1e5 at 2^16 does not fit INT32_MAX / 8: every packet is redone.
if run_job f32o 3 4 "--iterations 1 --size 64K" --size 64K --type float32 --amplitude 1e5 --verify; then
	check "float32 overflow: redone at a smaller scale, still within its bound" \
		all_workers f32o 4 "j['verify']['mismatches'] == 0 and j['stats']['f32_redo_packets'] > 0 and j['stats']['f32_min_scale_log2'] < 16"
else
	not_ok "float32 overflow: redone at a smaller scale, still within its bound"
fi

# Small windows, small packets, many iterations: sequence numbers run on
# across calls and the result cache wraps many times.
if run_job small 4 3 "--cache 64 --iterations 20 --size 20000 --values 64" --iterations 20 --size 20000 --values 64 --window 16 --verify; then
	check "int32: 3 workers, 20 iterations of 64-value packets, cache wraps" \
		all_workers small 3 "j['verify']['mismatches'] == 0 and j['stats']['allreduces'] == 20"
else
	not_ok "int32: 3 workers, 20 iterations of 64-value packets, cache wraps"
fi

# No PS at all: the worker gives up with an error instead of hanging.
"$ESA_JOB" --job 9 --worker 0 --fan-in 2 --ps "$NET.99" --bind "$NET.98" \
	--slots 16 --size 4K --timeout-us 1000 --max-resends 3 \
	> "$TMP/nops.out" 2> "$TMP/nops.err"
rc=$?
if [ $rc = 1 ] && grep -q "no result for seq .* after 3 resends, none for any other packet meanwhile: the PS $NET.99:47000 is not running: its host answers 'port unreachable'" "$TMP/nops.err"; then
	ok "no PS: worker fails with -ETIMEDOUT after max resends, naming the missing PS"
else
	not_ok "no PS: worker fails with -ETIMEDOUT after max resends, naming the missing PS (rc $rc)"
	diag < "$TMP/nops.err"
fi

# ... and with the default give-up (about 80 s of resends), it says the
# likely cause within a few seconds while it goes on trying.
t0=$SECONDS
timeout 5 "$ESA_JOB" --job 9 --worker 0 --fan-in 2 --ps "$NET.99" --bind "$NET.98" \
	--slots 16 --size 4K --silence-s 2 > /dev/null 2> "$TMP/nops2.err"
if grep -q "esa-job: job 9 worker 0: nothing back for 2 s: the PS $NET.99:47000 is not running: its host answers 'port unreachable' (start esa-ps there; the workers wait for it); still trying" "$TMP/nops2.err"; then
	ok "no PS: the worker names the missing PS after 2 s of silence"
else
	not_ok "no PS: no early word of the missing PS in $((SECONDS - t0)) s"
	diag < "$TMP/nops2.err"
fi
tap_done