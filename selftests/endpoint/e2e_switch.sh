#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end through the real XDP switch (module-less flavour) on veth:
# hosts in network namespaces, the switch program on their ports in the
# root namespace, esa-ps and esa-job from the tree. Every worker checks
# every sum (esa-job --verify). Scenarios:
#   1 job x 4 workers x 1 MiB x 5 iterations, int32 bit-exact, summed in
#     the switch; the same in float32 within the quantisation bound;
#   3 jobs on an aggregator array too small for all, under esa, atp and
#     static: all bit-exact, preemptions under esa, collisions under atp;
#   1% and 5% random loss on every worker link: bit-exact, resends counted;
#   a job whose workers are killed mid-run: the other job finishes and the
#     dead job's aggregators are reclaimed (agg_timeout_us).
. "$(dirname "$0")/lib.sh"
trap 'topo_down; rm -rf "$TMP"' EXIT
require_tools
if [ ! -x "$SWITCHCTL" ] || [ ! -e "$DROP_DIR/drop_0.bpf.o" ]; then
	nok "switchctl and drop programs are built (make selftests)"
	finish
fi
PSH=1				# the PS host; workers are hosts 10, 11, ...
PS=$(haddr $PSH)
if ! topo_up $PSH 10 11 12 13; then
	nok "topology: switch loaded and attached to 5 veth ports"
	finish
fi
topo_ping $PSH 10 11 12 13

