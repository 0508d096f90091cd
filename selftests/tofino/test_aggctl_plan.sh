#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-tofino plans what a real aggctl prints: a module-less switch in a
# namespace of its own holds three jobs (one without a quota), `aggctl -j job show` and `switch
# show` go to esa-tofino plan with a port map, and the plan has the jobs'
# slices, members and groups; after `policy set esa` and `switch set
# slots`, the plan follows.
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/topo.sh
AGGCTL=$PWD/build/tools/aggctl
PLAN=(/usr/bin/python3 p4/tofino/esa-tofino plan)

need_root "aggctl descriptions planned"
if grep -q '^esa ' /proc/modules 2> /dev/null; then
	skip "aggctl descriptions planned" "the esa module is loaded: aggctl would use it"
	tap_done
fi
[ -x "$AGGCTL" ] || bail "no $AGGCTL (make all)"

TMP=$(mktemp -d)
cleanup_add rm -rf "$TMP"
switch_add sw
host_add h1 198.18.0.1/24 || bail "a switch port"
PIN=$(pin_path sw)
A=(in_ns sw "$AGGCTL" -d "$PIN")
cleanup_add "${A[*]} switch unload"
cleanup_add "${A[*]} switch detach dev $(port h1)"

check "module-less switch attached" "${A[@]}" switch attach dev "$(port h1)" capacity 256
check "job 1 added" "${A[@]}" job add id 1 ps 198.18.0.10:47000 worker 198.18.0.1:5000 \
	worker 198.18.0.2:5000 quota 16 priority 3
check "job 2 added" "${A[@]}" job add id 2 ps 198.18.0.11:47000 worker 198.18.0.3:5001 \
	worker 198.18.0.4:5001 worker 198.18.0.5:5001 quota 8 priority 7
check "job 4 added, no quota" "${A[@]}" job add id 4 ps 198.18.0.11:47000 worker 198.18.0.5:5002 \
	worker 198.18.0.4:5002
check "policy static" "${A[@]}" policy set static
cat > "$TMP/ports.json" << 'EOF2'
{"hosts": {"198.18.0.1": {"port": 1, "mac": "02:00:00:00:00:01"},
           "198.18.0.2": {"port": 2, "mac": "02:00:00:00:00:02"},
           "198.18.0.3": {"port": 3, "mac": "02:00:00:00:00:03"},
           "198.18.0.4": {"port": 4, "mac": "02:00:00:00:00:04"},
           "198.18.0.5": {"port": 5, "mac": "02:00:00:00:00:05"},
           "198.18.0.10": {"port": 10, "mac": "02:00:00:00:00:0a"},
           "198.18.0.11": {"port": 11, "mac": "02:00:00:00:00:0b"}}}
EOF2

# plan_has DESC PYTHON-EXPR: the plan of the current aggctl state, as p.
plan_has() {
	local desc=$1 expr=$2
	if ! "${A[@]}" -j job show > "$TMP/jobs.json" ||
		! "${A[@]}" -j switch show > "$TMP/switch.json"; then
		not_ok "$desc (aggctl -j failed)"
		return
	fi
	check "$desc" /usr/bin/python3 -c "
import json, subprocess, sys
r = subprocess.run('${PLAN[*]} --jobs $TMP/jobs.json --switch $TMP/switch.json --ports $TMP/ports.json'.split(),
                   capture_output=True, text=True)
if r.returncode:
    sys.exit(r.stderr)
p = json.loads(r.stdout)
job = {e['key']['hdr.esa.job_id']: e['data'] for e in p['entries'] if e['table'].endswith('.esa_job')}
members = [tuple(e['key'].values()) for e in p['entries'] if e['table'].endswith('.esa_member')]
groups = {g['mgid']: g['nodes'] for g in p['groups']}
cfg = p['defaults'][0]['data']
ok = $expr
if not ok:
    sys.exit('unexpected plan: ' + json.dumps(p)[:2000])
"
}

plan_has "static: slices 0..15 and 16..23 from aggctl, policy 2" \
	"job[1]['base'] == 0 and job[1]['quota'] == 16 and job[2]['base'] == 16 and job[2]['quota'] == 8 and cfg['policy'] == 2"
plan_has "static: a job without a quota gets what the quotas leave" \
	"job[4]['base'] == 24 and job[4]['base'] + job[4]['quota'] == json.load(open('$TMP/switch.json'))['agg_slots']"
plan_has "static: members bound to their ports, groups with the PS" \
	"sorted(members) == [(1, 1, '198.18.0.1', 5000, 1), (1, 2, '198.18.0.2', 5000, 2), (2, 1, '198.18.0.3', 5001, 3), (2, 2, '198.18.0.4', 5001, 4), (2, 4, '198.18.0.5', 5001, 5), (4, 1, '198.18.0.5', 5002, 5), (4, 2, '198.18.0.4', 5002, 4)] and groups[2] == [[0, 3], [1, 4], [2, 5], [65535, 11]]"
check "policy esa" "${A[@]}" policy set esa
check "200 slots, timeout 1000 us" "${A[@]}" switch set slots 200 timeout 1000
plan_has "esa: both jobs index all 200 slots, 1000 us = 16 time units" \
	"job[1]['quota'] == job[2]['quota'] == job[4]['quota'] == 200 and job[2]['base'] == 0 and cfg == {'policy': 0, 'timeout': 16, 'partial_floor': 0, 'hold': 0}"
check "a job whose worker the port map lacks" "${A[@]}" job add id 3 ps 198.18.0.10:47000 worker 198.18.0.99:5000
"${A[@]}" -j job show > "$TMP/jobs.json"
check_fails "is refused by esa-tofino" "${PLAN[@]}" --jobs "$TMP/jobs.json" --switch "$TMP/switch.json" --ports "$TMP/ports.json"
tap_done
