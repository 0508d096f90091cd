// SPDX-License-Identifier: GPL-2.0
/*
 * kfuncs for XDP programs (and esa_account for the one-armed port's TC
 * program too), defined against the one set of prototypes in
 * include/esa_kfuncs.h. Only BPF programs call them, and those always run
 * inside an RCU read-side section: XDP in the driver's NAPI poll (softirq),
 * TC in the receive path that follows it, BPF_PROG_TEST_RUN under
 * bpf_test_timer_enter()'s rcu_read_lock(). So
 * they dereference the RCU-published jobs and config without taking the
 * lock again: on Debian's preemptible RCU each rcu_read_lock()/unlock()
 * pair is two calls, and the data plane makes two kfunc calls per packet
 * (Documentation/performance.rst, "The module flavour"). Nothing here
 * sleeps or locks.
 *
 * Each opts pointer comes with its size (the __sz suffix makes the
 * verifier check that the program passes memory of that size): shorter
 * than the struct's first version is refused with -EINVAL, fields a
 * shorter caller lacks read as 0, longer is accepted (newer callers), and
 * outputs longer than ours are zero-filled.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>

#include "esa_compat.h"
#include "esa_kmod.h"

/* The caller's RCU read-side section: the BPF program's (see above). */
#define esa_deref(p)	rcu_dereference_check(p, rcu_read_lock_bh_held())

static struct esa_job *esa_job_rcu(u32 job_id)
{
	if (job_id == 0 || job_id > ESA_MAX_JOB_ID)
		return NULL;
	return esa_deref(esa_jobs[job_id]);
}

/* Field @f of opts of @sz bytes (0 for a caller whose opts lack it). */
#define esa_opts_field(opts, sz, f)					\
	((sz) >= offsetofend(typeof(*(opts)), f) ? (opts)->f : 0)
#define esa_opts_generation(opts, sz)	esa_opts_field(opts, sz, generation)

/*
 * Job @job_id if @inc (0: any) is its incarnation; NULL for an unknown
 * job or one whose incarnation @inc is gone (deleted, added again).
 */
static struct esa_job *esa_job_rcu_inc(u32 job_id, u32 inc)
{
	struct esa_job *job = esa_job_rcu(job_id);

	return job && inc && job->info.incarnation != inc ? NULL : job;
}

static void esa_copy_out(void *dst, u32 dst_sz, const void *src, u32 src_sz)
{
	u32 n = min(dst_sz, src_sz);

	memcpy(dst, src, n);
	if (dst_sz > n)
		memset((char *)dst + n, 0, dst_sz - n);
}

/*
 * The bodies the kfuncs share, static so that each kfunc compiles them in:
 * the data plane's one call per packet (esa_job_config_get()) makes no
 * further call, each of which returns through a thunk on some CPUs.
 */

/* Copy the switch settings into @cfg of @cfg__sz bytes. */
static void esa_config_fill(struct esa_switch_config *cfg, u32 cfg__sz)
{
	const struct esa_config *c = esa_deref(esa_cfg);

	esa_copy_out(cfg, cfg__sz, &c->sw, sizeof(c->sw));
}

/*
 * Copy job @job_id's record into @info of @info__sz bytes, its priority
 * the effective one now; -ENOENT (@info zeroed) for an unknown job.
 * Straight from the snapshot, no copy on the stack first: the record is
 * 352 bytes and this runs per packet.
 */
static int esa_job_fill(u32 job_id, struct esa_job_info *info, u32 info__sz)
{
	const struct esa_job *job = esa_job_rcu(job_id);

	if (!job) {
		memset(info, 0, info__sz);
		return -ENOENT;
	}
	esa_copy_out(info, info__sz, &job->info, sizeof(job->info));
	if (info__sz >= offsetofend(struct esa_job_info, priority))
		info->priority = esa_job_eff_prio(job);
	return 0;
}

__bpf_kfunc_start_defs();

/**
 * esa_config_get() - Copy the switch settings.
 * @cfg: Where to copy the settings (policy, agg_slots, agg_timeout_us).
 * @cfg__sz: Size of @cfg; a larger buffer gets its tail zeroed.
 *
 * Return: 0.
 */
