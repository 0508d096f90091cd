/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module flavour (-DESA_MODULE_FLAVOUR): config, jobs and arbitration come
 * from the kernel module's kfuncs (uapi/esa_kfuncs.h), and every per-job
 * event is passed to esa_account() for the module's statistics and dynamic
 * priorities. A kfunc may not be called under a bpf_spin_lock, so the
 * locked step returns "ask" on a cross-job clash, the kfunc is called
 * unlocked and the step runs again, taking the verdict only if the same
 * resident still holds the aggregator.
 */
#ifndef _ESA_FLAVOUR_KMOD_H
#define _ESA_FLAVOUR_KMOD_H

#include "esa_maps.bpf.h"
#include "esa_kfuncs.h"

#define ESA_FLAVOUR_NAME	"kmod"
#define ESA_ARB_IN_LOCK		0

static __always_inline int esa_get_config(struct esa_switch_config *cfg)
{
	return esa_config_get(cfg, sizeof(*cfg));
}

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

/* Not used: ESA_ARB_IN_LOCK is 0. */
static __always_inline int esa_arb_rule(__u32 policy, __u8 prio,
					__u8 owner_prio)
{
	return ESA_ARB_COLLIDE;
}

static __always_inline int esa_arb_call(__u32 job_id, struct esa_arb_opts *o)
{
	int v = esa_arbitrate(job_id, o, sizeof(*o));

	return v == ESA_ARB_PREEMPT ? ESA_ARB_PREEMPT : ESA_ARB_COLLIDE;
}

static __always_inline void esa_acct(__u32 job_id, __u32 event, __u32 amount)
{
	struct esa_acct_opts o = { .event = event, .amount = amount };

	esa_account(job_id, &o, sizeof(o));
}

#endif /* _ESA_FLAVOUR_KMOD_H */
