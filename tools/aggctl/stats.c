// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl stats and aggctl occupancy.
 *
 * stats prints two views when both exist: what the module accounted
 * through esa_account() ("module") and the data plane's own per-CPU
 * counters read from its pinned map ("dataplane"). occupancy is the
 * module's count of aggregators each job holds (claims minus releases);
 * without the module it is counted from the pinned aggregator array
 * itself (slots not free, by owner), printed the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_dp.h"
#include "names.h"
#include "output.h"

static int stats_usage(const char *obj, FILE *f)
{
	fprintf(f, "usage: aggctl %s [show] [job ID]\n", obj);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

static int parse_job_filter(const char *obj, int argc, char **argv,
			    uint32_t *id, bool *has)
{
	int ret;

	*has = false;
	if (argc > 0 && matches(*argv, "show")) {
		argc--;
		argv++;
	}
	while (argc > 0) {
		if (strcmp(*argv, "job") && strcmp(*argv, "id"))
			return usage_unknown(obj, *argv);
		NEXT_ARG();
		ret = arg_job_id(*argv, id);
		if (ret)
			return ret;
		*has = true;
		argc--;
		argv++;
	}
	return EXIT_OK;
}

static void print_counters_nest(const struct nlattr *nest)
{
	const struct nlattr *tb[ESA_A_STATS_MAX + 1] = {};
	unsigned int i;

	genl_parse_nested(nest, tb, ESA_A_STATS_MAX);
	out_open_object("module");
	out_text("module:");
	for (i = 0; i < __ESA_CNT_MAX; i++)
		if (tb[ESA_A_STATS_COUNTER(i)])
			out_u64(counter_name(i), NULL,
				mnl_attr_get_u64(tb[ESA_A_STATS_COUNTER(i)]));
	if (tb[ESA_A_STATS_BYTES])
		out_u64("bytes", NULL, mnl_attr_get_u64(tb[ESA_A_STATS_BYTES]));
	out_close_object();
}

static void print_dataplane(struct ctx *c, uint32_t job)
{
	__u64 cnt[__ESA_CNT_MAX];
	struct esa_switch *sw = pinned_switch(c);
	unsigned int i;

	if (!sw || esa_switch_counters(sw, job, cnt))
		return;
	out_open_object("dataplane");
	out_text("dataplane:");
	for (i = 0; i < __ESA_CNT_MAX; i++)
		out_u64(counter_name(i), NULL, cnt[i]);
	out_close_object();
}

/* One record of the module-less stats: job @id (0: the totals). */
static void stats_record(struct ctx *c, uint32_t id)
{
	out_open_object(NULL);
	if (id)
		out_u64("job", NULL, id);
	else
		out_str("job", NULL, "all");
	print_dataplane(c, id);
	out_close_object();
	out_nl();
}

/*
 * Module-less: the data plane's counters are all there is. The same
 * records as with the module: the totals, then one per job (or the one
 * asked for, which must exist).
 */
int maps_stats(struct ctx *c, const struct cmd_req *r)
{
	struct esa_switch *sw = pinned_switch(c);
	uint32_t id = r->id, k;
	bool has = r->has_id;
	struct esa_job_info j;
	bool jobs;

	if (!sw)
		return no_module(c, "stats");
	jobs = esa_switch_has_job_maps(sw);
	if (has && jobs && esa_switch_job_get(sw, id, &j)) {
		fprintf(stderr, "aggctl: stats: no such job %u (aggctl job show)\n", id);
		return EXIT_FAIL;
	}
	out_open_array(NULL);
	if (has) {
		stats_record(c, id);
	} else {
		stats_record(c, 0);
		for (k = 1; jobs && k <= ESA_MAX_JOB_ID; k++)
			if (!esa_switch_job_get(sw, k, &j))
				stats_record(c, k);
	}
	out_close_array();
	out_finish();
	return EXIT_OK;
}

struct stats_cb_data {
	struct ctx *c;
};

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	struct stats_cb_data *d = data;
	uint32_t id = 0;

	genl_parse(nlh, tb);
	out_open_object(NULL);
	if (tb[ESA_A_JOB_ID]) {
		id = mnl_attr_get_u32(tb[ESA_A_JOB_ID]);
		out_u64("job", NULL, id);
	} else {
		out_str("job", NULL, "all");
	}
	if (tb[ESA_A_STATS])
		print_counters_nest(tb[ESA_A_STATS]);
	print_dataplane(d->c, id);
	out_close_object();
	out_nl();
	return MNL_CB_OK;
}

int module_stats(struct ctx *c, const struct cmd_req *r)
{
	struct stats_cb_data d = { .c = c };
	struct nlmsghdr *nlh;
	int err;

	/* Totals first, then one record per job (or the one asked for). */
	out_open_array(NULL);
	nlh = genl_req(&c->g, ESA_CMD_STATS_GET, 0);
	if (r->has_id)
		mnl_attr_put_u32(nlh, ESA_A_JOB_ID, r->id);
	err = genl_talk(&c->g, nlh, stats_cb, &d);
	if (!err && !r->has_id) {
		nlh = genl_req(&c->g, ESA_CMD_STATS_GET, NLM_F_DUMP);
		err = genl_talk(&c->g, nlh, stats_cb, &d);
	}
	out_close_array();
	out_finish();
	return err ? fail(c, r->what, err) : EXIT_OK;
}

