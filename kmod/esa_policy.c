// SPDX-License-Identifier: GPL-2.0
/*
 * Policies: who wins an aggregator, what priority a job has, and the
 * static slices.
 *
 * esa     preemptive. A newcomer takes an aggregator held by another job
 *         only with a strictly higher effective priority, and only while it
 *         holds fewer aggregators than its quota (when it has one).
 * atp     never preempts: the newcomer's packet goes on to its PS.
 * static  every job owns a disjoint slice; the data plane only ever sees
 *         same-job clashes, which collide.
 *
 * Dynamic priority (mode auto, the default): least attained service. A
 * job's attained service A is the bytes the switch aggregated for it,
 * halved every aging half-life. Its priority is 255 - 4 * fls64(A): a job
 * that was served less gets a higher priority, and it takes a factor of 2
 * in service to move 4 levels. Why: aggregators are the contended
 * resource, and serving the least-served job first is what minimises the
 * mean completion time when job sizes are unknown (the LAS/Tiresias rule
 * for GPU clusters; small and new jobs finish fast instead of queueing
 * behind a large one). Aging keeps it starvation-free: a job that gets no
 * aggregators attains nothing, so its A only decays; after a few half-lives
 * its priority exceeds that of every job that is being served, and it wins.
 * The 4-level steps keep jobs with similar service from preempting each
 * other back and forth.
 */
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include "esa.h"

u8 esa_las_priority(u64 attained)
{
	unsigned int level = 4 * fls64(attained);

	return level >= ESA_MAX_PRIORITY ? 0 : ESA_MAX_PRIORITY - level;
}

u8 esa_job_eff_prio(const struct esa_job *job)
{
	if (job->prio_mode == ESA_PRIO_FIXED)
		return job->admin_prio;
	return esa_las_priority(atomic64_read(&job->acct->attained));
}

/* Halve every job's attained service (process context, any time). */
void esa_age_all(void)
{
	struct esa_job *job;
	s64 v;
	u32 id;

	rcu_read_lock();
	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		job = rcu_dereference(esa_jobs[id]);
		if (!job)
			continue;
		/* Concurrent adds are kept: we subtract half of a snapshot. */
		v = atomic64_read(&job->acct->attained);
		atomic64_sub((v + 1) / 2, &job->acct->attained);
	}
	rcu_read_unlock();
}

/*
 * The verdict for a packet of @job that found aggregator opts->agg_index
 * held by opts->owner_job_id; @owner is that job, NULL when it no longer
 * exists. Runs in softirq under RCU.
 */
int esa_decide(u32 policy, const struct esa_job *job,
	       const struct esa_job *owner, const struct esa_arb_opts *opts)
{
	if (policy != ESA_POLICY_ESA)
		return ESA_ARB_COLLIDE;
	/* Another sequence of the same job: never evict yourself. */
	if (opts->owner_job_id == job->info.job_id)
		return ESA_ARB_COLLIDE;
	if (job->quota &&
	    (u32)atomic_read(&job->acct->occupancy) >= job->quota)
		return ESA_ARB_COLLIDE;
	/* The holder was deleted: its partial has no future, take the slot. */
	if (!owner)
		return ESA_ARB_PREEMPT;
	return esa_job_eff_prio(job) > esa_job_eff_prio(owner) ?
		ESA_ARB_PREEMPT : ESA_ARB_COLLIDE;
}

struct esa_plan_ent {
	struct esa_job *job;
	u32 base;
	u32 slice;
	bool fresh;	/* a clone made by the plan */
};

/*
 * Static slices, in job id order: a job with a quota gets exactly its
 * quota; the rest share what is left equally (at least one slot each).
 */
static int esa_static_layout(struct esa_plan_ent *p, unsigned int n,
			     u32 agg_slots, u32 *need)
{
	u64 fixed = 0, base = 0;
	u32 shared = 0, share = 0, extra = 0, rest;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (p[i].job->quota)
			fixed += p[i].job->quota;
		else
			shared++;
	}
	if (fixed + shared > agg_slots) {
		*need = (u32)min_t(u64, fixed + shared, U32_MAX);
		return -ENOSPC;
	}
	rest = agg_slots - (u32)fixed;
	if (shared) {
		share = rest / shared;
		extra = rest % shared;
	}
	for (i = 0; i < n; i++) {
		p[i].base = (u32)base;
		if (p[i].job->quota) {
			p[i].slice = p[i].job->quota;
		} else {
			p[i].slice = share + (extra ? 1 : 0);
			if (extra)
				extra--;
		}
		base += p[i].slice;
	}
	return 0;
}

/*
 * Bring the table in line with @policy and @agg_slots after an edit:
 * @cand (unpublished, may be NULL) joins or replaces the job of its id,
 * @skip_id (0: none) is left out (it is being deleted). Under static every
 * job gets a disjoint slice, otherwise base and slice are 0. All or
 * nothing: on success @cand and every re-sliced job are published; on
 * error nothing changed (-ENOSPC: *need = slots the quotas would need).
 * The caller keeps ownership of @cand on error. Needs esa_lock.
 */
int esa_commit(u32 policy, u32 agg_slots, struct esa_job *cand, u32 skip_id,
	       u32 *need)
{
	struct esa_plan_ent *p;
	struct esa_job *job;
	unsigned int n = 0, i;
	int err = 0;
	u32 id;

	p = kvcalloc(ESA_MAX_JOB_ID, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		if (id == skip_id)
			continue;
		job = cand && cand->info.job_id == id ? cand :
			esa_job_get_locked(id);
		if (job)
			p[n++].job = job;
	}
	if (policy == ESA_POLICY_STATIC)
		err = esa_static_layout(p, n, agg_slots, need);
	if (err)
		goto out;

	/* Clone every job whose slice moves before publishing anything. */
	for (i = 0; i < n; i++) {
		job = p[i].job;
		if (job == cand || (job->info.agg_base == p[i].base &&
				    job->info.agg_quota == p[i].slice))
			continue;
		p[i].job = esa_job_alloc(job, false);
		if (!p[i].job) {
			p[i].job = job;
			err = -ENOMEM;
			goto unwind;
		}
		p[i].fresh = true;
	}
	for (i = 0; i < n; i++) {
		if (!p[i].fresh && p[i].job != cand)
			continue;
		p[i].job->info.agg_base = p[i].base;
		p[i].job->info.agg_quota = p[i].slice;
		esa_job_publish(p[i].job);
	}
	goto out;
unwind:
	for (i = 0; i < n; i++)
		if (p[i].fresh)
			kfree(p[i].job);	/* shares the acct: not ours */
out:
	kvfree(p);
	return err;
}
