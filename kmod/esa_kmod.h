/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the esa module.
 *
 * Concurrency model: XDP programs call the kfuncs in softirq under RCU;
 * netlink handlers and the periodic work run in process context. The job
 * table and the switch config are RCU-published, immutable snapshots:
 * writers (serialised by esa_lock) build a new copy and swap the pointer.
 * What the data path mutates (counters, attained service, occupancy,
 * effective priority) lives in struct esa_job_acct, shared by every
 * snapshot of a job and updated with per-CPU or atomic operations, so no
 * kfunc ever takes a lock or sleeps.
 */
#ifndef _ESA_KMOD_H
#define _ESA_KMOD_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/atomic.h>
#include <linux/percpu.h>

#include "esa_switch.h"
#include "esa_genl.h"
#include "esa_dataplane.h"
#include "esa_rules.h"
#include "esa_kfuncs.h"

#define ESA_TICK_MS		100	/* events and aging work period */
#define ESA_ACTIVE_MS		1000	/* job counts as active this long */

struct esa_counters {
	u64 cnt[__ESA_CNT_MAX];
	u64 bytes;
};

/* Data-path state of a job; shared by every snapshot of the job. */
/* Job events the periodic work turns counter growth into (esa_work.c). */
#define ESA_NTF_EVENTS	3

struct esa_job_acct {
	struct esa_counters __percpu *pcpu;
	atomic64_t attained;		/* decayed value bytes, every worker's */
	/*
	 * Aggregators held, as the data plane of one generation reported
	 * them: (generation << 32) | count, one 64-bit word so that the
	 * generation and its count change together (esa_stats.c).
	 */
	atomic64_t occ;
	unsigned long first_seen;	/* jiffies, 0 = never */
	unsigned long last_seen;	/* jiffies */
	/*
	 * The counters of the job events (preempted, completed, spoofed:
	 * esa_work.c) at the last notification; only the periodic work
	 * touches them.
	 */
	u64 ntf_seen[ESA_NTF_EVENTS];
};

/*
 * One immutable snapshot of a job. info is the record every flavour keeps
 * (include/esa_dataplane.h, checked by esa_rules_check_job()): with mode
 * fixed info.priority is the admin's; see esa_job_eff_prio().
 */
struct esa_job {
	struct esa_job_info info;
	struct esa_job_acct *acct;
	struct rcu_head rcu;
};

/* Switch-wide settings, one immutable snapshot. */
struct esa_config {
	struct esa_switch_config sw;	/* what esa_config_get() hands out */
	u32 aging_ms;
	u32 dp_generation;		/* the current data plane's, 0: none */
	struct rcu_head rcu;
};

extern struct mutex esa_lock;
extern struct esa_job __rcu *esa_jobs[ESA_MAX_JOB_ID + 1];
extern struct esa_config __rcu *esa_cfg;
extern struct esa_counters __percpu *esa_global_counters;

/* esa_job.c: the registry (writers hold esa_lock) */
int esa_jobs_init(void);
void esa_jobs_exit(void);
struct esa_job *esa_job_alloc(const struct esa_job *tmpl, bool new_acct);
void esa_job_free(struct esa_job *job);
void esa_job_publish(struct esa_job *job);
void esa_job_unpublish(u32 id);
struct esa_job *esa_job_get_locked(u32 id);
u32 esa_job_new_incarnation(void);
const struct esa_config *esa_config_locked(void);
struct esa_config *esa_config_alloc(const struct esa_config *tmpl);
void esa_config_swap(struct esa_config *cfg);
u8 esa_job_state(const struct esa_job *job);

/* esa_policy.c */
int esa_commit(const struct esa_config *cfg, struct esa_job *cand,
	       u32 skip_id, u32 *need);
u64 esa_job_attained(const struct esa_job *job);
u8 esa_job_eff_prio(const struct esa_job *job);
void esa_age_all(void);
int esa_decide(u32 policy, const struct esa_job *job,
	       const struct esa_job *owner, const struct esa_arb_opts *opts,
	       u32 gen);

/* esa_stats.c */
void esa_counters_sum(struct esa_counters __percpu *pcpu,
		      struct esa_counters *out);
int esa_stats_account(struct esa_job *job, u32 event, u32 amount, u32 gen,
		      u32 cur_gen);
u32 esa_job_occupancy(const struct esa_job *job, u32 gen);

/* esa_work.c: aging and job events, every ESA_TICK_MS */
void esa_work_start(void);
void esa_work_stop(void);

/* esa_kfuncs.c */
int esa_kfuncs_register(void);

/* esa_netlink.c */
int esa_netlink_init(void);
void esa_netlink_exit(void);
void esa_notify_job(u8 cmd, const struct esa_job *job);
void esa_notify_count(u8 cmd, u32 id, u32 count);
void esa_notify_policy(void);

#endif /* _ESA_KMOD_H */
