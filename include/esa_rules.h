/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules of the switch, one authority for every flavour: what makes a
 * job record and the switch settings valid, how the static slices are
 * laid out, what a quota caps, which job wins a contended aggregator, and
 * the least-attained-service priority.
 *
 * Pure C, the way the kernel shares lib/ with tools/: fixed-width types
 * from <linux/types.h>, errno values from <linux/errno.h>, nothing of the
 * kernel or of libc. lib/esa_rules.c builds into the module
 * (kmod/esa_rules.c), the module-less loader (tools/lib/dp/esa_dp.c) and the
 * simulator (tools/esa-sim); the two rules the data path applies per
 * packet are static inline below, so the XDP data plane compiles the very
 * same code.
 */
#ifndef _ESA_RULES_H
#define _ESA_RULES_H

#include <linux/types.h>
#include <linux/errno.h>
#include "esa_switch.h"
#include "esa_genl.h"
#include "esa_dataplane.h"

/*
 * A number macro's value as a string literal, for the messages that name
 * a limit (ESA_RULES_STR(ESA_MAX_AGGREGATORS) is "1048576").
 */
#define ESA_RULES_STR_(x)	#x
#define ESA_RULES_STR(x)	ESA_RULES_STR_(x)

/* What to do with a packet of job A that finds an aggregator held by job B. */
enum esa_arb_verdict {
	ESA_ARB_COLLIDE		= 0,	/* A goes unaggregated to its PS */
	ESA_ARB_PREEMPT		= 1,	/* B's partial is evicted, A claims */
};

/* What a refusal concerns, so each caller can point at its own input. */
enum esa_rules_field {
	ESA_RULES_F_NONE,
	ESA_RULES_F_JOB_ID,
	ESA_RULES_F_FAN_IN,
	ESA_RULES_F_PRIORITY,
	ESA_RULES_F_QUOTA,
	ESA_RULES_F_PS_ADDR,
	ESA_RULES_F_PS_PORT,
	ESA_RULES_F_WORKER,		/* the whole worker entry (index) */
	ESA_RULES_F_WORKER_ADDR,	/* index */
	ESA_RULES_F_WORKER_PORT,	/* index */
	ESA_RULES_F_SLICE,
	ESA_RULES_F_POLICY,
	ESA_RULES_F_AGG_SLOTS,
	ESA_RULES_F_TIMEOUT,
};

/* Why a check failed: a message for people, the field, a worker index. */
struct esa_rules_err {
	const char *msg;
	enum esa_rules_field field;
	unsigned int index;
};

/*
 * A job record as every flavour stores it (the module keeps it in its job
 * table, the module-less flavour in the esa_jobs map). 0, or -EINVAL /
 * -ERANGE with @err filled (@err may be NULL). Checked in this order:
 * id, fan-in, each worker (address, port, duplicate of an earlier one),
 * PS address and port (ESA_UDP_PORT: the switch takes aggregation packets
 * to that port only), priority mode, quota, static slice.
 */
int esa_rules_check_job(const struct esa_job_info *job,
			struct esa_rules_err *err);

/* Switch settings (policy, agg_slots, agg_timeout_us); same contract. */
int esa_rules_check_config(const struct esa_switch_config *cfg,
			   struct esa_rules_err *err);

/* One job's place in the aggregator array: its quota in, its slice out. */
struct esa_rules_slice {
	__u32 quota;		/* in: aggregators asked for, 0 = none */
	__u32 base;		/* out: first slot */
	__u32 slice;		/* out: slots, 0 unless static */
};

/*
 * Lay out the @n jobs of @s (in job id order) for @policy. Under static a
 * job with a quota gets exactly its quota and the jobs without one share
 * what is left equally, at least one slot each; under the other policies
 * every base and slice is 0. 0, or -ENOSPC when the quotas (plus one slot
 * per job without a quota) exceed @agg_slots: *@need is what they need,
 * and @s is left as it was.
 */
int esa_rules_layout(__u32 policy, __u32 agg_slots,
		     struct esa_rules_slice *s, unsigned int n, __u32 *need);

/* What a caller reports for esa_rules_layout()'s -ENOSPC (a literal). */
#define ESA_RULES_LAYOUT_NOSPC_MSG \
	"static policy: the quotas (plus one slot per job without a quota) exceed agg_slots"

