// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl without the esa module: jobs, policy and switch settings of the
 * module-less data plane live in its pinned maps (tools/lib/esa_maps).
 * Same grammar and output as the netlink path; what needs the module
 * (dynamic priority, aging, events) says so (stats and occupancy read the
 * data plane: stats.c). Static slices are laid out here the way the
 * module does it: contiguous, in job id order; without the module a job's
 * slice is exactly its quota.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_maps.h"
#include "job_args.h"
#include "names.h"
#include "output.h"

static struct esa_switch *maps_switch(struct ctx *c, const char *what)
{
	struct esa_switch *sw = pinned_switch(c);

	if (sw && esa_switch_has_job_maps(sw))
		return sw;
	no_module(c, what);
	return NULL;
}

static int maps_fail(const char *what, int err, const char *why)
{
	fprintf(stderr, "aggctl: %s: %s%s%s\n", what, strerror(-err),
		why ? ": " : "", why ? why : "");
	return EXIT_FAIL;
}

static void print_info(const struct esa_job_info *j)
{
	int i;

	out_open_object(NULL);
	out_u64("id", "job", j->job_id);
	out_u64("fan_in", "fan-in", j->fan_in);
	out_str("prio_mode", "prio-mode", "fixed");
	out_u64("priority", NULL, j->priority);
	out_u64("quota", NULL, j->agg_quota);
	out_u64("agg_base", "agg-base", j->agg_base);
	out_u64("agg_slice", "agg-slice", j->agg_quota);
	out_str("ps", NULL, fmt_addr_port(j->ps_addr, j->ps_port));
	out_open_array("workers");
	for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++)
		out_str(NULL, "worker",
			fmt_addr_port(j->worker_addr[i], j->worker_port[i]));
	out_close_array();
	out_close_object();
	out_nl();
}

int maps_job_show(struct ctx *c, const struct job_args *a)
{
	struct esa_switch *sw = maps_switch(c, "job show");
	struct esa_job_info j;
	uint32_t id;
	int err;

	if (!sw)
		return EXIT_NOMOD;
	if (a->has_id) {
		err = esa_switch_job_get(sw, a->id, &j);
		if (err)
			return maps_fail("job show", err, "no such job");
		print_info(&j);
		out_finish();
		return EXIT_OK;
	}
	out_open_array(NULL);
	for (id = 1; id <= ESA_MAX_JOB_ID; id++)
		if (!esa_switch_job_get(sw, id, &j))
			print_info(&j);
	out_close_array();
	out_finish();
	return EXIT_OK;
}

/*
 * Re-lay the slices: each job's base follows the previous job's quota.
 * @skip is being deleted; @extra (may be NULL) is written too.
 */
static int relayout(struct esa_switch *sw, struct esa_job_info *extra,
		    uint32_t skip, const char *what)
{
	struct esa_switch_config cfg;
	struct esa_job_info j, *p;
	uint64_t base = 0;
	uint32_t id;
	int err, pass;

	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail(what, err, "reading the switch config");
	/* Pass 0 checks that the slices fit, pass 1 writes. */
	for (pass = 0; pass < 2; pass++) {
		base = 0;
		for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
			if (id == skip)
				continue;
			if (extra && extra->job_id == id)
				p = extra;
			else if (!esa_switch_job_get(sw, id, &j))
				p = &j;
			else
				continue;
			if (pass == 1) {
				p->agg_base = (uint32_t)base;
				err = esa_switch_job_put(sw, p);
				if (err)
					return maps_fail(what, err, "writing the job map");
			}
			base += p->agg_quota;
		}
		if (pass == 0 && cfg.policy == ESA_POLICY_STATIC &&
		    base > cfg.agg_slots)
			return maps_fail(what, -ENOSPC,
					 "static policy: the quotas exceed agg_slots");
	}
	return EXIT_OK;
}