PIDS=()
# start_ps NAME ESA-PS-ARGS...: the PS of every job, on host $PSH; it
# exits when every job finished what its ESA-PS-ARGS say (or on SIGTERM).
start_ps() {
	local name=$1
	shift
	ip netns exec "$(ns $PSH)" "$ESA_PS" --bind "$PS" \
		--linger-ms 500 --deadline-s 300 -j "$@" \
		> "$TMP/$name.ps" 2> "$TMP/$name.ps.err" &
	PS_PID=$!
}
# start_worker NAME JOB W FAN PORT ESA-JOB-ARGS...
start_worker() {
	local name=$1 job=$2 w=$3 fan=$4 port=$5
	shift 5
	# WORKER_TIMEOUT (s) bounds a case that may stall (see the 5% loss case).
	ip netns exec "$(ns $((10 + w)))" ${WORKER_TIMEOUT:+timeout "$WORKER_TIMEOUT"} \
		"$ESA_JOB" --job "$job" --worker "$w" \
		--fan-in "$fan" --ps "$PS" --bind "$(haddr $((10 + w))):$port" \
		--verify -j "$@" > "$TMP/$name.j$job.w$w" 2> "$TMP/$name.j$job.w$w.err" &
	PIDS+=($!)
}
# Wait for the workers and the PS; diagnostics of those that failed.
wait_all() {
	local p rc=0 f
	for p in "${PIDS[@]}"; do wait "$p" || rc=1; done
	wait "$PS_PID" || rc=1
	PIDS=()
	if [ $rc != 0 ]; then
		for f in "$TMP"/*.err; do [ -s "$f" ] && { echo "# $f:"; diag "$f"; }; done
	fi
	return $rc
}
workers_of() { # JOB FAN PORT: the job record's worker list
	local w s=
	for ((w = 0; w < $2; w++)); do s+="${s:+,}$(haddr $((10 + w))):$3"; done
	echo "$s"
}
verified() { # NAME JOB FAN ITER VALUES: every worker checked everything
	local w
	for ((w = 0; w < $3; w++)); do
		[ "$(json_get "$TMP/$1.j$2.w$w" "j['ok'] and j['verify']['mismatches'] == 0 and j['verify']['checked'] == $4 * $5")" = True ] || return 1
	done
}
counter() { "$SWITCHCTL" "$PIN" counters "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
sum_stat() { # NAME JOB FAN KEY: sum of a worker stat over the job
	local w t=0
	for ((w = 0; w < $3; w++)); do
		t=$((t + $(json_get "$TMP/$1.j$2.w$w" "j['stats']['$4']")))
	done
	echo $t
}

# ---- 1 job, 4 workers, 1 MiB, int32 and float32 ----------------------
one_job() { # NAME TYPE [ESA-JOB-ARGS...]; PS_ARGS: more esa-ps options
	local name=$1 type=$2
	shift 2
	"$SWITCHCTL" "$PIN" config esa 1024 20000
	"$SWITCHCTL" "$PIN" reset
	"$SWITCHCTL" "$PIN" job 1 4 1 "$PS" 0 0 "$(workers_of 1 4 47000)"
	start_ps "$name" --job "1:4@$(workers_of 1 4 47000)" --no-result-on-complete \
		--iterations 5 --size 1M ${PS_ARGS:-}
	for w in 0 1 2 3; do
		start_worker "$name" 1 $w 4 47000 --slots 1024 --iterations 5 \
			--size 1M --type "$type" "$@"
	done
	wait_all
}
if one_job one int32 && verified one 1 4 5 262144; then
	ok "1 job x 4 workers x 1 MiB x 5 iterations through the switch: bit-exact"
	c=$(counter 1 completed)
	check "... the switch completed sums itself ($c)" test "$c" -gt 0
else
	nok "1 job x 4 workers x 1 MiB x 5 iterations through the switch: bit-exact"
fi
if one_job onef float32 && verified onef 1 4 5 262144; then
	ok "float32 1 MiB x 5 through the switch: within the quantisation bound"
else
	nok "float32 1 MiB x 5 through the switch: within the quantisation bound"
fi

# ---- 3 jobs on 48 aggregators, each wanting 32 -------------------------
three_jobs() { # POLICY
	local pol=$1 j base quota slots span ps_flag=--no-result-on-complete
	[ "$pol" = atp ] && ps_flag=
	"$SWITCHCTL" "$PIN" config "$pol" 48 20000
	"$SWITCHCTL" "$PIN" reset
	for j in 1 2 3; do
		base=0 quota=0
		[ "$pol" = static ] && base=$(((j - 1) * 16)) quota=16
		"$SWITCHCTL" "$PIN" job $j 3 $j "$PS" $base $quota "$(workers_of $j 3 $((47000 + j)))"
	done
	start_ps "$pol" --job "1:3" --job "2:3" --job "3:3" $ps_flag \
		--iterations 3 --size 256K
	for j in 1 2 3; do
		if [ "$pol" = static ]; then
			slots="--slots 16 --window 16"
		else	# overlapping ranges: job j starts at 8 (j - 1)
			slots="--slots 48 --agg-offset $((8 * (j - 1))) --window 32"
		fi
		for w in 0 1 2; do
			start_worker "$pol" $j $w 3 $((47000 + j)) $slots \
				--priority $j --iterations 3 --size 256K
		done
	done
	wait_all
}
for pol in esa atp static; do
	if three_jobs $pol && verified $pol 1 3 3 65536 && verified $pol 2 3 3 65536 &&
	   verified $pol 3 3 3 65536; then
		ok "$pol: 3 jobs on 48 aggregators, every sum bit-exact"
	else
		nok "$pol: 3 jobs on 48 aggregators, every sum bit-exact"
		continue
	fi
	pre=0 col=0
	for j in 1 2 3; do
		pre=$((pre + $(counter $j preemptions)))
		col=$((col + $(counter $j collisions)))
	done
	echo "# $pol: preemptions $pre collisions $col"
	case $pol in
	esa) check "esa: preemptions counted ($pre)" test $pre -gt 0 ;;
	atp) check "atp: collisions counted ($col), no preemption" test $col -gt 0 -a $pre = 0 ;;
	static) check "static: no preemption ($pre)" test $pre = 0 ;;
	esac
done

# ---- loss on every worker link -----------------------------------------
for loss in 100 500; do
	for w in 10 11 12 13; do set_loss $w $loss; done
	pct=$((loss / 100))
	# Known bug at 5%: a worker stops getting results (Documentation/
	# endpoints.rst, "Known limits"). The case still runs, bounded in time,
	# and reports as TODO until it is fixed; 1% must pass.
	todo= wt=
	if [ $loss = 500 ]; then
		todo=" # TODO known bug: a worker's results go missing at 5% loss"
		wt=90
	fi
	if WORKER_TIMEOUT=$wt PS_ARGS="--deadline-s 100" one_job loss$loss int32 &&
	   verified loss$loss 1 4 5 262144; then
		rs=$(sum_stat loss$loss 1 4 resends)
		ok "$pct% loss on worker links: bit-exact"
		check "$pct% loss: resends counted ($rs)" test "$rs" -gt 0
	else
		nok "$pct% loss on worker links: bit-exact$todo"
	fi
done
for w in 10 11 12 13; do set_loss $w 0; done

# ---- a job killed mid-run ---------------------------------------------
# Jobs 1 and 2 share 32 aggregators under esa at equal priority (nobody
# preempts); job 1's workers die with partial sums in the switch; job 2
# starts once they are older than agg_timeout_us (50 ms), must finish, and
# its packets must reclaim every aggregator job 1 left (evicting the
# partials to job 1's PS).
"$SWITCHCTL" "$PIN" config esa 32 50000
"$SWITCHCTL" "$PIN" reset
"$SWITCHCTL" "$PIN" job 1 2 1 "$PS" 0 0 "$(haddr 10):47001,$(haddr 11):47001"
"$SWITCHCTL" "$PIN" job 2 2 1 "$PS" 0 0 "$(haddr 12):47002,$(haddr 13):47002"
start_ps kill --job "1:2" --job "2:2" --iterations 20 --size 64K
ip netns exec "$(ns 10)" "$ESA_JOB" --job 1 --worker 0 --fan-in 2 --ps "$PS" \
	--bind "$(haddr 10):47001" --slots 32 --window 32 --iterations 1000 --size 64K \
	> /dev/null 2>&1 &
k0=$!
ip netns exec "$(ns 11)" "$ESA_JOB" --job 1 --worker 1 --fan-in 2 --ps "$PS" \
	--bind "$(haddr 11):47001" --slots 32 --window 32 --iterations 1000 --size 64K \
	> /dev/null 2>&1 &
k1=$!
# Both die at once, leaving the sums they were building in the switch.
sleep 0.5
kill -9 $k0 $k1
wait $k0 $k1 2>/dev/null
held=$("$SWITCHCTL" "$PIN" held 1 32)
echo "# job 1 killed holding $held aggregators"
sleep 0.2
for w in 0 1; do
	ip netns exec "$(ns $((12 + w)))" "$ESA_JOB" --job 2 --worker $w --fan-in 2 \
		--ps "$PS" --bind "$(haddr $((12 + w))):47002" --slots 32 \
		--window 32 --iterations 20 --size 64K --verify -j > "$TMP/kill.j2.w$w" 2> "$TMP/kill.j2.w$w.err" &
	PIDS+=($!)
done
# Job 1 never finishes: stop the PS once job 2's workers are done.
rc=0
for p in "${PIDS[@]}"; do wait "$p" || rc=1; done
PIDS=()
kill -TERM "$PS_PID"
if wait_all && [ $rc = 0 ] && verified kill 2 2 20 16384; then
	ok "job 1 killed mid-run: job 2 finishes bit-exact"
else
	nok "job 1 killed mid-run: job 2 finishes bit-exact"
fi
after=$("$SWITCHCTL" "$PIN" held 1 32)
ev=$(counter 1 evictions)
if [ "$held" -gt 0 ]; then
	check "job 1's $held aggregators reclaimed after agg_timeout_us (left $after, evicted $ev)" \
		test "$after" = 0 -a "$ev" -gt 0
else
	skip "job 1's aggregators reclaimed" "job 1 held none when killed"
fi
finish
