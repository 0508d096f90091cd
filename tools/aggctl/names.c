// SPDX-License-Identifier: GPL-2.0
/* Names for the esa API (names.h); attribute names follow esa.yaml. */
#include <stdio.h>
#include <string.h>
#include "esa_genl.h"
#include "esa_switch.h"
#include "esa_dp.h"
#include "names.h"

static const char *const attr_names[ESA_A_MAX + 1] = {
	[ESA_A_PAD] = "pad",
	[ESA_A_JOB_ID] = "job-id",
	[ESA_A_JOB_FAN_IN] = "fan-in",
	[ESA_A_JOB_PRIORITY] = "priority",
	[ESA_A_JOB_PRIO_AUTO] = "prio-auto",
	[ESA_A_JOB_QUOTA] = "quota",
	[ESA_A_JOB_PS_ADDR] = "ps-addr",
	[ESA_A_JOB_PS_PORT] = "ps-port",
	[ESA_A_JOB_WORKERS] = "workers",
	[ESA_A_JOB_PRIO_MODE] = "prio-mode",
	[ESA_A_JOB_EFF_PRIORITY] = "eff-priority",
	[ESA_A_JOB_STATE] = "state",
	[ESA_A_JOB_AGG_BASE] = "agg-base",
	[ESA_A_JOB_AGG_SLICE] = "agg-slice",
	[ESA_A_JOB_OCCUPANCY] = "occupancy",
	[ESA_A_JOB_ATTAINED] = "attained",
	[ESA_A_STATS] = "stats",
	[ESA_A_CFG_AGG_SLOTS] = "agg-slots",
	[ESA_A_CFG_AGG_TIMEOUT_US] = "agg-timeout-us",
	[ESA_A_CFG_AGING_MS] = "aging-ms",
	[ESA_A_POLICY] = "policy",
	[ESA_A_EVENT_COUNT] = "event-count",
	[ESA_A_OCC_TOTAL] = "occ-total",
	[ESA_A_CFG_DP_GENERATION] = "dp-generation",
	[ESA_A_JOB_PS_IFINDEX] = "ps-ifindex",
	[ESA_A_JOB_TOKEN] = "token",
	[ESA_A_JOB_HAS_TOKEN] = "has-token",
};

static char unknown[32];

const char *attr_name(unsigned int type)
{
	if (type <= ESA_A_MAX && attr_names[type])
		return attr_names[type];
	snprintf(unknown, sizeof(unknown), "#%u", type);
	return unknown;
}

const char *worker_attr_name(unsigned int type)
{
	switch (type) {
	case ESA_A_WORKER_ADDR:
		return "addr";
	case ESA_A_WORKER_PORT:
		return "port";
	}
	snprintf(unknown, sizeof(unknown), "#%u", type);
	return unknown;
}

static const char *const policies[__ESA_POLICY_MAX] = {
	[ESA_POLICY_ESA] = "esa",
	[ESA_POLICY_ATP] = "atp",
	[ESA_POLICY_STATIC] = "static",
};

const char *policy_name(unsigned int p)
{
	return p < __ESA_POLICY_MAX ? policies[p] : "unknown";
}

int policy_parse(const char *s)
{
	int i;

	for (i = 0; i < __ESA_POLICY_MAX; i++)
		if (!strcmp(s, policies[i]))
			return i;
	return -1;
}

const char *state_name(unsigned int s)
{
	switch (s) {
	case ESA_JOB_STATE_IDLE:
		return "idle";
	case ESA_JOB_STATE_ACTIVE:
		return "active";
	case ESA_JOB_STATE_STALLED:
		return "stalled";
	}
	return "unknown";
}

/* The data plane library owns the counter names: one table for all tools. */
const char *counter_name(unsigned int c)
{
	const char *name = esa_counter_name(c);

	return name ? name : "unknown";
}
