#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PyTorch DDP through the ESA switch (esa.torch, train_digits.py), ranks in
# network namespaces behind the switch (tools/python/examples/ddp_netns.sh;
# the module flavour when the esa module is loaded, as in the VM):
#  - the same seed with the hook (every bucket verified against gloo's sum
#    within the fixed-point bound) and with plain gloo DDP: accuracy within
#    0.5 points, parameters bit-identical across ranks, the switch summed;
#  - huge gradients (loss scaled by 1e6): buckets redone at smaller scales,
#    counted, still within the bound; the switch counted overflows;
#  - a NaN loss: those buckets go through gloo, counted, ranks agree;
#  - gloo on a network of its own, the switch detached at step 20 and
#    attached at step 60; then, under policy atp, the PS (an esa-ps
#    process) killed at step 20 and started at step 60: training
#    completes, parameters bit-identical, accuracy within 0.5 points of
#    plain DDP's, every rank counts and logs a fallback and a return;
#  - a rank killed mid-training: the others exit on their own with the
#    hook's error within the bound, no process, namespace or pin is left.
# --quick (the VM list, under TCG): 2 ranks, one short run of the hook.
# usage: test_torch_ddp.sh [--quick]   (root; prints TAP)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AGGCTL=$ROOT/build/tools/aggctl
DDP_OUT=$(mktemp -d /tmp/esa-torch.XXXXXX)
case "${1:-}" in
--quick) QUICK=1 ;;
"") QUICK=0 ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
# shellcheck source=/dev/null
. "$ROOT/tools/python/examples/ddp_netns.sh"
. "$ROOT/selftests/lib/tap.sh"
cleanup() { ddp_down > /dev/null 2>&1; rm -rf "$DDP_OUT"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! /usr/bin/python3 -c 'import torch, sklearn' 2> /dev/null; then
	not_ok "/usr/bin/python3 has torch and sklearn (make deps-torch)"
	tap_done
fi
[ -x "$AGGCTL" ] || { not_ok "aggctl is built (make)"; tap_done; }

# q FILE... -- EXPR: a python expression over the ranks' JSON objects (R, a
# list) and the switch counters' delta (C, a dict) of a run; prints it.
q() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
args = sys.argv[1:]
name, expr, d, job = args[0], args[1], args[2], args[4]
R = []
for i in range(int(args[3])):
    try:
        R.append(json.load(open(f"{d}/{name}.r{i}.json")))
    except (OSError, ValueError):
        R.append(None)
def record(j):
    """aggctl -j stats job N: an object (maps flavour) or a list of
    records (module flavour)."""
    recs = j if isinstance(j, list) else [j]
    return next(r for r in recs if str(r.get("job")) == job)["dataplane"]
try:
    a, b = (record(json.load(open(f"{d}/{name}.job{k}"))) for k in "01")
    C = {k: b[k] - a[k] for k in b}
except (OSError, ValueError, KeyError, StopIteration):
    C = {}
print(eval(expr))
PY
}
qr() { q "$1" "$2" "$DDP_OUT" "$DDP_N" "$DDP_JOB"; }	# NAME EXPR
# run NAME COMM ARGS...: train, with the job's counters before and after.
run() {
	local name=$1 rc
	ddp_snap "$DDP_OUT/$name.job0"
	ddp_run "$@"
	rc=$?
	ddp_snap "$DDP_OUT/$name.job1"
	if [ $rc != 0 ]; then
		for f in "$DDP_OUT/$name".r*.err; do tail -3 "$f" | sed "s|^|# $(basename "$f"): |"; done
	fi
	return $rc
}
ranks_ok() { # NAME: every rank reported, all with the same parameters
	[ "$(qr "$1" 'all(R) and len({r["params_sha256"] for r in R}) == 1')" = True ]
}

if [ "$QUICK" = 1 ]; then RANKS=2; else RANKS=3; fi
if ! ddp_up "$RANKS"; then
	not_ok "topology: $RANKS ranks and a PS behind the switch, job $DDP_JOB"
	tap_done
fi
FLAVOUR=$(ddp_agg -j switch show | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["flavour"])')
echo "# switch flavour $FLAVOUR, $RANKS ranks, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -d /sys/module/esa ]; then
	check "esa module loaded: the switch is the module flavour ($FLAVOUR)" test "$FLAVOUR" = kmod
fi