int do_stats(struct ctx *c, int argc, char **argv)
{
	struct cmd_req r = { .what = "stats" };
	int ret;

	if (argc > 0 && matches(*argv, "help"))
		return stats_usage("stats", stdout);
	ret = parse_job_filter("stats", argc, argv, &r.id, &r.has_id);
	if (ret)
		return ret;
	return run_cmd(c, CMD_STATS, &r);
}

static int occ_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};

	genl_parse(nlh, tb);
	out_open_object(NULL);
	if (tb[ESA_A_JOB_ID])
		out_u64("job", NULL, mnl_attr_get_u32(tb[ESA_A_JOB_ID]));
	else
		out_str("job", NULL, "all");
	print_attr_u32(tb, ESA_A_JOB_OCCUPANCY, "occupancy", NULL);
	print_attr_u32(tb, ESA_A_OCC_TOTAL, "occupancy", NULL);
	print_attr_u32(tb, ESA_A_CFG_AGG_SLOTS, "agg_slots", "slots");
	print_slice(tb);
	out_close_object();
	out_nl();
	return MNL_CB_OK;
}

/* One job's occupancy record, module-less: the module path's keys. */
static void occ_print_job(const struct esa_job_info *j, __u32 held)
{
	out_open_object(NULL);
	out_u64("job", NULL, j->job_id);
	out_u64("occupancy", NULL, held);
	out_u64("quota", NULL, j->quota);
	out_u64("agg_base", "agg-base", j->agg_base);
	out_u64("agg_slice", "agg-slice", j->agg_slice);
	out_close_object();
	out_nl();
}

/*
 * Module-less occupancy: the aggregators of the config's agg_slots that
 * are not free, by owner. The total counts the slots of existing jobs, as
 * the module's does; a deleted job's slots wait for a reclaim.
 */
int maps_occupancy(struct ctx *c, const struct cmd_req *r)
{
	static __u32 per_job[ESA_MAX_JOB_ID + 1];
	uint32_t id = r->id;
	bool has = r->has_id;
	struct esa_switch *sw = pinned_switch(c);
	struct esa_switch_config cfg;
	struct esa_job_info j;
	__u32 total = 0, k;
	int err;

	if (!sw || !esa_switch_has_job_maps(sw))
		return no_module(c, "occupancy");
	err = esa_switch_get_config(sw, &cfg);
	if (!err && has)
		err = esa_switch_job_get(sw, id, &j);
	if (err == -ENOENT && has) {
		fprintf(stderr, "aggctl: occupancy: %s: no such job\n",
			strerror(-err));
		return EXIT_FAIL;
	}
	if (!err)
		err = esa_switch_agg_owners(sw, cfg.agg_slots, per_job);
	if (err) {
		fprintf(stderr, "aggctl: occupancy: reading the data plane: %s\n",
			strerror(-err));
		return EXIT_FAIL;
	}
	out_open_array(NULL);
	if (has) {
		occ_print_job(&j, per_job[id]);
	} else {
		for (k = 1; k <= ESA_MAX_JOB_ID; k++)
			if (per_job[k] && !esa_switch_job_get(sw, k, &j))
				total += per_job[k];
		out_open_object(NULL);
		out_str("job", NULL, "all");
		out_u64("occupancy", NULL, total);
		out_u64("agg_slots", "slots", cfg.agg_slots);
		out_close_object();
		out_nl();
		for (k = 1; k <= ESA_MAX_JOB_ID; k++)
			if (!esa_switch_job_get(sw, k, &j))
				occ_print_job(&j, per_job[k]);
	}
	out_close_array();
	out_finish();
	return EXIT_OK;
}

int module_occupancy(struct ctx *c, const struct cmd_req *r)
{
	struct nlmsghdr *nlh;
	int err;

	out_open_array(NULL);
	nlh = genl_req(&c->g, ESA_CMD_OCCUPANCY_GET, 0);
	if (r->has_id)
		mnl_attr_put_u32(nlh, ESA_A_JOB_ID, r->id);
	err = genl_talk(&c->g, nlh, occ_cb, NULL);
	if (!err && !r->has_id) {
		nlh = genl_req(&c->g, ESA_CMD_OCCUPANCY_GET, NLM_F_DUMP);
		err = genl_talk(&c->g, nlh, occ_cb, NULL);
	}
	out_close_array();
	out_finish();
	return err ? fail(c, r->what, err) : EXIT_OK;
}

int do_occupancy(struct ctx *c, int argc, char **argv)
{
	struct cmd_req r = { .what = "occupancy" };
	int ret;

	if (argc > 0 && matches(*argv, "help"))
		return stats_usage("occupancy", stdout);
	ret = parse_job_filter("occupancy", argc, argv, &r.id, &r.has_id);
	if (ret)
		return ret;
	return run_cmd(c, CMD_OCCUPANCY, &r);
}
