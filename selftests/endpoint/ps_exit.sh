#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-ps ends on its own and says why: a job whose workers never came, or
# went, ends it after --idle-s (status 1 when its target is not reached,
# naming what it saw); packets already received when SIGTERM comes are
# still counted; plain data packets in switch mode are reported as a
# missing switch; a PS started after its workers still completes the job.
# On loopback, no switch.
. "$(dirname "$0")/lib.sh"
cleanup_add 'kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"'
require_tools

NET="127.$((20 + $$ % 200)).$((($$ / 200) % 250 + 1))"
PS_ADDR=$NET.1
# Never wait on a broken PS: a hang is a failure, not a stuck suite.
ps_run() { timeout 30 "$ESA_PS" --bind "$PS_ADDR" -j "$@"; }
secs() { echo $((SECONDS - $1)); }

# 1. Nobody comes: exit 1 after --idle-s, saying so.
t0=$SECONDS
ps_run --job 1:2 --iterations 2 --size 64K --idle-s 2 > "$TMP/1.ps" 2> "$TMP/1.err"
rc=$?
if [ $rc = 1 ] && [ "$(secs $t0)" -le 6 ] && [ "$(json_get "$TMP/1.ps" "j['exit']")" = idle ] &&
   grep -q "job 1: no packet in 2 s (--idle-s): its workers finished before this PS started, never ran, or cannot reach it" "$TMP/1.err"; then
	ok "no workers: exit 1 after --idle-s, saying why"
else
	not_ok "no workers: exit $rc after $(secs $t0) s"
	diag < "$TMP/1.err"
fi

# 2. Without a target, idle is no failure (finished and gone look alike).
ps_run --job 1:2 --idle-s 1 > "$TMP/2.ps" 2> "$TMP/2.err"
rc=$?
[ $rc = 0 ] && [ "$(json_get "$TMP/2.ps" "j['exit']")" = idle ] &&
	ok "no target: idle ends it with status 0" || { not_ok "no target: exit $rc"; diag < "$TMP/2.err"; }

# 3. The default deadline is there (documented in --help).
"$ESA_PS" --help | grep -A1 -- "--idle-s S" | grep -q "(60; 0 = never)" &&
	ok "--idle-s defaults to 60 s" || not_ok "--help does not show the --idle-s default"

# 4. A worker gone: the other one gives up, the PS ends after --idle-s,
# naming how far the job got.
ps_run --job 2:2 --iterations 3 --size 64K --host-only --idle-s 2 > "$TMP/4.ps" 2> "$TMP/4.err" &
ps=$!
timeout 30 "$ESA_JOB" --job 2 --worker 0 --fan-in 2 --ps "$PS_ADDR" --bind "$NET.10" --slots 4096 \
	--iterations 3 --size 64K --timeout-us 1000 --max-resends 3 -j > "$TMP/4.w0" 2> "$TMP/4.w0.err"
wait $ps
rc=$?
if [ $rc = 1 ] && grep -q "job 2: no packet for 2 s (--idle-s) after [0-9]* of 138 sequences: its workers are gone" "$TMP/4.err"; then
	ok "a worker gone: the PS ends after --idle-s with status 1"
else
	not_ok "a worker gone: PS exit $rc"
	diag < "$TMP/4.err"
fi

# 5. SIGTERM: what already arrived is still taken. The PS is stopped while
# a one-worker job sends its first window (16: libesa's initial congestion
# window), then told to end.
"$ESA_PS" --bind "$PS_ADDR" -j --job 3:1 --host-only > "$TMP/5.ps" 2> "$TMP/5.err" &
ps=$!
sleep 0.3
kill -STOP $ps
timeout 3 "$ESA_JOB" --job 3 --worker 0 --fan-in 1 --ps "$PS_ADDR" --bind "$NET.11" --slots 4096 \
	--window 16 --size 256K -j > /dev/null 2>&1 &
wk=$!
sleep 0.5
kill -TERM $ps
kill -CONT $ps
wait $ps
got=$(json_get "$TMP/5.ps" "j['jobs'][0]['finished']")
kill $wk 2> /dev/null
wait $wk 2> /dev/null
[ "$got" -ge 16 ] 2> /dev/null && ok "SIGTERM: the packets already received are taken ($got sums)" ||
	not_ok "SIGTERM: the queued window was dropped (finished $got)"

# 6. Switch mode, but the packets come straight from the worker: no switch.
ps_run --job 4:2 --idle-s 2 > "$TMP/6.ps" 2> "$TMP/6.err" &
ps=$!
sleep 0.3	# bound before the worker's first packet
timeout 30 "$ESA_JOB" --job 4 --worker 0 --fan-in 2 --ps "$PS_ADDR" --bind "$NET.12" --slots 4096 \
	--size 4K --timeout-us 1000 --max-resends 2 > /dev/null 2>&1
wait $ps
grep -q "esa-ps: job 4: plain data packets arrive, which no aggregating switch passes on: no switch on the path from its workers, or a job record whose PS port is not 47000" "$TMP/6.err" &&
	ok "switch mode: plain data packets are reported as no switch on the path" ||
	{ not_ok "switch mode: no report of the missing switch"; diag < "$TMP/6.err"; }

# 7. A late PS: the workers start first and wait for it; the job completes.
for w in 0 1; do
	timeout 60 "$ESA_JOB" --job 5 --worker $w --fan-in 2 --ps "$PS_ADDR" --bind "$NET.$((20 + w))" \
		--slots 4096 --iterations 2 --size 64K --verify -j > "$TMP/7.w$w" 2> "$TMP/7.w$w.err" &
	eval "wk$w=\$!"
done
sleep 1.5
ps_run --job 5:2 --iterations 2 --size 64K --host-only --linger-ms 300 --idle-s 10 > "$TMP/7.ps" 2> "$TMP/7.err"
rc=$?
wait $wk0; r0=$?
wait $wk1; r1=$?
if [ $rc = 0 ] && [ $r0 = 0 ] && [ $r1 = 0 ] && [ "$(json_get "$TMP/7.ps" "j['exit']")" = done ]; then
	ok "a PS started 1.5 s after its workers completes the job"
else
	not_ok "late PS: PS exit $rc, workers $r0 $r1"
	cat "$TMP/7.err" "$TMP/7.w0.err" | diag
fi
tap_done