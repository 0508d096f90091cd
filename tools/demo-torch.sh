#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo-torch`: PyTorch DDP through the ESA switch. RANKS ranks (4) in
# network namespaces behind the switch on this machine train the same CNN
# on scikit-learn's digits (tools/python/examples/train_digits.py) with the
# same seed twice: gradients through the switch (the esa.torch hook; rank
# 0 serves the job's PS in the PS host's namespace) and by plain DDP with
# gloo (its TCP through the same switch, hosts with default offloads).
# RUNS (1) pairs, interleaved; EPOCHS (15). Prints accuracy, ms per step
# and the switch's counters of each run, then
#   torch esa_acc=<a> gloo_acc=<a> esa_ms_per_step=<t> gloo_ms_per_step=<t>
# Results (JSON per rank, counters) in build/demo-torch. The switch is the
# module flavour if the esa module is loaded, else the module-less one.
# FAULT=detach: gloo gets a network of its own, and in each esa run the
# data plane is detached from the switch ports at step 20 and attached
# again at step 60: the hook falls back to gloo and comes back (its
# fallbacks, returns and time away in the table). FAULT=ps: the same
# with the job's PS an esa-ps process under policy atp, killed at step 20
# and started again at step 60.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGGCTL=$ROOT/build/tools/aggctl
DDP_OUT=$ROOT/build/demo-torch
RANKS=${RANKS:-4}
RUNS=${RUNS:-1}
EPOCHS=${EPOCHS:-15}
FAULT=${FAULT:-}

for f in "$AGGCTL" "$ROOT/build/libesa.so"; do
	[ -e "$f" ] || { echo "demo-torch: $f missing: run make" >&2; exit 1; }
done
/usr/bin/python3 -c 'import torch, sklearn' 2>/dev/null ||
	{ echo "demo-torch: /usr/bin/python3 lacks torch or sklearn: run make deps" >&2; exit 1; }
rm -rf "$DDP_OUT"
mkdir -p "$DDP_OUT"
. "$ROOT/tools/python/examples/ddp_netns.sh"
trap ddp_down EXIT
trap 'exit 130' INT TERM

if [ -d /sys/module/esa ]; then
	echo "demo-torch: the esa module is loaded: module flavour"
else
	echo "demo-torch: no esa module loaded: the module-less flavour"
fi
ddp_up "$RANKS" || { echo "demo-torch: the topology or the switch failed" >&2; exit 1; }
case $FAULT in
"") ;;
detach | ps)
	ddp_mgmt_up || { echo "demo-torch: the network for gloo failed" >&2; exit 1; }
	echo "demo-torch: FAULT=$FAULT: the $([ "$FAULT" = ps ] && echo "PS killed" || echo "switch detached") at step 20, back at step 60 of each esa run; gloo on a network of its own"
	;;
*) echo "demo-torch: FAULT=$FAULT: not one of: detach, ps" >&2; exit 1 ;;
esac
echo "demo-torch: $RANKS ranks, $EPOCHS epochs, $RUNS run(s) each, load: $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
for ((i = 1; i <= RUNS; i++)); do
	for comm in esa gloo; do
		echo "demo-torch: run $i/$RUNS, $comm ..." >&2
		ddp_snap "$DDP_OUT/$comm$i.job0"
		ddp_agg -j stats > "$DDP_OUT/$comm$i.all0"
		if [ -n "$FAULT" ] && [ $comm = esa ]; then
			train=(ddp_fault_run "$comm$i" "$FAULT")
		else
			train=(ddp_run "$comm$i" "$comm")
		fi
		if ! "${train[@]}" --epochs "$EPOCHS"; then
			echo "demo-torch: run $i $comm failed:" >&2
			cat "$DDP_OUT/$comm$i".r*.err >&2
			rc=1
		fi
		ddp_snap "$DDP_OUT/$comm$i.job1"
		ddp_agg -j stats > "$DDP_OUT/$comm$i.all1"
	done
done
/usr/bin/python3 "$ROOT/tools/python/examples/ddp_report.py" "$DDP_OUT" "$RUNS" "$DDP_JOB" || rc=1
exit $rc
