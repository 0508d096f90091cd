// SPDX-License-Identifier: GPL-2.0
/*
 * Policies as the module applies them: the rules themselves (who wins a
 * contended aggregator, the least-attained-service priority, the static
 * slices) are lib/esa_rules.c, shared with the module-less flavour; this
 * file feeds them the module's view of a job and commits table changes.
 *
 * esa     preemptive. A newcomer takes an aggregator held by another job
 *         only with a strictly higher effective priority, and only while it
 *         holds fewer aggregators than its quota (when it has one).
 * atp     never preempts: the newcomer's packet goes on to its PS.
 * static  every job owns a disjoint slice; the data plane only ever sees
 *         same-job clashes, which collide.
 *
 * Dynamic priority (mode auto, the default): least attained service. A
 * job's attained service A is the bytes of its tensor the switch
 * aggregated for it (every worker's value bytes over the fan-in, so a
 * wide job does not age faster than a narrow one with the same gradient),
 * halved every aging half-life; esa_rules_las_priority() turns it into a
 * priority (a job served less ranks higher). Why: aggregators are the
 * contended resource, and serving the least-served job first is what
 * minimises the mean completion time when job sizes are unknown (the
 * LAS/Tiresias rule for GPU clusters; small and new jobs finish fast
 * instead of queueing behind a large one). Aging keeps it starvation-free:
 * a job that gets no aggregators attains nothing, so its A only decays;
 * after a few half-lives its priority exceeds that of every job that is
 * being served, and it wins.
 */
#include <linux/slab.h>
#include <linux/mm.h>

#include "esa_kmod.h"

/* The job's attained service, in bytes of its tensor (decayed). */
u64 esa_job_attained(const struct esa_job *job)
{
	return esa_rules_las_service(atomic64_read(&job->acct->attained),
				     job->info.fan_in);
}

u8 esa_job_eff_prio(const struct esa_job *job)
{
	if (job->info.prio_mode == ESA_PRIO_FIXED)
		return job->info.priority;
	return esa_rules_las_priority(esa_job_attained(job));
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
		/* Concurrent adds are kept: we subtract what aging takes of a snapshot. */
		v = atomic64_read(&job->acct->attained);
		atomic64_sub(v - (s64)esa_rules_age(v), &job->acct->attained);
	}
	rcu_read_unlock();
}

/*
 * The verdict for a packet of @job that found aggregator opts->agg_index
 * held by opts->owner_job_id; @owner is that job, NULL when it no longer
 * exists. The quota counts what @job holds in the asking data plane's
 * array (generation @gen). Runs in softirq under RCU.
 */
int esa_decide(u32 policy, const struct esa_job *job,
	       const struct esa_job *owner, const struct esa_arb_opts *opts,
	       u32 gen)
{
	struct esa_rules_arb arb = {
		.policy = policy,
		.job_id = job->info.job_id,
		.owner_id = opts->owner_job_id,
		.quota = job->info.quota,
		.occupancy = esa_job_occupancy(job, gen),
		.prio = esa_job_eff_prio(job),
		.owner_prio = owner ? esa_job_eff_prio(owner) : 0,
		.owner_gone = !owner,
	};

	return esa_rules_arbitrate(&arb);
}

/* A table change, prepared in full before any of it is published. */
struct esa_plan {
	unsigned int n;
	struct esa_job *job[ESA_MAX_JOB_ID];	/* in job id order */
	struct esa_rules_slice sl[ESA_MAX_JOB_ID];
	bool fresh[ESA_MAX_JOB_ID];		/* a clone made for the plan */
};

/* The jobs after the change: @cand in, @skip_id out. */
static void esa_plan_gather(struct esa_plan *p, struct esa_job *cand,
			    u32 skip_id)
{
	struct esa_job *job;
	u32 id;

	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		if (id == skip_id)
			continue;
		job = cand && cand->info.job_id == id ? cand :
			esa_job_get_locked(id);
		if (!job)
			continue;
		p->job[p->n] = job;
		p->sl[p->n++].quota = job->info.quota;
	}
}

/* Clone every published job whose slice moves. 0 or -ENOMEM (undone). */
static int esa_plan_clone(struct esa_plan *p, const struct esa_job *cand)
{
	struct esa_job *job;
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		job = p->job[i];
		if (job == cand || (job->info.agg_base == p->sl[i].base &&
				    job->info.agg_slice == p->sl[i].slice))
			continue;
		p->job[i] = esa_job_alloc(job, false);
		if (!p->job[i]) {
			p->job[i] = job;
			goto unwind;
		}
		p->fresh[i] = true;
	}
	return 0;
unwind:
	for (i = 0; i < p->n; i++)
		if (p->fresh[i])
			kfree(p->job[i]);	/* shares the acct: not ours */
	return -ENOMEM;
}

/* Publish @cand and every clone with its slice. Cannot fail. */
static void esa_plan_publish(struct esa_plan *p, const struct esa_job *cand)
{
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		if (!p->fresh[i] && p->job[i] != cand)
			continue;
		p->job[i]->info.agg_base = p->sl[i].base;
		p->job[i]->info.agg_slice = p->sl[i].slice;
		esa_job_publish(p->job[i]);
	}
}

/*
 * Apply one table change: @cfg (NULL: unchanged) becomes the switch
 * config, @cand (unpublished, may be NULL) joins or replaces the job of
 * its id, @skip_id (0: none) is left out (it is being deleted), and every
 * job's static slice follows the resulting policy and agg_slots (under
 * static disjoint slices, otherwise base and slice 0). Whatever can fail
 * (the layout, the allocations) happens before anything is published, and
 * publishing cannot fail: on success all of it is published, on error
 * nothing changed (-ENOSPC: *need = slots the quotas would need). The
 * caller keeps @cand on error. Needs esa_lock.
 */
int esa_commit(const struct esa_config *cfg, struct esa_job *cand,
	       u32 skip_id, u32 *need)
{
	const struct esa_config *next = cfg ?: esa_config_locked();
	struct esa_config *new_cfg = NULL;
	struct esa_plan *p;
	int err;

	p = kvzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	esa_plan_gather(p, cand, skip_id);
	err = esa_rules_layout(next->sw.policy, next->sw.agg_slots, p->sl,
			       p->n, need);
	if (err)
		goto out;
	if (cfg) {
		new_cfg = esa_config_alloc(cfg);
		if (!new_cfg) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = esa_plan_clone(p, cand);
	if (err) {
		kfree(new_cfg);
		goto out;
	}
	if (new_cfg && !esa_rules_jobs_first(new_cfg->sw.policy)) {
		esa_config_swap(new_cfg);
		new_cfg = NULL;
	}
	esa_plan_publish(p, cand);
	if (new_cfg)
		esa_config_swap(new_cfg);
out:
	kvfree(p);
	return err;
}