/*
 * The order in which a table change that sets @policy is published, one
 * step after the other: 1 if the jobs (their slices) go before the switch
 * config, 0 if after. The data plane must never see static without
 * slices: into static the slices go first; out of it the policy (the
 * slices left for a moment are ignored by the other policies).
 */
static inline int esa_rules_jobs_first(__u32 policy)
{
	return policy == ESA_POLICY_STATIC;
}

/* Index of the highest set bit, 1-based; 0 for 0 (the kernel's fls64). */
static inline unsigned int esa_rules_fls64(__u64 x)
{
	unsigned int n = 0;

	if (!x)
		return 0;
	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; }
	return n + 1;
}

/*
 * A job's attained service in bytes of its tensor: the value bytes the
 * switch added for it (@value_bytes, summed over every worker's packets)
 * over its @fan_in. Each worker contributes the same tensor, so a job's
 * service grows with the gradient the switch aggregated for it and not
 * with how many workers sent that gradient: two jobs of equal tensors rank
 * equal whatever their width (Documentation/kmod.rst, "Dynamic
 * priority"). Summed first and divided here, so nothing is lost to
 * rounding per packet.
 */
static inline __u64 esa_rules_las_service(__u64 value_bytes, __u32 fan_in)
{
	return fan_in > 1 ? value_bytes / fan_in : value_bytes;
}

/*
 * Least attained service: the priority of a job that attained @attained
 * (decayed) tensor bytes, esa_rules_las_service(), is
 * 255 - 4 * fls64(attained), floored at 0. A job
 * served less ranks higher, and a factor of two in service moves it four
 * levels, so jobs with similar service do not preempt each other back and
 * forth (Documentation/kmod.rst, "Dynamic priority").
 */
static inline __u8 esa_rules_las_priority(__u64 attained)
{
	unsigned int level = 4 * esa_rules_fls64(attained);

	return level >= ESA_MAX_PRIORITY ? 0 : ESA_MAX_PRIORITY - level;
}

/*
 * Attained service after one aging half-life: halved, rounding the half
 * taken away up, so any service decays to 0 and a starved job's priority
 * climbs back to the top.
 */
static inline __u64 esa_rules_age(__u64 attained)
{
	return attained - (attained + 1) / 2;
}

/*
 * The priority a packet of @job competes with on a switch without the
 * module (which has no dynamic priority): a fixed job's is the
 * administrator's, whatever the packet says; an auto job's is the one its
 * endpoints stamp (@pkt_prio). With the module every job competes with
 * its effective priority (esa_job_eff_prio()).
 */
static inline __u8 esa_rules_maps_priority(const struct esa_job_info *job,
					   __u8 pkt_prio)
{
	return job->prio_mode == ESA_PRIO_FIXED ? job->priority : pkt_prio;
}

/* A packet of job_id found an aggregator held by owner_id. */
struct esa_rules_arb {
	__u32 policy;		/* enum esa_policy */
	__u32 job_id;		/* the newcomer's job */
	__u32 owner_id;		/* the holder's job */
	__u32 quota;		/* newcomer's quota, 0 = none */
	__u32 occupancy;	/* aggregators the newcomer holds now */
	__u8 prio;		/* newcomer's priority */
	__u8 owner_prio;	/* holder's priority (as it claimed) */
	__u8 owner_gone;	/* the holder's job was deleted */
};

/*
 * The arbitration rule, ESA_ARB_PREEMPT or ESA_ARB_COLLIDE. Only esa
 * preempts; a job never evicts itself; a job at its quota takes no more
 * by preemption; a deleted holder's partial has no future, so anyone
 * takes it; otherwise a strictly higher priority wins. What "priority"
 * is differs by flavour (the module: each job's effective priority; the
 * module-less data plane: esa_rules_maps_priority() of the packet against
 * the one the holder's claim recorded).
 */
static inline int esa_rules_arbitrate(const struct esa_rules_arb *a)
{
	if (a->policy != ESA_POLICY_ESA)
		return ESA_ARB_COLLIDE;
	if (a->owner_id == a->job_id)
		return ESA_ARB_COLLIDE;
	if (a->quota && a->occupancy >= a->quota)
		return ESA_ARB_COLLIDE;
	if (a->owner_gone)
		return ESA_ARB_PREEMPT;
	return a->prio > a->owner_prio ? ESA_ARB_PREEMPT : ESA_ARB_COLLIDE;
}

#endif /* _ESA_RULES_H */