int maps_job_set(struct ctx *c, uint8_t cmd, const struct job_args *a,
		 const char *what)
{
	struct esa_switch *sw = maps_switch(c, what);
	struct esa_job_info j;
	const char *why = NULL;
	int err, i, ret;

	if (!sw)
		return EXIT_NOMOD;
	err = esa_switch_job_get(sw, a->id, &j);
	if (cmd == ESA_CMD_JOB_ADD && !err)
		return maps_fail(what, -EEXIST, "job already exists");
	if (cmd != ESA_CMD_JOB_ADD && err)
		return maps_fail(what, -ENOENT, "no such job");
	if (cmd == ESA_CMD_JOB_DEL) {
		ret = relayout(sw, NULL, a->id, what);
		if (ret)
			return ret;
		err = esa_switch_job_del(sw, a->id);
		return err ? maps_fail(what, err, NULL) : EXIT_OK;
	}
	if (cmd == ESA_CMD_JOB_ADD) {
		memset(&j, 0, sizeof(j));
		j.job_id = a->id;
	}
	if (a->prio == JOB_PRIO_AUTO)
		return maps_fail(what, -EOPNOTSUPP,
				 "dynamic priority (auto) needs the esa module");
	if (a->prio >= 0)
		j.priority = (uint8_t)a->prio;
	if (a->has_ps) {
		j.ps_addr = a->ps_addr;
		j.ps_port = a->ps_port;
	}
	if (a->has_fan_in && !a->nworkers)
		return maps_fail(what, -EINVAL, "fan-in needs the workers list");
	if (a->nworkers) {
		if (a->nworkers > ESA_MAX_WORKERS)
			return maps_fail(what, -E2BIG,
					 "more workers than ESA_MAX_WORKERS (32)");
		if (a->has_fan_in && a->fan_in != (uint32_t)a->nworkers)
			return maps_fail(what, -EINVAL,
					 "fan-in differs from the number of workers");
		memset(j.worker_addr, 0, sizeof(j.worker_addr));
		memset(j.worker_port, 0, sizeof(j.worker_port));
		for (i = 0; i < a->nworkers; i++) {
			j.worker_addr[i] = a->waddr[i];
			j.worker_port[i] = a->wport[i];
		}
		j.fan_in = a->nworkers;
	}
	if (a->has_quota) {
		if (a->quota > ESA_MAX_AGGREGATORS)
			return maps_fail(what, -ERANGE, "quota above 65536");
		j.agg_quota = a->quota;
	}
	if (a->id == 0 || a->id > ESA_MAX_JOB_ID)
		return maps_fail(what, -ERANGE, "job id must be 1..1023");
	if (esa_job_validate(&j, &why))
		return maps_fail(what, -EINVAL, why);
	return relayout(sw, &j, 0, what);
}

int maps_policy_show(struct ctx *c)
{
	struct esa_switch *sw = maps_switch(c, "policy show");
	struct esa_switch_config cfg;
	int err;

	if (!sw)
		return EXIT_NOMOD;
	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail("policy show", err, NULL);
	out_open_object(NULL);
	out_str("policy", NULL, policy_name(cfg.policy));
	out_close_object();
	out_finish();
	return EXIT_OK;
}

int maps_policy_set(struct ctx *c, uint32_t policy)
{
	struct esa_switch *sw = maps_switch(c, "policy set");
	struct esa_switch_config cfg, old;
	int err, ret;

	if (!sw)
		return EXIT_NOMOD;
	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail("policy set", err, NULL);
	old = cfg;
	cfg.policy = policy;
	err = esa_switch_set_config(sw, &cfg);
	if (err)
		return maps_fail("policy set", err, NULL);
	ret = relayout(sw, NULL, 0, "policy set");
	if (ret)
		esa_switch_set_config(sw, &old);
	return ret;
}

int maps_config_set(struct ctx *c, const uint32_t *slots,
		    const uint32_t *timeout_us)
{
	struct esa_switch *sw = maps_switch(c, "switch set");
	struct esa_switch_config cfg, old;
	int err, ret;

	if (!sw)
		return EXIT_NOMOD;
	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail("switch set", err, NULL);
	old = cfg;
	if (slots) {
		if (!*slots || *slots > ESA_MAX_AGGREGATORS)
			return maps_fail("switch set", -ERANGE,
					 "slots must be 1..65536");
		cfg.agg_slots = *slots;
	}
	if (timeout_us) {
		if (*timeout_us < ESA_TIMEOUT_US_MIN ||
		    *timeout_us > ESA_TIMEOUT_US_MAX)
			return maps_fail("switch set", -ERANGE,
					 "timeout must be 1..60000000 us");
		cfg.agg_timeout_us = *timeout_us;
	}
	err = esa_switch_set_config(sw, &cfg);
	if (err)
		return maps_fail("switch set", err, NULL);
	ret = relayout(sw, NULL, 0, "switch set");
	if (ret)
		esa_switch_set_config(sw, &old);
	return ret;
}

bool maps_config_print(struct ctx *c)
{
	struct esa_switch *sw = pinned_switch(c);
	struct esa_switch_config cfg;

	if (!sw || !esa_switch_has_job_maps(sw) ||
	    esa_switch_get_config(sw, &cfg))
		return false;
	out_str("policy", NULL, policy_name(cfg.policy));
	out_u64("agg_slots", "slots", cfg.agg_slots);
	out_u64("agg_timeout_us", "timeout-us", cfg.agg_timeout_us);
	return true;
}
