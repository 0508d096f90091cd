# SPDX-License-Identifier: GPL-2.0
# esa-bench plots (sourced, bash): PNGs from the CSV files of one run.
#
#   plot_occupancy STATS_CSV OUT_PNG   aggregators held per job over time,
#                                      and those held by sums that ended
#                                      stranded, one panel per policy
#   plot_jct JCT_CSV OUT_PNG           JCT per job, one bar per policy
#   cdf_csv JCT_CSV, plot_cdf CDF_CSV OUT_PNG   the JCT distribution per
#                                      policy (esa-sim)
#
# The CSV columns are those esa-bench writes (Documentation/esa-bench.rst).

# plot_occupancy: stats.csv columns policy,run,t_s,job,occupancy,...,
# stranded_us (the first run of each policy). The stranded line is the
# growth of stranded_us over each sample interval divided by the interval:
# how many aggregators, on average, were held by partial sums that then
# left by a resend flush or a reclaim instead of completing.
plot_occupancy() {
	local csv=$1 png=$2 dir policies p jobs j n i=0 plots
	dir=$(mktemp -d)
	policies=$(awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$csv")
	jobs=$(awk -F, 'NR > 1 && !seen[$4]++ { print $4 }' "$csv" | sort -n)
	n=$(echo "$policies" | wc -w)
	[ "$n" -gt 0 ] || { echo "esa-bench: no samples in $csv to plot" >&2; rm -rf "$dir"; return 1; }
	{
		echo "set terminal pngcairo size 900,$((260 * n)) font ',10'"
		echo "set output '$png'"
		echo "set datafile separator ','"
		echo "set multiplot layout $n,1"
		echo "set xlabel 'time (s)'; set ylabel 'aggregators held'; set key outside right; set yrange [0:*]"
		for p in $policies; do
			plots=
			for j in $jobs; do
				awk -F, -v p="$p" -v j="$j" '
					NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
					$1 == p && $2 == 1 && $4 == j {
						t = $3; su = $col["stranded_us"]
						held = n++ && t > pt ? (su - psu) / ((t - pt) * 1e6) : 0
						print t "," $col["occupancy"] "," held
						pt = t; psu = su
					}' "$csv" > "$dir/$p-$j.dat"
				plots+="${plots:+, }'$dir/$p-$j.dat' using 1:2 with steps lw 2 lc $j title 'job $j'"
				plots+=", '$dir/$p-$j.dat' using 1:3 with steps lw 1 dt 2 lc $j title 'job $j stranded'"
			done
			echo "set title 'policy $p'"
			echo "plot $plots"
		done
		echo "unset multiplot"
	} > "$dir/plot.gp"
	gnuplot "$dir/plot.gp"
	local rc=$?
	rm -rf "$dir"
	return $rc
}

# plot_jct: jct.csv columns policy,run,job,...,jct_s (last column); the
# mean over runs
plot_jct() {
	local csv=$1 png=$2 dir policies np c
	dir=$(mktemp -d)
	policies=$(awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$csv")
	[ -n "$policies" ] || { echo "esa-bench: no job finished: nothing to plot" >&2; rm -rf "$dir"; return 1; }
	# One row per job, one column per policy, for a clustered histogram.
	awk -F, -v pols="$policies" '
		BEGIN { np = split(pols, P, /[ \n]+/) }
		NR > 1 { jct[$3, $1] += $NF; n[$3, $1]++; if (!seen[$3]++) jobs[++nj] = $3 }
		END {
			printf "job"; for (i = 1; i <= np; i++) printf ",%s", P[i]; print ""
			for (k = 1; k <= nj; k++) {
				printf "%s", jobs[k]
				for (i = 1; i <= np; i++)
					printf ",%.3f", jct[jobs[k], P[i]] / n[jobs[k], P[i]]
				print ""
			}
		}' "$csv" > "$dir/jct.dat"
	{
		echo "set terminal pngcairo size 800,450 font ',10'"
		echo "set output '$png'"
		echo "set datafile separator ','"
		echo "set style data histogram; set style histogram clustered gap 1"
		echo "set style fill solid 0.8 border -1; set boxwidth 0.9"
		echo "set key autotitle columnhead; set yrange [0:*]"
		echo "set offsets 0, 0, graph 0.1, 0"
		echo "set xlabel 'job'; set ylabel 'job completion time (s)'"
		echo "set title 'JCT per job and policy'"
		printf "plot '%s' using 2:xtic(1)" "$dir/jct.dat"
		np=$(echo "$policies" | wc -w)
		for ((c = 3; c <= np + 1; c++)); do printf ", '' using %d" $c; done
		echo
	} > "$dir/plot.gp"
	gnuplot "$dir/plot.gp"
	local rc=$?
	rm -rf "$dir"
	return $rc
}

# cdf_csv JCT_CSV: the JCT distribution per policy (first run), as
# policy,jct_s,fraction rows: fraction = share of jobs done within jct_s.
cdf_csv() {
	echo "policy,jct_s,fraction"
	awk -F, 'NR > 1 && $2 == 1 { print $1 "," $NF }' "$1" | sort -t, -k1,1 -k2,2g |
		awk -F, '{ p[NR] = $1; v[NR] = $2; n[$1]++ }
			END { for (i = 1; i <= NR; i++) { k[p[i]]++; printf "%s,%s,%.4f\n", p[i], v[i], k[p[i]] / n[p[i]] } }'
}

# plot_cdf CDF_CSV OUT_PNG: one step line per policy (cdf_csv's rows)
plot_cdf() {
	local csv=$1 png=$2 dir policies p plots=
	dir=$(mktemp -d)
	policies=$(awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$csv")
	[ -n "$policies" ] || { echo "esa-bench: no JCTs to plot" >&2; rm -rf "$dir"; return 1; }
	for p in $policies; do
		awk -F, -v p="$p" 'NR > 1 && $1 == p { print $2 "," $3 }' "$csv" > "$dir/$p.dat"
		plots+="${plots:+, }'$dir/$p.dat' using 1:2 with steps lw 2 title '$p'"
	done
	{
		echo "set terminal pngcairo size 800,450 font ',10'"
		echo "set output '$png'"
		echo "set datafile separator ','"
		echo "set xlabel 'job completion time (s)'; set ylabel 'fraction of jobs'"
		echo "set yrange [0:1.02]; set key bottom right; set grid"
		echo "set title 'JCT CDF per policy'"
		echo "plot $plots"
	} > "$dir/plot.gp"
	gnuplot "$dir/plot.gp"
	local rc=$?
	rm -rf "$dir"
	return $rc
}
