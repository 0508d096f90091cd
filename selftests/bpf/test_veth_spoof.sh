#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Job members bound to ports, end to end (Documentation/security.rst): the
# switch attached with aggctl to the veth ports of a PS, two workers and an
# attacker host; job 7's PS and worker 0 bound by "dev", worker 1 at first
# sight. Whichever flavour aggctl attaches (module-less on the host, the
# module's in the VM with the esa module loaded).
# From the attacker's port (spoof.py): a data packet of worker 0 (values
# 1000000), a RESULT from the PS's address, a gratuitous ARP and an
# ordinary IPv4 frame claiming worker 0's address, the same claiming
# worker 1's; the data packet and RESULT again from a group source MAC and
# under 802.1Q (VID 0) and 802.1ad + 802.1Q tags; a tagged data packet to
# the aggregator from the attacker's own address; a later IPv4 fragment
# whose bytes look like a RESULT of job 7, broadcast. Checks: each spoof is
# dropped and counted (drop_spoof, switch-wide and, but for a group MAC,
# for job 7), the tagged data packet counted drop_malformed, the fragment
# reaches every host unchanged (not as a RESULT from the PS), after 5000
# frames from as many source addresses and MACs the attacker's port holds
# at most its learning budget and a job with new members is still added
# (job 7's members still bound), the
# neighbour table still has the members on their ports,
# the job's sums (2 workers x 20 sequences, veth_peer.py) reach both
# workers exact, none of job 7's frames reaches the attacker, and with the
# module the event channel reports the spoofs.
NSEQ=20
. "$(dirname "$0")/veth_members.sh"
members_setup "job members bound to ports"

switch_add root
devs=()
for h in ps w0 w1 x; do
	case $h in ps) a=$PS ;; w0) a=$W0 ;; w1) a=$W1 ;; x) a=$X ;; esac
	host_add "$h" "$a/24" || bail "host $h"
	devs+=(dev "$(port "$h")")
done
agg switch attach "${devs[@]}" || bail "aggctl switch attach"
cleanup_add "$AGGCTL" -d "$PIN" switch detach "${devs[@]}"
[ $flavour = kmod ] && cleanup_add "$AGGCTL" job del id $JOB
# worker 1 speaks before the job exists: bound at first sight to its port
in_ns w1 ping -c1 -W1 "$PS" > /dev/null
check "job $JOB: PS and worker 0 bound by dev, worker 1 at first sight" \
	agg job add id $JOB ps "$PS:47000" dev "$(port ps)" \
	worker "$W0:$PORT0" dev "$(port w0)" worker "$W1:$((PORT0 + 1))" \
	fan-in $FAN priority 1 || tap_done
agg switch set slots 8 timeout 3000 > /dev/null
agg policy set esa > /dev/null
out=$(agg job show id $JOB)
diag "$out"
if grep -q "ps $PS:47000 dev $(port ps)" <<< "$out" &&
   grep -q "worker $W0:$PORT0 dev $(port w0)" <<< "$out" &&
   grep -q "worker $W1:$((PORT0 + 1)) dev $(port w1) (first sight)" <<< "$out"; then
	ok "job show: every member's port"
else
	not_ok "job show: every member's port"
fi
for h in ps w0; do in_ns "$h" ping -c1 -W1 "$([ $h = ps ] && echo $W0 || echo $PS)" > /dev/null; done

# One address, one port: another job cannot bind worker 0's address elsewhere.
check_fails "another job binding worker 0's address to another port: refused" \
	agg job add id $((JOB + 1)) ps "$PS:47000" worker "$W0:$((PORT0 + 5))" dev "$(port x)"
[ $flavour = kmod ] && { "$AGGCTL" monitor > "$TMP/monitor" 2>&1 & mpid=$!; cleanup_add kill $mpid; }
in_ns x python3 "$SPOOF" capture eth0 12 $JOB > "$TMP/capture" 2>&1 &
cpid=$!
for _ in $(seq 50); do grep -q ready "$TMP/capture" && break; sleep 0.1; done
spoofs=0
for claim in "$W0" "$W1"; do
	in_ns x python3 "$SPOOF" arp eth0 "$claim" && spoofs=$((spoofs + 1))
	in_ns x python3 "$SPOOF" ipv4 eth0 "$claim" "$PS" && spoofs=$((spoofs + 1))
done
# untagged, tagged (a host takes VID 0 as untagged; stacked tags), and
# from a group source MAC (no station's: a spoof of no job)
nojob=0
for opts in "" "--tags 8100:0" "--tags 88a8:5,8100:0" "--mac 03:00:00:00:00:01"; do
	for seq in 0 1 2; do
		# shellcheck disable=SC2086
		in_ns x python3 "$SPOOF" $opts data eth0 "$W0" $PORT0 "$PS" $JOB $FAN 0 $seq $NVAL &&
			case $opts in --mac*) nojob=$((nojob + 1)) ;; *) spoofs=$((spoofs + 1)) ;; esac
		# shellcheck disable=SC2086
		in_ns x python3 "$SPOOF" $opts result eth0 "$PS" "$W0" $JOB $FAN $seq $NVAL &&
			case $opts in --mac*) nojob=$((nojob + 1)) ;; *) spoofs=$((spoofs + 1)) ;; esac
	done
