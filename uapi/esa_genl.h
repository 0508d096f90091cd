/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * The generic netlink API of the esa kernel module: family, commands,
 * attributes, multicast group. Documentation/netlink/specs/esa.yaml is the
 * same API in the kernel's YAML spec format; keep both in step.
 *
 * Every command validates strictly (unknown, read-only or out-of-range
 * attributes are rejected with an extack message naming the attribute).
 * Commands that change state need CAP_NET_ADMIN.
 */
#ifndef _UAPI_ESA_GENL_H
#define _UAPI_ESA_GENL_H

#include <linux/types.h>

#define ESA_GENL_NAME		"esa"
#define ESA_GENL_VERSION	1
#define ESA_GENL_MCGRP_EVENTS	"events"

/* Dynamic priority: default and limits of the aging half-life (ms). */
#define ESA_AGING_MS_DEFAULT	1000
#define ESA_AGING_MS_MIN	100
#define ESA_AGING_MS_MAX	600000
/*
 * agg_timeout_us limits: a claim older than agg_timeout_us may be
 * reclaimed by another packet; 0 disables reclaim (wire-protocol.rst).
 */
#define ESA_TIMEOUT_US_MIN	0
#define ESA_TIMEOUT_US_MAX	60000000
/* Defaults of the module and of a new module-less data plane. */
#define ESA_AGG_SLOTS_DEFAULT	4096
#define ESA_TIMEOUT_US_DEFAULT	100000	/* 100 ms */

enum esa_cmd {
	ESA_CMD_UNSPEC,
	ESA_CMD_JOB_ADD,	/* admin; id, fan-in, ps, workers, [prio|auto], [quota] */
	ESA_CMD_JOB_CHANGE,	/* admin; id plus what changes */
	ESA_CMD_JOB_DEL,	/* admin; id */
	ESA_CMD_JOB_GET,	/* id -> job; dump: every job */
	ESA_CMD_CONFIG_SET,	/* admin; agg-slots, agg-timeout-us, aging-ms, dp-generation */
	ESA_CMD_CONFIG_GET,
	ESA_CMD_POLICY_SET,	/* admin; policy */
	ESA_CMD_POLICY_GET,
	ESA_CMD_STATS_GET,	/* [id] -> counters (switch totals without id); dump: per job */
	ESA_CMD_OCCUPANCY_GET,	/* id -> occupancy; dump: per job */
	/* notifications on ESA_GENL_MCGRP_EVENTS */
	ESA_CMD_JOB_ADDED_NTF,	  /* job attributes */
	ESA_CMD_JOB_REMOVED_NTF,  /* id */
	ESA_CMD_JOB_PREEMPTED_NTF, /* id, event-count: partials evicted since last */
	ESA_CMD_JOB_COMPLETED_NTF, /* id, event-count: aggregates completed since last */
	ESA_CMD_JOB_CHANGED_NTF,  /* job attributes */
	ESA_CMD_POLICY_NTF,	  /* policy, config */
	ESA_CMD_JOB_SPOOFED_NTF,  /* id, event-count: frames claiming its bound addresses from other ports */
	ESA_CMD_JOB_TOKEN_GET,	/* admin; id -> id, token (aggctl config save) */
	__ESA_CMD_MAX,
};
#define ESA_CMD_MAX (__ESA_CMD_MAX - 1)

/* Job state, read-only, derived from the accounting of the data plane. */
enum esa_job_state {
	ESA_JOB_STATE_IDLE,	/* configured, no packet accounted yet */
	ESA_JOB_STATE_ACTIVE,	/* a packet accounted within the last second */
	ESA_JOB_STATE_STALLED,	/* packets seen before, none in the last second */
};

/* How a job's effective priority is chosen. */
enum esa_prio_mode {
	ESA_PRIO_FIXED,		/* the admin's ESA_A_JOB_PRIORITY */
	ESA_PRIO_DYNAMIC,	/* least attained service with aging */
};

