// SPDX-License-Identifier: GPL-2.0
/*
 * The job registry: an RCU-published table indexed by job id, and the
 * RCU-published switch config. Writers hold esa_lock and never modify a
 * published snapshot: they allocate a copy, fill it, and swap the pointer.
 * A job id indexes the table directly (ids are 1..1023), so the kfuncs
 * find a job with one dependent load.
 */
#include <linux/slab.h>
#include <linux/jiffies.h>

#include "esa_kmod.h"

DEFINE_MUTEX(esa_lock);
struct esa_job __rcu *esa_jobs[ESA_MAX_JOB_ID + 1];
struct esa_config __rcu *esa_cfg;
struct esa_counters __percpu *esa_global_counters;

static void esa_acct_free(struct esa_job_acct *acct)
{
	if (!acct)
		return;
	free_percpu(acct->pcpu);
	kfree(acct);
}

/*
 * A copy of @tmpl, unpublished. With @new_acct the copy gets fresh
 * accounting (a new job); otherwise it shares @tmpl's (a change).
 */
struct esa_job *esa_job_alloc(const struct esa_job *tmpl, bool new_acct)
{
	struct esa_job *job;

	job = kmemdup(tmpl, sizeof(*job), GFP_KERNEL);
	if (!job)
		return NULL;
	if (!new_acct)
		return job;
	job->acct = kzalloc(sizeof(*job->acct), GFP_KERNEL);
	if (!job->acct)
		goto err;
	job->acct->pcpu = alloc_percpu(struct esa_counters);
	if (!job->acct->pcpu)
		goto err;
	return job;
err:
	esa_acct_free(job->acct);
	kfree(job);
	return NULL;
}

/* Free a copy that was never published, together with its own acct. */
void esa_job_free(struct esa_job *job)
{
	esa_acct_free(job->acct);
	kfree(job);
}

/* RCU callback of a deleted job: the last snapshot takes the acct along. */
static void esa_job_release_rcu(struct rcu_head *head)
{
	struct esa_job *job = container_of(head, struct esa_job, rcu);

	esa_acct_free(job->acct);
	kfree(job);
}

/*
 * The incarnation of a job being added (esa_job_info.incarnation): never
 * 0, never one given since the module was loaded. That is enough: a
 * module-flavour program holds the module, so a module loaded again
 * serves a data plane loaded again, whose aggregator array is new.
 */
u32 esa_job_new_incarnation(void)
{
	static u32 last;

	lockdep_assert_held(&esa_lock);
	if (!++last)
		++last;
	return last;
}

struct esa_job *esa_job_get_locked(u32 id)
{
	if (id == 0 || id > ESA_MAX_JOB_ID)
		return NULL;
	return rcu_dereference_protected(esa_jobs[id],
					 lockdep_is_held(&esa_lock));
}

/*
 * Publish @job in its slot. A snapshot it replaces shares the acct and is
 * freed after a grace period; readers still holding it stay valid.
 */
void esa_job_publish(struct esa_job *job)
{
	struct esa_job *old = esa_job_get_locked(job->info.job_id);

	rcu_assign_pointer(esa_jobs[job->info.job_id], job);
	if (old)
		kfree_rcu(old, rcu);
}

void esa_job_unpublish(u32 id)
{
	struct esa_job *old = esa_job_get_locked(id);

	if (!old)
		return;
	RCU_INIT_POINTER(esa_jobs[id], NULL);
	call_rcu(&old->rcu, esa_job_release_rcu);
}

u8 esa_job_state(const struct esa_job *job)
{
	unsigned long last = READ_ONCE(job->acct->last_seen);

	if (!READ_ONCE(job->acct->first_seen))
		return ESA_JOB_STATE_IDLE;
	if (time_before(jiffies, last + msecs_to_jiffies(ESA_ACTIVE_MS)))
		return ESA_JOB_STATE_ACTIVE;
	return ESA_JOB_STATE_STALLED;
}

const struct esa_config *esa_config_locked(void)
{
	return rcu_dereference_protected(esa_cfg, lockdep_is_held(&esa_lock));
}

/* An unpublished copy of @tmpl, for esa_config_swap(). */
struct esa_config *esa_config_alloc(const struct esa_config *tmpl)
{
	return kmemdup(tmpl, sizeof(*tmpl), GFP_KERNEL);
}

/* Publish @cfg as the switch config; the old one goes after a grace period. */
void esa_config_swap(struct esa_config *cfg)
{
	struct esa_config *old = rcu_dereference_protected(esa_cfg,
						lockdep_is_held(&esa_lock));

	rcu_assign_pointer(esa_cfg, cfg);
	if (old)
		kfree_rcu(old, rcu);
}

int esa_jobs_init(void)
{
	static const struct esa_config defaults = {
		.sw = {
			.policy = ESA_POLICY_ESA,
			.agg_slots = ESA_AGG_SLOTS_DEFAULT,
			.agg_timeout_us = ESA_TIMEOUT_US_DEFAULT,
		},
		.aging_ms = ESA_AGING_MS_DEFAULT,
	};
	struct esa_config *cfg;

	esa_global_counters = alloc_percpu(struct esa_counters);
	cfg = esa_config_alloc(&defaults);
	if (!esa_global_counters || !cfg) {
		free_percpu(esa_global_counters);
		kfree(cfg);
		return -ENOMEM;
	}
	mutex_lock(&esa_lock);
	esa_config_swap(cfg);
	mutex_unlock(&esa_lock);
	return 0;
}

/* Called once nothing can reach the tables any more (no netlink, no work). */
void esa_jobs_exit(void)
{
	struct esa_config *cfg;
	u32 id;

	mutex_lock(&esa_lock);
	for (id = 1; id <= ESA_MAX_JOB_ID; id++)
		esa_job_unpublish(id);
	cfg = rcu_dereference_protected(esa_cfg, lockdep_is_held(&esa_lock));
	RCU_INIT_POINTER(esa_cfg, NULL);
	mutex_unlock(&esa_lock);
	/* kfuncs cannot run any more (no program holds the module), but
	 * wait for the callbacks: they are module code.
	 */
	synchronize_rcu();
	kfree(cfg);
	rcu_barrier();
	free_percpu(esa_global_counters);
}