__bpf_kfunc int esa_config_get(struct esa_switch_config *cfg, __u32 cfg__sz)
{
	esa_config_fill(cfg, cfg__sz);
	return 0;
}

/**
 * esa_job_lookup() - Copy a job record.
 * @job_id: The job, 1..ESA_MAX_JOB_ID.
 * @info: Where to copy it; info->priority is the effective priority now.
 * @info__sz: Size of @info.
 *
 * Return: 0, or -ENOENT for an unknown job (@info is zeroed then).
 */
__bpf_kfunc int esa_job_lookup(__u32 job_id, struct esa_job_info *info,
			       __u32 info__sz)
{
	return esa_job_fill(job_id, info, info__sz);
}

/**
 * esa_job_config_get() - What an aggregation packet needs, in one call.
 * @job_id: The packet's job, 1..ESA_MAX_JOB_ID.
 * @info: Where to copy the job record, as esa_job_lookup() does.
 * @info__sz: Size of @info.
 * @cfg: Where to copy the switch settings, as esa_config_get() does.
 * @cfg__sz: Size of @cfg.
 *
 * esa_config_get() and esa_job_lookup() in one call: the data plane's
 * lookup per aggregation packet.
 *
 * Return: 0, or -ENOENT for an unknown job (@info is zeroed then, @cfg
 * is filled all the same).
 */
__bpf_kfunc int esa_job_config_get(__u32 job_id, struct esa_job_info *info,
				   __u32 info__sz, struct esa_switch_config *cfg,
				   __u32 cfg__sz)
{
	esa_config_fill(cfg, cfg__sz);
	return esa_job_fill(job_id, info, info__sz);
}

/**
 * esa_arbitrate() - Decide a contended aggregator under the current policy.
 * @job_id: The job whose packet found the aggregator held.
 * @opts: The aggregator, its holder and what the holder has summed.
 * @opts__sz: Size of @opts, at least sizeof(struct esa_arb_opts).
 *
 * Return: ESA_ARB_PREEMPT or ESA_ARB_COLLIDE; -EINVAL for a short @opts,
 * a free aggregator (owner 0) or an index beyond agg_slots; -ENOENT when
 * @job_id is unknown. The quota counts what the job holds in the array of
 * opts->generation. A holder whose opts->owner_incarnation is gone is a
 * deleted job.
 */
__bpf_kfunc int esa_arbitrate(__u32 job_id, struct esa_arb_opts *opts,
			      __u32 opts__sz)
{
	const struct esa_config *c;
	struct esa_job *job;

	if (opts__sz < ESA_ARB_OPTS_SZ_MIN || !opts->owner_job_id ||
	    opts->owner_job_id > ESA_MAX_JOB_ID)
		return -EINVAL;
	c = esa_deref(esa_cfg);
	if (opts->agg_index >= c->sw.agg_slots)
		return -EINVAL;
	job = esa_job_rcu(job_id);
	if (!job)
		return -ENOENT;
	return esa_decide(c->sw.policy, job,
			  esa_job_rcu_inc(opts->owner_job_id,
					  esa_opts_field(opts, opts__sz,
							 owner_incarnation)),
			  opts, esa_opts_generation(opts, opts__sz));
}

/**
 * esa_account() - Account a data plane event.
 * @job_id: The job it belongs to; 0 or an unknown id counts switch-wide.
 * @opts: The event (enum esa_counter or enum esa_acct_event), its amount,
 *        the reporting data plane's generation (ownership events) and
 *        the incarnation of @job_id it is about (0: the current one; an
 *        incarnation that is gone counts as an unknown job).
 * @opts__sz: Size of @opts, at least ESA_ACCT_OPTS_SZ_MIN.
 *
 * Return: 0; -ENOENT for an unknown nonzero @job_id (still counted
 * switch-wide); -EINVAL for a short @opts or an unknown event.
 */
