/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module-less flavour (the default build): the switch config lives in a
 * one-entry array map and the jobs in a hash map, both written by user
 * space (tools/lib/esa_maps.c); arbitration is the stand-in rule a P4
 * switch would apply: under policy esa a packet whose priority is strictly
 * higher than the resident's recorded priority preempts. This file must not
 * reference any kfunc: a 6.1 kernel refuses a program whose kfunc is
 * missing, weak or not.
 */
#ifndef _ESA_FLAVOUR_MAPS_H
#define _ESA_FLAVOUR_MAPS_H

#include "esa_maps.bpf.h"

#define ESA_FLAVOUR_NAME	"maps"
/* Arbitration is a pure comparison, done under the aggregator's lock. */
#define ESA_ARB_IN_LOCK		1

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct esa_switch_config);
} esa_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ESA_MAX_JOB_ID + 1);
	__type(key, __u32);
	__type(value, struct esa_job_info);
} esa_jobs SEC(".maps");

static __always_inline int esa_get_config(struct esa_switch_config *cfg)
{
	__u32 zero = 0;
	struct esa_switch_config *c = bpf_map_lookup_elem(&esa_config, &zero);

	if (!c)
		return -1;
	*cfg = *c;
	return 0;
}

/* @buf is unused here: the map value itself is returned. */
static __always_inline const struct esa_job_info *
esa_get_job(__u32 job_id, struct esa_job_info *buf)
{
	return bpf_map_lookup_elem(&esa_jobs, &job_id);
}

static __always_inline int esa_arb_rule(__u32 policy, __u8 prio,
					__u8 owner_prio)
{
	return policy == ESA_POLICY_ESA && prio > owner_prio ?
	       ESA_ARB_PREEMPT : ESA_ARB_COLLIDE;
}

/* Never reached: arbitration never leaves the lock in this flavour. */
static __always_inline int esa_arb_call(__u32 job_id, struct esa_arb_opts *o)
{
	return ESA_ARB_COLLIDE;
}

static __always_inline void esa_acct(__u32 job_id, __u32 event, __u32 amount)
{
}

#endif /* _ESA_FLAVOUR_MAPS_H */
