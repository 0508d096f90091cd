// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl without the esa module: jobs, policy and switch settings of the
 * module-less data plane live in its pinned maps. This file only turns
 * the command line into job records and settings and prints them: what is
 * valid, how the static slices are laid out and the order of the writes
 * are decided where the module decides them, by the rules of
 * lib/esa_rules.c (through esa_switch_commit()). What needs the module
 * (dynamic priority, aging, events) says so; stats and occupancy read the
 * data plane (stats.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_dp.h"
#include "job_args.h"
#include "names.h"
#include "output.h"

/* The module-less data plane, or NULL with *ret the exit status. */
static struct esa_switch *maps_switch(struct ctx *c, const char *what, int *ret)
{
	struct esa_switch *sw = pinned_switch(c);

	if (sw && esa_switch_has_job_maps(sw))
		return sw;
	*ret = no_module(c, what);
	return NULL;
}

static int maps_fail(const char *what, int err, const char *why)
{
	fprintf(stderr, "aggctl: %s: %s%s%s\n", what, strerror(-err),
		why ? ": " : "", why ? why : "");
	return EXIT_FAIL;
}

/* esa_switch_commit() for a command: its refusal as the module's would read. */
static int maps_commit(struct esa_switch *sw, const char *what,
		       const struct esa_switch_config *cfg,
		       const struct esa_job_info *job, uint32_t del_id)
{
	struct esa_rules_err e = {};
	int err;

	err = esa_switch_commit(sw, cfg, job, del_id, &e);
	return err ? maps_fail(what, err, e.msg) : EXIT_OK;
}

static void print_info(struct ctx *c, const struct esa_job_info *j)
{
	bool fixed = j->prio_mode == ESA_PRIO_FIXED;

	out_open_object(NULL);
	out_u64("id", "job", j->job_id);
	out_u64("fan_in", "fan-in", j->fan_in);
	out_str("prio_mode", "prio-mode", fixed ? "fixed" : "auto");
	if (fixed)
		out_u64("priority", NULL, j->priority);
	out_u64("quota", NULL, j->quota);
	out_u64("agg_base", "agg-base", j->agg_base);
	out_u64("agg_slice", "agg-slice", j->agg_slice);
	out_bool("has_token", "token", j->token != 0);
	print_members(c, j);
	out_close_object();
	out_nl();
}

int maps_job_show(struct ctx *c, const struct cmd_req *r)
{
	const struct job_args *a = r->job;
	struct esa_switch *sw;
	struct esa_job_info j;
	uint32_t id;
	int err, ret;

	sw = maps_switch(c, "job show", &ret);
	if (!sw)
		return ret;
	if (a->has_id) {
		err = esa_switch_job_get(sw, a->id, &j);
		if (err)
			return maps_fail("job show", err, "no such job");
		print_info(c, &j);
		out_finish();
		return EXIT_OK;
	}
	out_open_array(NULL);
	for (id = 1; id <= ESA_MAX_JOB_ID; id++)
		if (!esa_switch_job_get(sw, id, &j))
			print_info(c, &j);
	out_close_array();
	out_finish();
	return EXIT_OK;
}

int maps_job_list(struct ctx *c, const struct cmd_req *r)
{
	struct esa_switch *sw;
	uint32_t id;
	int ret;

	sw = maps_switch(c, r->what, &ret);
	if (!sw)
		return ret;
	r->jobs->n = 0;
	for (id = 1; id <= ESA_MAX_JOB_ID; id++)
		if (!esa_switch_job_get(sw, id, &r->jobs->j[r->jobs->n]))
			r->jobs->n++;
	return EXIT_OK;
}

/* What the command line says about a job, applied to record @j. */
static int apply_args(struct esa_job_info *j, const struct job_args *a,
		      const char *what)
{
	int i;

	if (a->has_fan_in && !a->nworkers)
		return maps_fail(what, -EINVAL, "fan-in needs the workers list");
	if (a->nworkers > ESA_MAX_WORKERS)
		return maps_fail(what, -E2BIG,
				 "more workers than ESA_MAX_WORKERS (32)");
	if (a->nworkers && a->has_fan_in && a->fan_in != (uint32_t)a->nworkers)
		return maps_fail(what, -EINVAL,
				 "fan-in differs from the number of workers");
	if (a->prio == JOB_PRIO_AUTO) {
		j->prio_mode = ESA_PRIO_DYNAMIC;
		j->priority = 0;
	} else if (a->prio >= 0) {
		j->prio_mode = ESA_PRIO_FIXED;
		j->priority = (uint8_t)a->prio;
	}
	if (a->has_ps) {
		j->ps_addr = a->ps_addr;
		j->ps_port = a->ps_port;
		j->ps_ifindex = a->ps_ifindex;
	}
	if (a->nworkers) {
		memset(j->worker_addr, 0, sizeof(j->worker_addr));
		memset(j->worker_port, 0, sizeof(j->worker_port));
		memset(j->worker_ifindex, 0, sizeof(j->worker_ifindex));
		for (i = 0; i < a->nworkers; i++) {
			j->worker_addr[i] = a->waddr[i];
			j->worker_port[i] = a->wport[i];
			j->worker_ifindex[i] = a->wifindex[i];
		}
		j->fan_in = a->nworkers;
	}
	if (a->has_quota)
		j->quota = a->quota;
	if (a->has_token)
		j->token = a->token;
	return EXIT_OK;
}

int maps_job_set(struct ctx *c, const struct cmd_req *r)
{
	const struct job_args *a = r->job;
	const char *what = r->what;
	uint8_t cmd = r->cmd;
	struct esa_switch *sw;
	struct esa_job_info j;
	int err, ret;

	sw = maps_switch(c, what, &ret);
	if (!sw)
		return ret;
	err = esa_switch_job_get(sw, a->id, &j);
	if (cmd == ESA_CMD_JOB_ADD && !err)
		return maps_fail(what, -EEXIST, "job already exists");
	if (cmd != ESA_CMD_JOB_ADD && err)
		return maps_fail(what, -ENOENT, "no such job");
	if (cmd == ESA_CMD_JOB_DEL)
		return maps_commit(sw, what, NULL, NULL, a->id);
	if (cmd == ESA_CMD_JOB_ADD) {
		/* as with the module: priority auto unless given */
		memset(&j, 0, sizeof(j));
		j.job_id = a->id;
		j.prio_mode = ESA_PRIO_DYNAMIC;
	}
	ret = apply_args(&j, a, what);
	if (ret)
		return ret;
	return maps_commit(sw, what, NULL, &j, 0);
}

int maps_policy_show(struct ctx *c, const struct cmd_req *r)
{
	struct esa_switch *sw;
	struct esa_switch_config cfg;
	int err, ret;

	sw = maps_switch(c, "policy show", &ret);
	if (!sw)
		return ret;
	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail("policy show", err, NULL);
	out_open_object(NULL);
	out_str("policy", NULL, policy_name(cfg.policy));
	out_close_object();
	out_finish();
	return EXIT_OK;
}

/* Change the settings given (NULL: unchanged), with the jobs' slices. */
static int maps_config_change(struct ctx *c, const char *what,
			      const uint32_t *policy, const uint32_t *slots,
			      const uint32_t *timeout_us)
{
	struct esa_switch *sw;
	struct esa_switch_config cfg;
	int err, ret;

	sw = maps_switch(c, what, &ret);
	if (!sw)
		return ret;
	err = esa_switch_get_config(sw, &cfg);
	if (err)
		return maps_fail(what, err, NULL);
	if (policy)
		cfg.policy = *policy;
	if (slots)
		cfg.agg_slots = *slots;
	if (timeout_us)
		cfg.agg_timeout_us = *timeout_us;
	return maps_commit(sw, what, &cfg, NULL, 0);
}

int maps_policy_set(struct ctx *c, const struct cmd_req *r)
{
	return maps_config_change(c, r->what, &r->policy, NULL, NULL);
}

/* Slots and timeout; aging is the module's (of dynamic priorities). */
int maps_switch_set(struct ctx *c, const struct cmd_req *r)
{
	const struct cfg_req *q = r->cfg;

	if (q->has_a)
		return needs_module(c, r->what, "aging (of dynamic priorities)");
	return maps_config_change(c, r->what, NULL, q->has_s ? &q->slots : NULL,
				  q->has_t ? &q->timeout : NULL);
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