if [ "$QUICK" = 1 ]; then
	T0=$SECONDS
	# TCG: importing torch takes a minute or more, ranks start far apart.
	if run quick esa --epochs 1 --verify --timeout-s 300 --progress && ranks_ok quick; then
		echo "# startup (imports, rendezvous, hook) $(qr quick '[r["startup_s"] for r in R]') s, ms/step $(qr quick '[r["ms_per_step"] for r in R]')"
		ok "$RANKS ranks train an epoch through the switch ($FLAVOUR): $(qr quick 'R[0]["accuracy"]')% accuracy, parameters identical, $((SECONDS - T0)) s"
	else
		not_ok "$RANKS ranks train an epoch through the switch ($FLAVOUR)"
	fi
	check "... every bucket within the bound of gloo's sum ($(qr quick 'max(r["hook"]["max_error_ratio"] for r in R if r)'))" \
		test "$(qr quick 'all(r["hook"]["verified_buckets"] == r["hook"]["buckets"] > 0 and r["hook"]["max_error_ratio"] <= 1 for r in R)')" = True
	check "... the switch summed: $(qr quick 'C.get("completed")') sums completed" \
		test "$(qr quick 'C.get("completed", 0) > 0 and C.get("aggregated", 0) > 0')" = True
	# 21 steps of the same seed reach 31 % (10 % is chance) on the host.
	check "... it learned: accuracy $(qr quick 'R[0] and R[0]["accuracy"]')% above twice chance" \
		test "$(qr quick 'all(r and r["accuracy"] > 20 for r in R)')" = True
	tap_done
fi

# ---- same seed: the hook against plain DDP ------------------------------
EPOCHS=15
T0=$SECONDS
run esa esa --epochs $EPOCHS --verify && ranks_ok esa
check "esa: $RANKS ranks x $EPOCHS epochs through the switch, parameters bit-identical across ranks ($((SECONDS - T0)) s)" test $? = 0
check "esa: every bucket within the fixed-point bound of gloo's sum (worst $(qr esa 'max(r["hook"]["max_error_ratio"] for r in R if r)') of it, $(qr esa 'R[0] and R[0]["hook"]["verified_buckets"]') buckets)" \
	test "$(qr esa 'all(r and r["hook"]["verified_buckets"] == r["hook"]["buckets"] > 0 and r["hook"]["max_error_ratio"] <= 1 for r in R)')" = True
check "esa: the switch summed the gradients ($(qr esa 'C.get("completed")') sums completed, $(qr esa 'C.get("aggregated")') packets aggregated)" \
	test "$(qr esa 'C.get("completed", 0) > 0 and C.get("aggregated", 0) >= C.get("completed", 0)')" = True
T0=$SECONDS
run gloo gloo --epochs $EPOCHS && ranks_ok gloo
check "gloo: the same training by plain DDP, its TCP through the switch ($((SECONDS - T0)) s)" test $? = 0
ea=$(qr esa 'R[0] and R[0]["accuracy"]') ga=$(qr gloo 'R[0] and R[0]["accuracy"]')
check "same seed: esa accuracy $ea% within 0.5 points of gloo's $ga%" \
	test "$(qr esa "R[0] is not None and abs(R[0]['accuracy'] - float('$ga' if '$ga' != 'None' else 'nan')) <= 0.5")" = True

# ---- huge gradients: the overflow path ----------------------------------
run ovf esa --epochs 2 --loss-scale 1e6 --verify && ranks_ok ovf
check "loss x 1e6: $RANKS ranks train, parameters bit-identical" test $? = 0
check "... buckets redone at a smaller scale, counted ($(qr ovf 'R[0] and (R[0]["hook"]["overflow_buckets"], R[0]["hook"]["redo_packets"], R[0]["hook"]["endpoint"]["f32_min_scale_log2"])') buckets, packets, scale)" \
	test "$(qr ovf 'all(r and r["hook"]["overflow_buckets"] > 0 and r["hook"]["redo_packets"] > 0 for r in R)')" = True
check "... every bucket still within the bound of gloo's sum (worst $(qr ovf 'max(r["hook"]["max_error_ratio"] for r in R if r)'))" \
	test "$(qr ovf 'all(r and r["hook"]["verified_buckets"] == r["hook"]["buckets"] and r["hook"]["max_error_ratio"] <= 1 for r in R)')" = True
check "... the switch counted saturated adds ($(qr ovf 'C.get("overflows")'))" \
	test "$(qr ovf 'C.get("overflows", 0) > 0')" = True

# ---- a NaN: through gloo ------------------------------------------------
run nan esa --epochs 1 --nan-step 4 && ranks_ok nan
check "NaN loss at step 4: every rank finishes, the same parameters" test $? = 0
check "... its buckets and all later ones summed through gloo, counted ($(qr nan 'R[0] and R[0]["hook"]["nonfinite_buckets"]') of $(qr nan 'R[0] and R[0]["hook"]["buckets"]'))" \
	test "$(qr nan 'all(r and 0 < r["hook"]["nonfinite_buckets"] < r["hook"]["buckets"] for r in R)')" = True

