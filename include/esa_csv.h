/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CSV files esa-bench and esa-sim write (Documentation/esa-bench.rst,
 * "Outputs"): their header lines, the one definition of their columns.
 * esa-sim writes them from C; esa-bench's scripts read these strings from
 * this file (tools/esa-bench/csv_schema.py), as do the readers through
 * the header line. A macro is a string literal or a run of literals and
 * earlier ESA_CSV_ macros, so that the Python side can evaluate it.
 */
#ifndef _ESA_CSV_H
#define _ESA_CSV_H

/* jct.csv: one row per job and run, its job completion time. */
#define ESA_CSV_JCT \
	"policy,run,job,workers,size,iterations,arrival_ms,ok,jct_s"

/*
 * stats.csv: one row per job and sample. The columns after the fixed ones
 * are data plane counters (running totals), named as esa_counter_name()
 * names them.
 */
#define ESA_CSV_STATS_FIXED	"policy,run,t_s,job,occupancy"
#define ESA_CSV_STATS \
	ESA_CSV_STATS_FIXED ",aggregated,completed,collisions,preemptions," \
	"evictions,stranded,stranded_us,early_partials"

#endif /* _ESA_CSV_H */
