#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every counter and attribute the module reports, read back through
# aggctl (in the VM): a real XDP program calls esa_account() (the
# kfunc probe) with a known number of each event per job, half of them
# on each CPU, and aggctl must print exactly those numbers: each counter
# of job 3, job 4 and the totals (which also hold an unknown job's
# events), the summed bytes and attained service beyond 32 bits (the
# bytes over the job's fan-in),
# occupancy from claims and releases, and the notification that the
# growth of a counter sends.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
reset_module
FED=$(mktemp)
cleanup() {
	[ -n "${MPID:-}" ] && kill "$MPID" 2> /dev/null
	rm -f "${MON:-}" "$FED" "$FED.out"
	reset_module
}
trap cleanup EXIT

NCPU=$(nproc)
ACCT_ERR=
# account CPU JOB EVENT AMOUNT COUNT: COUNT calls on that CPU (mod the
# CPUs), noted in $FED; an unknown job's calls return -ENOENT
account() {
	local out want=0
	[ "$2" = 9 ] && want=-ENOENT
	out=$(taskset -c $(($1 % NCPU)) "$PROBE" account "$2" "$3" "$4" "$5" 2>&1)
	[ "$out" = "$want" ] || ACCT_ERR+="account $*: $(flat "$out"); "
	echo "$2 $3 $4 $5" >> "$FED"
}
# spread JOB EVENT AMOUNT COUNT: COUNT calls, half on each of two CPUs
spread() {
	account 0 "$1" "$2" "$3" $((($4 + 1) / 2))
	[ "$4" -gt 1 ] && account 1 "$1" "$2" "$3" $(($4 / 2))
}

# attained service decays once per aging period: long enough to stay exact
$AGGCTL switch set aging 600000
$AGGCTL job add id 3 ps 10.3.0.1:47000 worker 10.3.0.2:5000 worker 10.3.0.3:5000 priority 4
$AGGCTL job add id 4 ps 10.3.0.1:47000 worker 10.3.0.4:5000 priority 6
MON=$(mktemp)
$AGGCTL -j monitor > "$MON" 2>&1 &
MPID=$!
sleep 0.5

# The counters of uapi/esa_switch.h in index order, by enum name.
CNT=($(awk '/^enum esa_counter/,/__ESA_CNT_MAX/' uapi/esa_switch.h |
	sed -n 's/^[[:space:]]*ESA_CNT_\([A-Z_]*\),.*/\1/p'))
idx() { local i; for i in "${!CNT[@]}"; do [ "${CNT[$i]}" = "$1" ] && echo "$i"; done; }
BIG=4000000000			# bytes of one event: two of them pass 2^32
# job 3: counter i gets i + 1 events, over both CPUs; aggregated ones
# carry BIG bytes, stranded_us ones 1000 us (its amount is what counts)
for i in "${!CNT[@]}"; do
	case ${CNT[$i]} in
	AGGREGATED) amount=$BIG ;;
	STRANDED_US) amount=1000 ;;
	*) amount=0 ;;
	esac
	spread 3 "$i" $amount $((i + 1))
done
# job 4 a few, and an unknown job's events: in the totals only
account 1 4 "$(idx RX)" 0 3
account 0 4 "$(idx AGGREGATED)" 1452 1
account 1 4 "$(idx COMPLETED)" 0 1
account 0 4 "$(idx STRANDED_US)" 77 2
account 0 9 "$(idx RX)" 0 5
account 1 9 "$(idx AGGREGATED)" 100 1
same "every probe call returned as expected" "$ACCT_ERR" ""

# check JOB|all: aggctl -j stats against what was fed; mismatches or ""
check() {
	if [ "$1" = all ]; then
		$AGGCTL -j stats
	else
		$AGGCTL -j stats job "$1"
	fi > "$FED.out" 2>&1
	$PY - "$FED" "$FED.out" "$1" "${CNT[@]}" <<'PY'
import json, sys
fed, out, which, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
agg, us = names.index("AGGREGATED"), names.index("STRANDED_US")
want = {n.lower(): 0 for n in names}
want["bytes"] = 0
for line in open(fed):
    job, ev, amount, count = line.split()
    if not ev.isdigit() or (which != "all" and job != which):
        continue
    ev, amount, count = int(ev), int(amount), int(count)
    want[names[ev].lower()] += amount * count if ev == us else count
    if ev == agg:
        want["bytes"] += amount * count
try:
    got = json.load(open(out))[0]["module"]
except (ValueError, KeyError, IndexError):
    print("no module stats: " + open(out).read()[:300])
    sys.exit()
bad = ["%s %s (want %s)" % (k, got.get(k), v) for k, v in want.items()
       if got.get(k) != v]
bad += ["%s not fed" % k for k in got if k not in want]
print("; ".join(bad))
PY
}
same "stats job 3: every counter as accounted, bytes summed over the CPUs" "$(check 3)" ""
same "stats job 4: every counter as accounted" "$(check 4)" ""
same "stats (all): both jobs and the unknown job's events" "$(check all)" ""
expect "stats job 3 (text): bytes beyond 32 bits" 0 " bytes $((2 * BIG))\$" \
	$AGGCTL stats job 3

attained() {
	$AGGCTL -j job show id "$1" | $PY -c '
import json, sys
j = json.load(sys.stdin)
print((j[0] if isinstance(j, list) else j)["attained_bytes"])'
}
# LAS counts a job's tensor bytes: what its 2 workers' packets summed,
# over its fan-in (Documentation/kmod.rst, "Dynamic priority")
same "job 3: attained service is the bytes aggregated over its 2 workers" \
	"$(attained 3)" $((2 * BIG / 2))
same "job 4: attained service" "$(attained 4)" 1452

occ() {
	$AGGCTL -j occupancy ${1:+job $1} | $PY -c '
import json, sys
print(" ".join(str(r.get(k)) for r in json.load(sys.stdin)
               for k in ("occupancy", "quota", "agg_base", "agg_slice") if k in r))'
}
account 0 3 claim 0 2
account 1 3 claim 0 1
account 0 3 release 0 1
account 1 4 claim 0 1
same "occupancy job 3: three claims, one release" "$(occ 3)" "2 0 0 0"
same "occupancy job 4" "$(occ 4)" "1 0 0 0"
expect "occupancy (all): the total" 0 '^job all occupancy 3 slots ' $AGGCTL occupancy
account 0 4 release 0 3
same "occupancy job 4: never below 0" "$(occ 4)" "0 0 0 0"

# one notification per job, event and tick, carrying the count
sleep 0.5
kill "$MPID" 2> /dev/null
wait "$MPID" 2> /dev/null
MPID=
ntf() {		# ntf EVENT JOB: the sum of the counts of those notifications
	$PY -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == sys.argv[2] and str(e.get("id", e.get("job"))) == sys.argv[3]:
        n += e.get("count", 0)
print(n)' "$MON" "$1" "$2"
}
evictions=$(($(idx EVICTIONS) + 1))
completed=$(($(idx COMPLETED) + 1))
same "job-preempted notifications of job 3 count its evictions" \
	"$(ntf job-preempted 3)" "$evictions"
same "job-completed notifications of job 3 count its completions" \
	"$(ntf job-completed 3)" "$completed"
same "job-completed notifications of job 4" "$(ntf job-completed 4)" 1
tap_done