# ---- the switch, then the PS, away from step 20 to step 60 ----------------
# gloo on a network of its own (the switch forwarded its TCP too).
# fault_checks NAME WHAT: the fault run NAME's checks against plain DDP.
fault_checks() {
	local name=$1 what=$2 acc logged
	ranks_ok "$name"
	check "$what: $RANKS ranks x $EPOCHS epochs complete, parameters bit-identical ($((SECONDS - T0)) s)" test $? = 0
	acc=$(qr "$name" 'R[0] and R[0]["accuracy"]')
	check "... accuracy $acc% within 0.5 points of plain DDP's $ga%" \
		test "$(qr "$name" "R[0] is not None and abs(R[0]['accuracy'] - float('$ga' if '$ga' != 'None' else 'nan')) <= 0.5")" = True
	check "... every rank fell back and returned, counted: $(qr "$name" '[r and {k: round(r["hook"][k], 1) for k in ("fallbacks", "returns", "fallback_buckets", "probes", "switch_downtime_s")} for r in R]')" \
		test "$(qr "$name" 'all(r and r["hook"]["fallbacks"] >= 1 and r["hook"]["returns"] >= 1 and r["hook"]["fallback_buckets"] > 0 for r in R)')" = True
	logged=$(cat "$DDP_OUT/$name".r*.err | grep -c "switch -> gloo\|gloo -> switch")
	check "... each transition logged once per rank, with the cause ($logged lines)" \
		test "$logged" -gt 0 -a "$logged" = "$(qr "$name" 'sum(r["hook"]["fallbacks"] + r["hook"]["returns"] for r in R if r)')"
	grep -h "switch -> gloo" "$DDP_OUT/$name.r0.err" | head -1 | sed 's/^/# /'
}
if ddp_mgmt_up; then
	export ESA_DETECT_S=2 ESA_PROBE_S=1
	T0=$SECONDS
	ddp_fault_run detach detach --epochs $EPOCHS
	fault_checks detach "switch detached at step 20, attached at 60"
	T0=$SECONDS
	ddp_fault_run psdown ps --epochs $EPOCHS
	fault_checks psdown "policy atp, the PS (esa-ps) killed at step 20, started at 60"
	unset ESA_DETECT_S ESA_PROBE_S
else
	not_ok "a second network for gloo (a bridge in a namespace)"
fi

# ---- a rank killed mid-training -----------------------------------------
BOUND=10			# ESA_TIMEOUT_S: the hook's limit per bucket
export ESA_TIMEOUT_S=$BOUND
ddp_start kill esa --epochs 1000 --progress
unset ESA_TIMEOUT_S
read -ra pids <<< "$(ddp_pids)"
victim=$((RANKS - 1))
for ((i = 0; i < 600; i++)); do
	grep -q "step 20 " "$DDP_OUT/kill.r$victim.err" 2> /dev/null && break
	sleep 0.1
done
kill -9 "${pids[$victim]}"
T0=$SECONDS
alive=1
while ((SECONDS - T0 < 3 * BOUND)); do
	alive=0
	for ((r = 0; r < victim; r++)); do kill -0 "${pids[r]}" 2> /dev/null && alive=1; done
	[ $alive = 0 ] && break
	sleep 0.2
done
took=$((SECONDS - T0))
ddp_wait
if [ $alive = 0 ]; then
	ok "rank $victim killed after step 20: the other ranks exit on their own after $took s (limit $BOUND s per bucket)"
else
	not_ok "rank $victim killed: the other ranks still run after $took s"
fi
msgs=0
for ((r = 0; r < victim; r++)); do
	sed "s/^/# rank $r: /" "$DDP_OUT/kill.r$r.err" | grep -v " step " | tail -2
	grep -qi "esa.torch: rank $r: .*a rank may have died" "$DDP_OUT/kill.r$r.err" && msgs=$((msgs + 1))
done
check "... each with the hook's error naming the likely cause ($msgs of $victim)" test "$msgs" = "$victim"
left=
for ((r = 0; r < RANKS; r++)); do
	[ -n "$(ip netns pids "$(topo_worker_ns $r)" 2> /dev/null)" ] && left+=" rank$r"
done
[ -n "$(ip netns pids "$(topo_ps_ns "$DDP_JOB")" 2> /dev/null)" ] && left+=" ps"
check "... no process left in any host's namespace${left:+:$left}" test -z "$left"
ddp_down > /dev/null 2>&1
left=$(ip netns list | grep -c "^$TOPO_TAG-")
check "after the job: no namespace ($left) and no pin left (${TOPO_PIN})" \
	test "$left" = 0 -a ! -e "$TOPO_PIN"
tap_done