__bpf_kfunc int esa_account(__u32 job_id, struct esa_acct_opts *opts,
			    __u32 opts__sz)
{
	struct esa_job *job;
	int ret;

	if (opts__sz < ESA_ACCT_OPTS_SZ_MIN)
		return -EINVAL;
	job = esa_job_rcu_inc(job_id,
			      esa_opts_field(opts, opts__sz, incarnation));
	ret = esa_stats_account(job, opts->event, opts->amount,
				esa_opts_generation(opts, opts__sz),
				esa_deref(esa_cfg)->dp_generation);
	if (!ret && !job && job_id)
		ret = -ENOENT;
	return ret;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(esa_kfunc_ids)
BTF_ID_FLAGS(func, esa_config_get)
BTF_ID_FLAGS(func, esa_job_lookup)
BTF_ID_FLAGS(func, esa_job_config_get)
BTF_ID_FLAGS(func, esa_arbitrate)
BTF_ID_FLAGS(func, esa_account)
BTF_KFUNCS_END(esa_kfunc_ids)

/* The registration of kfunc id set @ids, this module's. */
#define ESA_KFUNC_SET(ids)	{ .owner = THIS_MODULE, .set = &(ids) }

static const struct btf_kfunc_id_set esa_kfunc_set = ESA_KFUNC_SET(esa_kfunc_ids);

#define ESA_NR_KFUNCS	5

/*
 * The one kfunc of the one-armed port's TC program (esa_fanout): its
 * counts (DROP_NEXTHOP) reach the module's statistics as the XDP
 * program's do. It runs in the same softirq, under the same RCU read-side
 * section (the receive path's). The job lookups stay XDP's: the TC
 * program reads what XDP wrote for it (esa_oa_jobs).
 */
BTF_KFUNCS_START(esa_tc_kfunc_ids)
BTF_ID_FLAGS(func, esa_account)
BTF_KFUNCS_END(esa_tc_kfunc_ids)

static const struct btf_kfunc_id_set esa_tc_kfunc_set =
	ESA_KFUNC_SET(esa_tc_kfunc_ids);

#define ESA_NR_TC_KFUNCS	1

/* Whether the ids of @set, of @want kfuncs, were resolved; says if not. */
static bool esa_kfunc_ids_resolved(const struct btf_id_set8 *set, u32 want,
				   const char *name)
{
	u32 i;

	if (set->cnt != want) {
		pr_err("esa: %s kfunc id set holds %u of %u ids: .BTF_ids not resolved (run resolve_btfids on esa.ko)\n",
		       name, set->cnt, want);
		return false;
	}
	for (i = 0; i < set->cnt; i++) {
		if (!set->pairs[i].id) {
			pr_err("esa: %s kfunc %u has BTF id 0: .BTF_ids not resolved\n",
			       name, i);
			return false;
		}
	}
	return true;
}

/*
 * 6.1 registers nothing and returns 0 when the module has no BTF, and a
 * set whose .BTF_ids were never resolved holds no ids: both would load a
 * module whose kfuncs no program can call. Refuse them here, loudly, as
 * an unfinished module file (-ENOEXEC: "Invalid module format").
 */
int esa_kfuncs_register(void)
{
	int err;

#ifdef CONFIG_DEBUG_INFO_BTF_MODULES
	if (!THIS_MODULE->btf_data_size) {
		pr_err("esa: module has no BTF (.BTF section); kfuncs cannot be registered: build with scripts/mod-btf.sh\n");
		return -ENOEXEC;
	}
#endif
	if (!esa_kfunc_ids_resolved(esa_kfunc_set.set, ESA_NR_KFUNCS, "XDP") ||
	    !esa_kfunc_ids_resolved(esa_tc_kfunc_set.set, ESA_NR_TC_KFUNCS, "TC"))
		return -ENOEXEC;
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &esa_kfunc_set);
	if (err) {
		pr_err("esa: registering the XDP kfuncs failed: %d\n", err);
		return err;
	}
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS, &esa_tc_kfunc_set);
	if (err)
		pr_err("esa: registering the TC kfunc failed: %d\n", err);
	return err;
}