/* Top-level attributes ("esa" attribute set). */
enum esa_attr {
	ESA_A_UNSPEC,
	ESA_A_PAD,
	ESA_A_JOB_ID,		/* u32, 1..ESA_MAX_JOB_ID */
	ESA_A_JOB_FAN_IN,	/* u8, 1..ESA_MAX_WORKERS; must equal the workers */
	ESA_A_JOB_PRIORITY,	/* u8, 0..255: fixed priority (sets mode fixed) */
	ESA_A_JOB_PRIO_AUTO,	/* flag: dynamic priority (sets mode dynamic) */
	ESA_A_JOB_QUOTA,	/* u32, aggregators asked for, 0..ESA_MAX_AGGREGATORS; 0 = no cap, share */
	ESA_A_JOB_PS_ADDR,	/* be32, IPv4 of the parameter server */
	ESA_A_JOB_PS_PORT,	/* be16, its UDP port */
	ESA_A_JOB_WORKERS,	/* nest: "workers" set */
	/* read-only below (rejected in requests) */
	ESA_A_JOB_PRIO_MODE,	/* u8, enum esa_prio_mode */
	ESA_A_JOB_EFF_PRIORITY,	/* u8, priority the data plane uses now */
	ESA_A_JOB_STATE,	/* u8, enum esa_job_state */
	ESA_A_JOB_AGG_BASE,	/* u32, first slot of the static slice */
	ESA_A_JOB_AGG_SLICE,	/* u32, slots of the static slice (0 unless static) */
	ESA_A_JOB_OCCUPANCY,	/* u32, aggregators the job holds now */
	ESA_A_JOB_ATTAINED,	/* u64, decayed tensor bytes aggregated (dynamic priority) */
	ESA_A_STATS,		/* nest: "stats" set */
	ESA_A_CFG_AGG_SLOTS,	/* u32, 1..ESA_MAX_AGGREGATORS (1 << 20) */
	ESA_A_CFG_AGG_TIMEOUT_US, /* u32, ESA_TIMEOUT_US_MIN..MAX */
	ESA_A_CFG_AGING_MS,	/* u32, half-life of attained service */
	ESA_A_POLICY,		/* u32, enum esa_policy */
	ESA_A_EVENT_COUNT,	/* u32, events folded into one notification */
	ESA_A_OCC_TOTAL,	/* u32, aggregators held by all jobs */
	/*
	 * u32, the generation of the current data plane (0: none). A data
	 * plane passes its generation with every aggregator claim and
	 * release; occupancy is counted per generation and the current one's
	 * is what occupancy, job get and the quota of the current data plane
	 * see. aggctl sets it to a new data plane's before loading it, and to
	 * 0 when it unloads it (Documentation/kmod.rst, "Occupancy").
	 */
	ESA_A_CFG_DP_GENERATION,
	/*
	 * u32, the ifindex of the switch port the PS is bound to; absent or
	 * 0: the first port its address is seen on (Documentation/
	 * security.rst).
	 */
	ESA_A_JOB_PS_IFINDEX,
	/*
	 * u64, the job's token (Documentation/security.rst), not 0: given
	 * on job add only; absent: the job has none. Only job-token-get
	 * replies with it: job records say ESA_A_JOB_HAS_TOKEN.
	 */
	ESA_A_JOB_TOKEN,
	/* u8, read-only: 1 if the job has a token, 0 if not */
	ESA_A_JOB_HAS_TOKEN,
	__ESA_A_MAX,
};
#define ESA_A_MAX (__ESA_A_MAX - 1)

/* "workers" attribute set: ESA_A_WORKERS_WORKER repeated, in worker order. */
enum esa_workers_attr {
	ESA_A_WORKERS_UNSPEC,
	ESA_A_WORKERS_WORKER,	/* nest: "worker" set; worker i = i-th entry */
	__ESA_A_WORKERS_MAX,
};
#define ESA_A_WORKERS_MAX (__ESA_A_WORKERS_MAX - 1)

/* "worker" attribute set. */
enum esa_worker_attr {
	ESA_A_WORKER_UNSPEC,
	ESA_A_WORKER_ADDR,	/* be32, IPv4 */
	ESA_A_WORKER_PORT,	/* be16, UDP port */
	ESA_A_WORKER_IFINDEX,	/* u32, bound switch port; absent or 0: first sight */
	__ESA_A_WORKER_MAX,
};
#define ESA_A_WORKER_MAX (__ESA_A_WORKER_MAX - 1)

/*
 * "stats" attribute set: one u64 per enum esa_counter, attribute type =
 * counter index + 1, then the bytes aggregated.
 */
#define ESA_A_STATS_COUNTER(cnt)	((cnt) + 1)
#define ESA_A_STATS_BYTES		64
#define ESA_A_STATS_MAX			ESA_A_STATS_BYTES

#endif /* _UAPI_ESA_GENL_H */