done
# the attacker's own address, tagged, to the aggregator: not summed, not passed
tagged=0
for tags in 8100:0 88a8:5,8100:0; do
	in_ns x python3 "$SPOOF" --tags $tags data eth0 "$X" $PORT0 "$PS" $JOB $FAN 0 5 $NVAL &&
		tagged=$((tagged + 1))
done
sleep 0.3
agg -j stats job $JOB > "$TMP/stats.json"
agg -j stats > "$TMP/stats_all.json"
check "$spoofs spoofed frames dropped and counted for job $JOB, nothing aggregated" \
	python3 -c "
import json, sys
r = json.load(open('$TMP/stats.json'))
r = r[0] if isinstance(r, list) else r
d = r['dataplane']
print('drop_spoof', d['drop_spoof'], 'rx', d['rx'], 'aggregated', d['aggregated'])
sys.exit(d['drop_spoof'] != $spoofs or d['aggregated'] != 0 or d['rx'] != 0)"
check "switch-wide: $nojob from a group MAC more spoofs, $tagged tagged to the aggregator malformed" \
	python3 -c "
import json, sys
d = json.load(open('$TMP/stats_all.json'))[0]['dataplane']
print('drop_spoof', d['drop_spoof'], 'drop_malformed', d['drop_malformed'],
      'aggregated', d['aggregated'])
sys.exit(d['drop_spoof'] != $spoofs + $nojob or d['drop_malformed'] != $tagged or
         d['aggregated'] != 0)"

# A later fragment is data: every host gets it as it was sent (from the
# attacker's address), none as a RESULT from the PS. Each host listens
# until the one fragment came (60 s at most: the sender starts slowly on
# a loaded machine).
for h in ps w0 w1; do
	in_ns "$h" python3 "$SPOOF" fragments eth0 60 1 > "$TMP/frag.$h" 2>&1 &
	eval "fpid_$h=$!"
done
for h in ps w0 w1; do
	for _ in $(seq 50); do grep -q ready "$TMP/frag.$h" && break; sleep 0.1; done
done
in_ns x python3 "$SPOOF" --frag later result eth0 "$X" "$W0" $JOB $FAN 9 $NVAL
for h in ps w0 w1; do
	eval "wait \$fpid_$h"
	check "$h: the fragment as sent (from $X), not rewritten: $(grep -c '^fragment' "$TMP/frag.$h")" \
		test "$(grep '^fragment' "$TMP/frag.$h")" = "fragment from $X"
done

# The job itself: both workers get exact sums (the attacker's seq 0-2
# values went nowhere), and the attacker none of them.
members_run "" ""
wait $cpid
check "the attacker received none of job $JOB's frames" \
	grep -q "captured 0 frames" "$TMP/capture"
if [ $flavour = kmod ]; then
	sleep 0.5
	check "module event channel: job-spoofed for job $JOB" \
		grep -q "^job-spoofed job $JOB count" "$TMP/monitor"
fi

# One host cannot fill the learning tables or block a later job.
BUDGET=$(sed -n 's/^#define ESA_LEARN_PORT_BUDGET[[:space:]]*\([0-9]*\).*/\1/p' \
	"$ROOT/include/esa_dataplane.h")
in_ns x python3 "$SPOOF" flood eth0 5000 "$PS"
sleep 0.3
XIF=$(ifindex root "$(port x)")
check "5000 sources from the attacker: its port learned at most $BUDGET" python3 -c "
import json, subprocess, sys
learned = json.loads(subprocess.check_output(
    ['bpftool', '-j', 'map', 'dump', 'pinned', '$PIN/esa_learned']))
fdb = json.loads(subprocess.check_output(
    ['bpftool', '-j', 'map', 'dump', 'pinned', '$PIN/esa_fdb']))
n = [sum(e['formatted']['value']['ifindex'] == $XIF for e in t) for t in (learned, fdb)]
print('learned', n[0], 'fdb', n[1])
sys.exit(not 0 < n[0] <= $BUDGET or not 0 < n[1] <= $BUDGET)"
[ $flavour = kmod ] && cleanup_add "$AGGCTL" job del id $((JOB + 1))
check "then a job with new members is added" \
	agg job add id $((JOB + 1)) ps "$NET.2:47000" worker "$NET.20:$((PORT0 + 10))" \
	worker "$NET.21:$((PORT0 + 11))" fan-in 2
out=$(agg job show id $JOB)
check "and job $JOB's members are still bound on their ports" \
	grep -q "worker $W0:$PORT0 dev $(port w0)" <<< "$out"
tap_done
