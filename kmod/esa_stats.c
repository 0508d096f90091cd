// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics.
 *
 * The data plane reports events through esa_account(); they land in
 * per-CPU counters (one set per job, one switch-wide set that also takes
 * events of unknown jobs) and in the job's attained service and
 * occupancy (counted per data plane generation, below). What reads them
 * stands above this file: the policy (occupancy against the quota), the
 * netlink replies and the periodic work (esa_work.c).
 */
#include <linux/jiffies.h>

#include "esa_kmod.h"

void esa_counters_sum(struct esa_counters __percpu *pcpu,
		      struct esa_counters *out)
{
	const struct esa_counters *c;
	unsigned int cpu, i;

	memset(out, 0, sizeof(*out));
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(pcpu, cpu);
		for (i = 0; i < __ESA_CNT_MAX; i++)
			out->cnt[i] += READ_ONCE(c->cnt[i]);
		out->bytes += READ_ONCE(c->bytes);
	}
}

static void esa_count(struct esa_counters __percpu *pcpu, u32 event,
		      u32 amount)
{
	if (ESA_CNT_IS_AMOUNT(event))
		this_cpu_add(pcpu->cnt[event], amount);
	else
		this_cpu_inc(pcpu->cnt[event]);
	if (event == ESA_CNT_AGGREGATED && amount)
		this_cpu_add(pcpu->bytes, amount);
}

/*
 * Occupancy by data plane generation. A data plane's aggregator array
 * lives and dies with it, and the loader gives each one a generation
 * (written into the program, passed with every CLAIM and RELEASE). A
 * job's count belongs to one generation:
 *  - a CLAIM of that generation adds one, a RELEASE takes one away;
 *  - a CLAIM of another generation starts the count afresh at 1 when it
 *    comes from the current data plane (esa_config.dp_generation, which
 *    aggctl sets before it loads one): the array the old count stood for
 *    is gone; any other event of another generation is ignored;
 *  - what is reported is the count of the current generation (0 for a job
 *    whose count is of another one), the quota uses the asking data
 *    plane's.
 * There is nothing to reset, so nothing can race a reset: events of an
 * array that is gone can land at any time and change nothing they should
 * not. Callers that pass no generation are generation 0.
 */
#define ESA_OCC(gen, n)		(((s64)(u64)(gen) << 32) | (n))

static u32 esa_occ_gen(s64 v)
{
	return (u32)((u64)v >> 32);
}

static void esa_occ_claim(struct esa_job_acct *acct, u32 gen, u32 cur_gen)
{
	s64 old = atomic64_read(&acct->occ), new;

	do {
		if (esa_occ_gen(old) == gen)
			new = old + 1;
		else if (gen == cur_gen)
			new = ESA_OCC(gen, 1);
		else
			return;
	} while (!atomic64_try_cmpxchg(&acct->occ, &old, new));
}

/* Never below 0, whatever the caller's bookkeeping. */
static void esa_occ_release(struct esa_job_acct *acct, u32 gen)
{
	s64 old = atomic64_read(&acct->occ);

	do {
		if (esa_occ_gen(old) != gen || !(u32)old)
			return;
	} while (!atomic64_try_cmpxchg(&acct->occ, &old, old - 1));
}

/* Aggregators @job holds in the array of data plane generation @gen. */
u32 esa_job_occupancy(const struct esa_job *job, u32 gen)
{
	s64 v = atomic64_read(&job->acct->occ);

	return esa_occ_gen(v) == gen ? (u32)v : 0;
}

/*
 * Account @event of @job (NULL: an unknown job or none), reported by a
 * data plane of generation @gen while @cur_gen is the current one.
 * Softirq, RCU held by the caller; nothing here sleeps or locks. -EINVAL
 * for an event the module does not know.
 */
int esa_stats_account(struct esa_job *job, u32 event, u32 amount, u32 gen,
		      u32 cur_gen)
{
	struct esa_job_acct *acct;
	unsigned long now = jiffies;

	if (event >= __ESA_CNT_MAX && event != ESA_ACCT_CLAIM &&
	    event != ESA_ACCT_RELEASE)
		return -EINVAL;
	if (event < __ESA_CNT_MAX)
		esa_count(esa_global_counters, event, amount);
	if (!job)
		return 0;
	acct = job->acct;
	switch (event) {
	case ESA_ACCT_CLAIM:
		esa_occ_claim(acct, gen, cur_gen);
		break;
	case ESA_ACCT_RELEASE:
		esa_occ_release(acct, gen);
		break;
	default:
		esa_count(acct->pcpu, event, amount);
		if (event == ESA_CNT_AGGREGATED)
			atomic64_add(amount, &acct->attained);
		break;
	}
	if (!READ_ONCE(acct->first_seen))
		WRITE_ONCE(acct->first_seen, now ? now : 1);
	if (READ_ONCE(acct->last_seen) != now)
		WRITE_ONCE(acct->last_seen, now);
	return 0;
}
