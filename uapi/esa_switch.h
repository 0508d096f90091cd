/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * ESA switch state shared by the XDP data plane, the kernel module and user
 * space: policies, the job record the data plane consults, arbitration
 * verdicts, counter indices, and the kfunc interface of the module flavour.
 */
#ifndef _UAPI_ESA_SWITCH_H
#define _UAPI_ESA_SWITCH_H

#include <linux/types.h>
#include "esa_wire.h"

/* Largest aggregator array the data plane accepts (slots). */
#define ESA_MAX_AGGREGATORS	65536

enum esa_policy {
	ESA_POLICY_ESA		= 0,	/* preemptive, by priority */
	ESA_POLICY_ATP		= 1,	/* best effort; never preempts */
	ESA_POLICY_STATIC	= 2,	/* per-job slices (SwitchML-style) */
	__ESA_POLICY_MAX,
};

/*
 * A job as the data plane sees it. The module flavour gets it from the
 * esa_job_lookup() kfunc; the module-less flavour reads it from a BPF hash
 * map keyed by job_id. Addresses are IPv4 in network byte order.
 */
struct esa_job_info {
	__u32	job_id;			/* 1..ESA_MAX_JOB_ID */
	__u8	fan_in;			/* workers, 1..ESA_MAX_WORKERS */
	__u8	priority;		/* effective priority now */
	__u8	pad[2];
	__u32	agg_base;		/* first slot of the job's slice */
	__u32	agg_quota;		/* slots: the static slice, 0 = none */
	__be32	ps_addr;		/* the job's parameter server */
	__be16	ps_port;		/* its UDP port */
	__u8	pad2[2];
	__be32	worker_addr[ESA_MAX_WORKERS];	/* worker i has bit i */
	__be16	worker_port[ESA_MAX_WORKERS];	/* worker i's UDP port */
};

/*
 * Switch-wide settings. The module flavour gets them from the
 * esa_config_get() kfunc (the module owns them); the module-less flavour
 * reads them from a one-entry BPF array map.
 */
struct esa_switch_config {
	__u32	policy;			/* enum esa_policy */
	__u32	agg_slots;		/* aggregators in use, <= ESA_MAX_AGGREGATORS */
	__u32	agg_timeout_us;		/* idle partial older than this may be reclaimed */
	__u32	pad;
};

/* What to do with a packet of job A that finds an aggregator held by job B. */
enum esa_arb_verdict {
	ESA_ARB_COLLIDE		= 0,	/* A goes unaggregated to its PS */
	ESA_ARB_PREEMPT		= 1,	/* B's partial is evicted, A claims */
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
	__ESA_CNT_MAX,
};

/*
 * Counters that grow by an amount (esa_acct_opts.amount) rather than by
 * one per event.
 */
#define ESA_CNT_IS_AMOUNT(c)	((c) == ESA_CNT_STRANDED_US)

/* Opts of the module flavour's arbitration kfunc (extensible by __sz). */
struct esa_arb_opts {
	__u32	agg_index;
	__u32	owner_job_id;		/* current holder */
	__u8	owner_priority;		/* holder's priority when it claimed */
	__u8	prio;			/* newcomer's packet priority */
	__u8	pad[2];
	__u32	owner_workers;		/* workers already summed by the holder */
};

/* Accounting passed to the module flavour's esa_account() kfunc. */
struct esa_acct_opts {
	__u32	event;			/* enum esa_counter */
	/*
	 * AGGREGATED: the value bytes added; an ESA_CNT_IS_AMOUNT counter:
	 * what it grows by; 0 otherwise.
	 */
	__u32	amount;
};

/*
 * esa_account() events beyond enum esa_counter: aggregator ownership, so
 * the module can count the aggregators each job holds (occupancy).
 * CLAIM: a slot became owned by the job (free slot, preemption, reclaim).
 * RELEASE: a slot the job owned stopped being its own (completed and
 * freed, result passed, flushed by a resend, evicted, reclaimed).
 * Counters are not implied: a preemption also sends ESA_CNT_PREEMPTIONS
 * for the winner, ESA_CNT_EVICTIONS and RELEASE for the victim.
 */
enum esa_acct_event {
	ESA_ACCT_CLAIM		= 0x100,
	ESA_ACCT_RELEASE	= 0x101,
};

#endif /* _UAPI_ESA_SWITCH_H */
