// SPDX-License-Identifier: GPL-2.0
/*
 * The periodic work. Every ESA_TICK_MS it ages attained service (once per
 * half-life, esa_policy.c) and turns counter deltas (esa_stats.c) into
 * job event notifications (esa_netlink.c): one per job, event and tick at
 * most, carrying how many events it stands for, so a busy data path
 * cannot flood the multicast group. It sits above the three files it
 * drives, so none of them calls another upwards.
 */
#include <linux/jiffies.h>
#include <linux/workqueue.h>

#include "esa_kmod.h"

static struct delayed_work esa_work;
static unsigned long esa_last_aging;

/* The job events: a counter and the notification its growth sends. */
static const struct {
	u32 counter;
	u8 cmd;
} esa_ntf_events[ESA_NTF_EVENTS] = {
	{ ESA_CNT_EVICTIONS, ESA_CMD_JOB_PREEMPTED_NTF },
	{ ESA_CNT_COMPLETED, ESA_CMD_JOB_COMPLETED_NTF },
	{ ESA_CNT_DROP_SPOOF, ESA_CMD_JOB_SPOOFED_NTF },
};

/* Emit one notification per job and event for what grew since the last tick. */
static void esa_notify_deltas(void)
{
	struct esa_counters sum;
	struct esa_job *job;
	unsigned int e;
	u64 d, now;
	u32 id;

	mutex_lock(&esa_lock);
	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		job = esa_job_get_locked(id);
		if (!job)
			continue;
		esa_counters_sum(job->acct->pcpu, &sum);
		for (e = 0; e < ESA_NTF_EVENTS; e++) {
			now = sum.cnt[esa_ntf_events[e].counter];
			d = now - job->acct->ntf_seen[e];
			if (!d)
				continue;
			job->acct->ntf_seen[e] = now;
			esa_notify_count(esa_ntf_events[e].cmd, id,
					 (u32)min_t(u64, d, U32_MAX));
		}
	}
	mutex_unlock(&esa_lock);
}

static void esa_work_fn(struct work_struct *w)
{
	u32 aging_ms;

	rcu_read_lock();
	aging_ms = rcu_dereference(esa_cfg)->aging_ms;
	rcu_read_unlock();
	if (time_after_eq(jiffies,
			  esa_last_aging + msecs_to_jiffies(aging_ms))) {
		esa_last_aging = jiffies;
		esa_age_all();
	}
	esa_notify_deltas();
	schedule_delayed_work(&esa_work, msecs_to_jiffies(ESA_TICK_MS));
}

void esa_work_start(void)
{
	esa_last_aging = jiffies;
	INIT_DELAYED_WORK(&esa_work, esa_work_fn);
	schedule_delayed_work(&esa_work, msecs_to_jiffies(ESA_TICK_MS));
}

void esa_work_stop(void)
{
	cancel_delayed_work_sync(&esa_work);
}
