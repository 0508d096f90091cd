/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module flavour (-DESA_MODULE_FLAVOUR): config, jobs and arbitration come
 * from the kernel module's kfuncs (include/esa_kfuncs.h), and every
 * per-job event is passed to esa_account() for the module's statistics,
 * occupancy and dynamic priorities. The module applies the rule of
 * lib/esa_rules.c to its own view of the two jobs.
 */
#ifndef _ESA_FLAVOUR_KMOD_H
#define _ESA_FLAVOUR_KMOD_H

#include "esa_maps.bpf.h"
#include "esa_kfuncs.h"

#define ESA_FLAVOUR_NAME	"kmod"

/*
 * This data plane's generation, set by the loader before load
 * (esa_switch_opts.generation): the identity of its aggregator array,
 * passed with every claim and release so the module counts occupancy per
 * array and never has to reset it (Documentation/kmod.rst, "Occupancy").
 */
const volatile __u32 esa_generation = 0;

/*
 * @buf must be memory the kfunc may fill (a per-CPU scratch field). The
 * barrier makes the caller test the pointer itself: left to itself clang
 * re-tests the kfunc's return code, and the 6.1 verifier cannot tell that
 * the second test repeats the first, so it walks a NULL job as if found.
 */
static __always_inline const struct esa_job_info *
esa_get_job(__u32 job_id, struct esa_job_info *buf)
{
	struct esa_job_info *p = buf;

	if (esa_job_lookup(job_id, buf, sizeof(*buf)))
		p = NULL;
	asm volatile("" : "+r"(p));
	return p;
}

/*
 * The job of an aggregation packet and the switch config, from one kfunc
 * call (esa_get_config() and esa_get_job() of a packet in one): NULL for
 * an unknown job. @buf as for esa_get_job().
 */
static __always_inline const struct esa_job_info *
esa_get_job_config(__u32 job_id, struct esa_job_info *buf,
		   struct esa_switch_config *cfg)
{
	struct esa_job_info *p = buf;

	if (esa_job_config_get(job_id, buf, sizeof(*buf), cfg, sizeof(*cfg)))
		p = NULL;
	asm volatile("" : "+r"(p));
	return p;
}

/*
 * The priority a packet of @job records when it claims: the packet's. The
 * module arbitrates with its own view of both jobs (esa_decide()), not
 * with this.
 */
static __always_inline __u8 esa_job_prio(const struct esa_job_info *job,
					 __u8 pkt_prio)
{
	return pkt_prio;
}

/* The module's verdict on @c for a packet of @job (an error collides). */
static __always_inline int esa_arb_ask(const struct esa_job_info *job,
				       const struct esa_clash *c)
{
	struct esa_arb_opts o = {
		.agg_index = c->slot,
		.owner_job_id = c->owner_id,
		.owner_incarnation = c->owner_inc,
		.owner_priority = c->owner_prio,
		.prio = c->prio,
		.owner_workers = c->owner_workers,
		.generation = esa_generation,
	};
	int v = esa_arbitrate(job->job_id, &o, sizeof(o));

	return v == ESA_ARB_PREEMPT ? ESA_ARB_PREEMPT : ESA_ARB_COLLIDE;
}

static __always_inline void esa_acct(__u32 job_id, __u32 event, __u32 amount)
{
	struct esa_acct_opts o = {
		.event = event,
		.amount = amount,
		.generation = esa_generation,
	};

	esa_account(job_id, &o, sizeof(o));
}

/*
 * An ownership event of incarnation @inc of @job_id: the module ignores
 * one whose incarnation is gone.
 */
static __always_inline void esa_acct_owner(__u32 job_id, __u32 inc,
					   __u32 event)
{
	struct esa_acct_opts o = {
		.event = event,
		.generation = esa_generation,
		.incarnation = inc,
	};

	esa_account(job_id, &o, sizeof(o));
}

#endif /* _ESA_FLAVOUR_KMOD_H */
