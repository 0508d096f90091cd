#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The oversubscription sweep of Documentation/evaluation.rst: every
# scenario (a job-width mix) at every oversubscription factor and load,
# under each of its policies, with esa-sim sweep.
#
#   sweep-oversub.sh [-o DIR] [--oversub X,X,...] [--load X,X,...] [SCENARIO...]
#
# Oversubscription X means the aggregators wanted by every job's window
# together (jobs x window) over the array: the array has
# round(jobs x window / X) slots, at least 1. Defaults: the two shipped
# mixes (scenarios/mix-narrow.scn, mix-wide.scn), X = 1,2,4,8,12,16,24,
# loads 0.25, 1 and 4 (arrival rate factors), DIR build/esa-sim/oversub.
# Writes each point's outputs in DIR/<mix>/slots<S>-load<L>/ and one table,
# DIR/oversub.csv:
#   mix,oversub,slots,load,avg_jct_esa,avg_jct_atp,avg_jct_static,esa_vs_atp,esa_vs_static
# (the last two: ATP's and static's average JCT over ESA's), and prints it.
set -u
SIM_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$SIM_DIR/../.." && pwd)
SIM=$ROOT/build/tools/esa-sim
OUT=$ROOT/build/esa-sim/oversub
OVERSUB=1,2,4,8,12,16,24
LOAD=0.25,1,4

die() { echo "sweep-oversub: $*" >&2; exit 2; }
# A comma-separated list of positive numbers (whole ones if $2 = int).
list_ok() {
	local re='^[0-9]+(\.[0-9]+)?$' x
	[ "$2" = int ] && re='^[1-9][0-9]*$'
	[ -n "$1" ] || return 1
	for x in ${1//,/ }; do
		[[ $x =~ $re ]] && awk -v x="$x" 'BEGIN { exit !(x > 0) }' || return 1
	done
}
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || die "-o needs a directory"; OUT=$2; shift 2 ;;
	--oversub) [ $# -ge 2 ] && list_ok "$2" int || die "--oversub needs whole factors, e.g. 1,8,24"
		OVERSUB=$2; shift 2 ;;
	--load) [ $# -ge 2 ] && list_ok "$2" real || die "--load needs positive factors, e.g. 1,4"
		LOAD=$2; shift 2 ;;
	-h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- "$SIM_DIR/scenarios/mix-narrow.scn" "$SIM_DIR/scenarios/mix-wide.scn"
[ -x "$SIM" ] || die "no $SIM: run make"
mkdir -p "$OUT" || die "cannot create $OUT"

table=$OUT/oversub.csv
echo "mix,oversub,slots,load,avg_jct_esa,avg_jct_atp,avg_jct_static,esa_vs_atp,esa_vs_static" > "$table"
for scn in "$@"; do
	[ -r "$scn" ] || die "cannot read scenario '$scn'"
	mix=$(basename "$scn" .scn)
	# "FILE: N jobs, S aggregators, V values per packet, window W, ..."
	head=$("$SIM" check "$scn" | head -1) || exit 2
	want=$(sed -n 's/.*: \([0-9]*\) jobs, .* window \([0-9]*\),.*/\1 \2/p' <<< "$head" |
		awk '{ print $1 * $2 }')
	[ -n "$want" ] || die "$scn: cannot read its jobs and window from esa-sim check"
	slots=
	for x in ${OVERSUB//,/ }; do
		s=$(awk -v w="$want" -v x="$x" 'BEGIN { s = int(w / x + 0.5); print s < 1 ? 1 : s }')
		slots+="${slots:+,}$s"
	done
	"$SIM" sweep --no-plots --quiet --slots "$slots" --load "$LOAD" -o "$OUT/$mix" "$scn" \
		> "$OUT/$mix.log" 2>&1 || { cat "$OUT/$mix.log" >&2; exit 1; }
	# sweep.csv: slots,load,avg_jct_<policy>...,esa_vs_atp,esa_vs_static
	awk -F, -v mix="$mix" -v want="$want" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{
			printf "%s,%.1f,%s,%s", mix, want / $1, $1, $2
			n = split("avg_jct_esa avg_jct_atp avg_jct_static esa_vs_atp esa_vs_static", k, " ")
			for (i = 1; i <= n; i++)
				printf ",%s", (k[i] in col) ? $col[k[i]] : ""
			printf "\n"
		}' "$OUT/$mix/sweep.csv" >> "$table"
done
column -s, -t < "$table"
echo "sweep-oversub: $table"
