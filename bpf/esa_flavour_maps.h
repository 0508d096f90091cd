/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module-less flavour (the default build): the switch config lives in a
 * one-entry array map and the jobs in an array indexed by job id, both
 * written by user
 * space (tools/lib/dp), and the data plane counts the aggregators each
 * job holds itself. Arbitration is the rule of lib/esa_rules.c, fed what a
 * P4 switch would have in hand: the packet's job's priority against the
 * one the holder's claim recorded (esa_job_prio(): a fixed job's is its
 * configured one; no dynamic priority without the module), the
 * job's quota against its count, and whether the holder's job still
 * exists. This file must not reference any kfunc: a 6.1 kernel refuses a
 * program whose kfunc is missing, weak or not.
 */
#ifndef _ESA_FLAVOUR_MAPS_H
#define _ESA_FLAVOUR_MAPS_H

#include "esa_maps.bpf.h"

#define ESA_FLAVOUR_NAME	"maps"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct esa_switch_config);
} esa_config SEC(".maps");

/*
 * Job records by job id; a record whose job_id is not its index (0) is no
 * job. An array, not a hash: its lookup is a bounds check and an add
 * that the verifier inlines, the same for 1 job as for 1023, where a hash
 * lookup is three calls and a walk that grows with the jobs (issue 11:
 * 1.27x the per-packet cost at 1023 jobs).
 */
ESA_JOB_ARRAY(struct esa_job_info) esa_jobs SEC(".maps");

/*
 * Aggregators held per job id (claims minus releases, esa_acct_owner()),
 * for the quota. A job added under an id starts at 0
 * (esa_switch_job_put()), and what its predecessors held never counts
 * for it: their events carry their own incarnation. Signed all the same:
 * a release can land between a reset and the claim it undoes.
 */
ESA_JOB_ARRAY(__s32) esa_occupancy SEC(".maps");

static __always_inline int esa_get_config(struct esa_switch_config *cfg)
{
	__u32 zero = 0;
	struct esa_switch_config *c = bpf_map_lookup_elem(&esa_config, &zero);

	if (!c)
		return -1;
	*cfg = *c;
	return 0;
}

/* @buf is unused here: the map value itself is returned, if it is a job. */
static __always_inline const struct esa_job_info *
esa_get_job(__u32 job_id, struct esa_job_info *buf)
{
	const struct esa_job_info *job = bpf_map_lookup_elem(&esa_jobs, &job_id);

	return job && job->job_id == job_id && job_id ? job : NULL;
}

/*
 * The job of an aggregation packet and the switch config (NULL for an
 * unknown job; the one-entry config array always has its entry).
 */
static __always_inline const struct esa_job_info *
esa_get_job_config(__u32 job_id, struct esa_job_info *buf,
		   struct esa_switch_config *cfg)
{
	if (esa_get_config(cfg))
		return NULL;
	return esa_get_job(job_id, buf);
}

/* Whether incarnation @inc of @job_id is gone (deleted, or added again). */
static __always_inline int esa_job_dead(__u32 job_id, __u32 inc)
{
	const struct esa_job_info *job = esa_get_job(job_id, NULL);

	return !job || job->incarnation != inc;
}

static __always_inline __u32 esa_occupancy_of(__u32 job_id)
{
	__s32 *n = bpf_map_lookup_elem(&esa_occupancy, &job_id);

	return n && *n > 0 ? (__u32)*n : 0;
}

/* The priority a packet of @job stamped @pkt_prio claims and competes with. */
static __always_inline __u8 esa_job_prio(const struct esa_job_info *job,
					 __u8 pkt_prio)
{
	return esa_rules_maps_priority(job, pkt_prio);
}

/* The rule's verdict on @c for a packet of @job. */
static __always_inline int esa_arb_ask(const struct esa_job_info *job,
				       const struct esa_clash *c)
{
	struct esa_rules_arb a = {
		.policy = ESA_POLICY_ESA,	/* only esa asks */
		.job_id = job->job_id,
		.owner_id = c->owner_id,
		.quota = job->quota,
		.occupancy = esa_occupancy_of(job->job_id),
		.prio = c->prio,
		.owner_prio = c->owner_prio,
		.owner_gone = esa_job_dead(c->owner_id, c->owner_inc),
	};

	return esa_rules_arbitrate(&a);
}

/* Counters need nothing beyond esa_stats here. */
static __always_inline void esa_acct(__u32 job_id, __u32 event, __u32 amount)
{
}

/*
 * An ownership event (ESA_ACCT_CLAIM or RELEASE) of incarnation @inc of
 * @job_id counts the aggregators the job holds; one of an incarnation
 * that is gone changes nothing.
 */
static __always_inline void esa_acct_owner(__u32 job_id, __u32 inc,
					   __u32 event)
{
	__s32 *n;

	if (esa_job_dead(job_id, inc))
		return;
	n = bpf_map_lookup_elem(&esa_occupancy, &job_id);
	if (n)
		__sync_fetch_and_add(n, event == ESA_ACCT_CLAIM ? 1 : -1);
}

#endif /* _ESA_FLAVOUR_MAPS_H */
