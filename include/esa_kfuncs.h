/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfuncs the kernel module (kmod/) exports to XDP and the module flavour of
 * the data plane (bpf/) calls, and the opts they take. Not UAPI: kfuncs
 * are an interface between two parts of this tree, built together. One
 * set of prototypes for both sides: BPF objects see them as __ksym
 * externs, the module compiles its definitions against them, so a
 * signature change breaks the build, not the verifier.
 * The module-less flavour must not include this file (6.1 cannot load a
 * program that references a missing kfunc, even a weak one).
 */
#ifndef _ESA_KFUNCS_H
#define _ESA_KFUNCS_H

#include "esa_dataplane.h"

/*
 * Opts of the module flavour's arbitration kfunc (extensible by __sz:
 * fields are only ever appended; a caller's shorter struct, down to the
 * first version's size, reads as zeros beyond its end).
 */
struct esa_arb_opts {
	__u32	agg_index;
	__u32	owner_job_id;		/* current holder */
	__u8	owner_priority;		/* holder's priority when it claimed */
	__u8	prio;			/* newcomer's packet priority */
	__u8	pad[2];
	__u32	owner_workers;		/* workers already summed by the holder */
	/* since 2: the asking data plane's generation (0: none) */
	__u32	generation;
	/*
	 * since 3: owner_job_id's incarnation when it claimed (0: not
	 * given); a holder whose incarnation is gone is a deleted job
	 */
	__u32	owner_incarnation;
};
#define ESA_ARB_OPTS_SZ_MIN	16	/* the first version: no generation */

/* Accounting passed to the module flavour's esa_account() kfunc. */
struct esa_acct_opts {
	__u32	event;			/* enum esa_counter or esa_acct_event */
	/*
	 * AGGREGATED: the value bytes added; an ESA_CNT_IS_AMOUNT counter:
	 * what it grows by; 0 otherwise.
	 */
	__u32	amount;
	/*
	 * since 2: the reporting data plane's generation (0: none): the
	 * identity of the aggregator array a CLAIM or RELEASE is about
	 */
	__u32	generation;
	/*
	 * since 3: the incarnation of @job_id the event is about (0: not
	 * given, the current one): an event of an incarnation that is gone
	 * counts switch-wide only
	 */
	__u32	incarnation;
};
#define ESA_ACCT_OPTS_SZ_MIN	8	/* the first version: no generation */


#ifdef __BPF__
#define ESA_KFUNC_DECL(ret, name, ...) extern ret name(__VA_ARGS__) __ksym
#else
#define ESA_KFUNC_DECL(ret, name, ...) ret name(__VA_ARGS__)
#endif

/* Copy the switch settings into @cfg. Always 0. */
ESA_KFUNC_DECL(int, esa_config_get, struct esa_switch_config *cfg,
	       __u32 cfg__sz);

/* Copy job @job_id into @info. 0, or -ENOENT for an unknown job. */
ESA_KFUNC_DECL(int, esa_job_lookup, __u32 job_id, struct esa_job_info *info,
	       __u32 info__sz);

/*
 * Both of the above in one call (the data plane's per-packet lookup):
 * @cfg is filled even when the job is unknown.
 */
ESA_KFUNC_DECL(int, esa_job_config_get, __u32 job_id,
	       struct esa_job_info *info, __u32 info__sz,
	       struct esa_switch_config *cfg, __u32 cfg__sz);

/*
 * A packet of @job_id found aggregator opts->agg_index held by
 * opts->owner_job_id. Returns an enum esa_arb_verdict under the module's
 * current policy, or a negative errno for bad arguments.
 */
ESA_KFUNC_DECL(int, esa_arbitrate, __u32 job_id, struct esa_arb_opts *opts,
	       __u32 opts__sz);

/* Account an event of @job_id (feeds statistics and dynamic priority). */
ESA_KFUNC_DECL(int, esa_account, __u32 job_id, struct esa_acct_opts *opts,
	       __u32 opts__sz);

#endif /* _ESA_KFUNCS_H */
