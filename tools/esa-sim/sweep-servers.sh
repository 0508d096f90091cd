#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The switch-server sweep of Documentation/evaluation.rst: one scenario at
# every number of switch servers S (its switch line's servers=, set here),
# under its first policy, with esa-sim.
#
#   sweep-servers.sh [-o DIR] [--servers S,S,...] [SCENARIO]
#
# Defaults: scenarios/servers.scn, S = 1,2,4,8, DIR build/esa-sim/servers.
# Goodput is the gradient the jobs reduced (size x iterations over every
# job) in Gbit/s over the virtual time the run took; scaling is goodput
# over S = 1's (the first S given). Writes DIR/servers.csv:
#   servers,goodput_gbps,avg_jct_s,scaling,jct_vs_first
# and prints it.
set -u
SIM_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$SIM_DIR/../.." && pwd)
SIM=$ROOT/build/tools/esa-sim
OUT=$ROOT/build/esa-sim/servers
SERVERS=1,2,4,8

die() { echo "sweep-servers: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || die "-o needs a directory"; OUT=$2; shift 2 ;;
	--servers) [ $# -ge 2 ] && [[ $2 =~ ^([1-9]|1[0-6])(,([1-9]|1[0-6]))*$ ]] ||
			die "--servers needs whole numbers 1..16, e.g. 1,2,4"
		SERVERS=$2; shift 2 ;;
	-h|--help) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || die "one scenario at most"
SCN=${1:-$SIM_DIR/scenarios/servers.scn}
[ -r "$SCN" ] || die "cannot read scenario '$SCN'"
[ -x "$SIM" ] || die "no $SIM: run make"
grep -Eq '^switch .*servers=' "$SCN" && die "$SCN sets servers= itself; the sweep sets it"
mkdir -p "$OUT" || die "cannot create $OUT"

table=$OUT/servers.csv
echo "servers,goodput_gbps,avg_jct_s,scaling,jct_vs_first" > "$table"
first_gp='' first_jct=''
for S in ${SERVERS//,/ }; do
	dir=$OUT/s$S
	mkdir -p "$dir" || die "cannot create $dir"
	sed -E "s/^(switch .*)$/\1 servers=$S/" "$SCN" > "$dir/scenario.scn"
	"$SIM" --no-plots --quiet -o "$dir" "$dir/scenario.scn" > "$dir.log" 2>&1 ||
		{ cat "$dir.log" >&2; die "servers=$S failed (above)"; }
	# jct.csv: policy,run,job,workers,size,iterations,arrival_ms,ok,jct_s;
	# perf.txt: "policy P: ..., virtual T s, ..." (the first policy's)
	end=$(sed -n '1s/.* virtual \([0-9.]*\) s,.*/\1/p' "$dir/perf.txt")
	pol=$(sed -n '1s/^policy \([a-z]*\):.*/\1/p' "$dir/perf.txt")
	row=$(awk -F, -v p="$pol" -v end="$end" '$1 == p {
			bytes += $5 * $6; jct += $9; n++
		} END { if (n && end > 0) printf "%.3f %.6f", bytes * 8 / end / 1e9, jct / n }' "$dir/jct.csv")
	[ -n "$row" ] || die "servers=$S: no jobs in $dir/jct.csv"
	read -r gp jct <<< "$row"
	[ -n "$first_gp" ] || { first_gp=$gp; first_jct=$jct; }
	awk -v s="$S" -v gp="$gp" -v jct="$jct" -v g0="$first_gp" -v j0="$first_jct" \
		'BEGIN { printf "%s,%s,%s,%.2f,%.2f\n", s, gp, jct, gp / g0, jct / j0 }' >> "$table"
done
column -s, -t < "$table"
echo "sweep-servers: $table"
