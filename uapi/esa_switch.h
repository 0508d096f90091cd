/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * What user space and the kernel say about the switch through the esa
 * generic netlink family (esa_genl.h) and the data plane's counters: the
 * size limit of the aggregator array, the policies, the counter indices.
 * How the data plane stores jobs and aggregators, and the kfuncs between
 * it and the module, are not UAPI: include/esa_dataplane.h,
 * include/esa_kfuncs.h.
 */
#ifndef _UAPI_ESA_SWITCH_H
#define _UAPI_ESA_SWITCH_H

#include <linux/types.h>
#include "esa_wire.h"

/*
 * Largest aggregator array the data plane accepts (slots), 1 << 20: the
 * bound of every aggregator count user space gives (capacity, slots,
 * quotas, static slices). An array this large is ~1.6 GB of kernel
 * memory (struct esa_agg is ~1.5 KiB), so nothing gets it by default.
 */
#define ESA_MAX_AGGREGATORS	1048576
/*
 * The aggregator array a data plane is loaded with unless told otherwise
 * (aggctl switch attach capacity N): ~100 MB.
 */
#define ESA_AGG_CAPACITY_DEFAULT	65536

/*
 * The protocol (NDA_PROTOCOL; `ip neigh show proto 229`) that marks the
 * neighbour entries aggctl makes for the members of jobs behind a
 * one-armed port (Documentation/deployment.rst): an entry without it is
 * not the switch's, and aggctl neither changes nor removes it.
 */
#define ESA_NEIGH_PROTO		229

enum esa_policy {
	ESA_POLICY_ESA		= 0,	/* preemptive, by priority */
	ESA_POLICY_ATP		= 1,	/* best effort; never preempts */
	ESA_POLICY_STATIC	= 2,	/* per-job slices (SwitchML-style) */
	__ESA_POLICY_MAX,
};

/*
 * Counters, one array per CPU, global and per job. The names in
 * esa_counter_names (tools) follow this order.
 */
enum esa_counter {
	ESA_CNT_RX,		/* aggregation packets seen */
	ESA_CNT_AGGREGATED,	/* packets whose values were added */
	ESA_CNT_COMPLETED,	/* aggregates completed in the switch */
	ESA_CNT_COLLISIONS,	/* packets sent on unaggregated */
	ESA_CNT_PREEMPTIONS,	/* aggregators taken from another job */
	ESA_CNT_EVICTIONS,	/* partial sums evicted (this job was the victim) */
	ESA_CNT_RESENDS,	/* resend packets */
	ESA_CNT_DUPLICATES,	/* retransmissions already counted */
	ESA_CNT_RESULTS,	/* results passed to workers */
	ESA_CNT_OVERFLOWS,	/* packets with a saturated value */
	ESA_CNT_FORWARDED,	/* non-aggregation frames switched at L2 */
	ESA_CNT_DROP_MALFORMED,	/* bad version, flags, counts or fan-in */
	ESA_CNT_DROP_TRUNCATED,	/* shorter than its headers say */
	ESA_CNT_DROP_UNKNOWN_JOB,
	ESA_CNT_DROP_RANGE,	/* aggregator index out of range */
	ESA_CNT_DROP_PORT,	/* sender is not a member of the job */
	ESA_CNT_PULLS,		/* resend requests passed to workers */
	/*
	 * Partial sums that left the switch by a resend flush or a reclaim:
	 * claims that ended without completing in the switch (a preemption
	 * is counted as EVICTIONS instead). Counted for the sum's job.
	 */
	ESA_CNT_STRANDED,
	/* microseconds those partials held their aggregator (an amount) */
	ESA_CNT_STRANDED_US,
	/*
	 * Partial sums sent to the PS as soon as every worker was in them or
	 * had already left the switch (collision, eviction, flush), instead
	 * of waiting for a resend or the reclaim.
	 */
	ESA_CNT_EARLY_PARTIALS,
	/*
	 * Frames (any kind) claiming an address bound to another port,
	 * dropped before anything is learned from them; counted for the job
	 * that bound the address. Not part of RX.
	 */
	ESA_CNT_DROP_SPOOF,
	/*
	 * Frames dropped because their aggregator's lock stayed held through
	 * the data plane's bounded wait (another CPU's step stalled);
	 * endpoints recover them as losses, by their resend. Part of RX.
	 */
	ESA_CNT_DROP_BUSY,
	/*
	 * Frames of a job with a token whose token is wrong or missing, and
	 * version-2 frames of a job without one (Documentation/
	 * security.rst); checked as soon as the job is known. Part of RX.
	 */
	ESA_CNT_DROP_TOKEN,
	/*
	 * Aggregation traffic for the other mode of port: UDP to
	 * ESA_UDP_PORT on a one-armed port but not to its address, or to a
	 * one-armed port's address but on a per-host port. Part of RX.
	 */
	ESA_CNT_DROP_MODE,
	/*
	 * Frames a one-armed port could not send: the kernel's routing has
	 * no next hop for the recipient on that port, or its neighbour entry
	 * is not resolved yet (endpoints recover them by their resend).
	 */
	ESA_CNT_DROP_NEXTHOP,
	__ESA_CNT_MAX,
};

/*
 * Counters that grow by an amount (esa_acct_opts.amount) rather than by
 * one per event.
 */
#define ESA_CNT_IS_AMOUNT(c)	((c) == ESA_CNT_STRANDED_US)

#endif /* _UAPI_ESA_SWITCH_H */
