// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl job { add | change | del | show }: the module's job registry.
 * Arguments are checked for syntax here; ranges and consistency (ids,
 * fan-in against workers, duplicates, quotas) are the kernel's to judge,
 * and its extack message is what the user sees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_switch.h"
#include "esa_dp.h"
#include "job_args.h"
#include "names.h"
#include "output.h"

static int job_usage(FILE *f)
{
	fputs("usage: aggctl job add id ID ps ADDR:PORT [dev IF] worker ADDR:PORT [dev IF]...\n"
	      "                      [fan-in N] [priority { 0..255 | auto }] [quota N]\n"
	      "                      [token { HEX16 | random }]\n"
	      "       aggctl job change id ID [ps ADDR:PORT [dev IF]] [worker ADDR:PORT [dev IF]]...\n"
	      "                      [fan-in N] [priority { 0..255 | auto }] [quota N]\n"
	      "       aggctl job del id ID\n"
	      "       aggctl job show [id ID]\n", f);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

/*
 * "dev IF": the switch port the member just named (@what) is bound to
 * (Documentation/security.rst); 0 and an error for a name no interface has.
 */
static int arg_dev(const char *what, const char *name, uint32_t *ifindex)
{
	*ifindex = if_nametoindex(name);
	if (*ifindex)
		return EXIT_OK;
	fprintf(stderr, "aggctl: %s dev '%s': no such interface (the switch port the member is bound to)\n",
		what, name);
	return EXIT_USAGE;
}

int job_args_parse(int argc, char **argv, struct job_args *a, bool add)
{
	const char *last = NULL;	/* "ps" or "worker": what a dev binds */
	uint32_t v;
	int ret;

	memset(a, 0, sizeof(*a));
	a->prio = JOB_PRIO_NONE;
	while (argc > 0) {
		if (!strcmp(*argv, "id")) {
			NEXT_ARG();
			ret = arg_job_id(*argv, &a->id);
			if (ret)
				return ret;
			a->has_id = true;
		} else if (!strcmp(*argv, "ps")) {
			NEXT_ARG();
			ret = arg_addr_port("ps", *argv, &a->ps_addr, &a->ps_port);
			if (ret)
				return ret;
			a->has_ps = true;
			last = "ps";
		} else if (!strcmp(*argv, "worker")) {
			NEXT_ARG();
			if (a->nworkers == JOB_ARGS_MAX_WORKERS) {
				fprintf(stderr, "aggctl: more than %d workers\n",
					JOB_ARGS_MAX_WORKERS);
				return EXIT_USAGE;
			}
			ret = arg_addr_port("worker", *argv, &a->waddr[a->nworkers],
					    &a->wport[a->nworkers]);
			if (ret)
				return ret;
			a->nworkers++;
			last = "worker";
		} else if (!strcmp(*argv, "dev")) {
			NEXT_ARG();
			if (!last) {
				fprintf(stderr, "aggctl: job: \"dev IF\" follows the \"ps ADDR:PORT\" or \"worker ADDR:PORT\" it binds\n");
				return EXIT_USAGE;
			}
			ret = arg_dev(last, *argv, *last == 'p' ? &a->ps_ifindex :
				      &a->wifindex[a->nworkers - 1]);
			if (ret)
				return ret;
			last = NULL;
		} else if (!strcmp(*argv, "fan-in")) {
			NEXT_ARG();
			ret = arg_u32("fan-in", *argv, 1, ESA_MAX_WORKERS, &a->fan_in);
			if (ret)
				return ret;
			a->has_fan_in = true;
		} else if (!strcmp(*argv, "priority")) {
			NEXT_ARG();
			if (!strcmp(*argv, "auto")) {
				a->prio = JOB_PRIO_AUTO;
			} else {
				ret = arg_u32("priority (or auto)", *argv, 0,
					      ESA_MAX_PRIORITY, &v);
				if (ret)
					return ret;
				a->prio = (int)v;
			}
		} else if (!strcmp(*argv, "quota")) {
			NEXT_ARG();
			ret = arg_u32("quota", *argv, 0, ESA_MAX_AGGREGATORS,
				      &a->quota);
			if (ret)
				return ret;
			a->has_quota = true;
		} else if (!strcmp(*argv, "token")) {
			NEXT_ARG();
			if (!add) {
				fprintf(stderr, "aggctl: job: \"token\" is given on job add only (delete the job and add it again for another token)\n");
				return EXIT_USAGE;
			}
			ret = arg_token(*argv, &a->token, &a->token_random);
			if (ret)
				return ret;
			a->has_token = true;
		} else {
			return usage_unknown("job", *argv);
		}
		argc--;
		argv++;
	}
	if (!a->has_id) {
		fprintf(stderr, "aggctl: job: \"id ID\" is required\n");
		return EXIT_USAGE;
	}
	if (add && (!a->has_ps || !a->nworkers)) {
		fprintf(stderr, "aggctl: job add: \"ps ADDR:PORT\" and at least one \"worker ADDR:PORT\" are required\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void put_job(struct nlmsghdr *nlh, const struct job_args *a)
{
	struct nlattr *ws, *w;
	int i;

	mnl_attr_put_u32(nlh, ESA_A_JOB_ID, a->id);
	if (a->has_ps) {
		mnl_attr_put_u32(nlh, ESA_A_JOB_PS_ADDR, a->ps_addr);
		mnl_attr_put_u16(nlh, ESA_A_JOB_PS_PORT, a->ps_port);
		mnl_attr_put_u32(nlh, ESA_A_JOB_PS_IFINDEX, a->ps_ifindex);
	}
	if (a->nworkers) {
		/* fan-in defaults to the number of workers */
		mnl_attr_put_u8(nlh, ESA_A_JOB_FAN_IN,
				a->has_fan_in ? a->fan_in : (uint32_t)a->nworkers);
		ws = mnl_attr_nest_start(nlh, ESA_A_JOB_WORKERS);
		for (i = 0; i < a->nworkers; i++) {
			w = mnl_attr_nest_start(nlh, ESA_A_WORKERS_WORKER);
			mnl_attr_put_u32(nlh, ESA_A_WORKER_ADDR, a->waddr[i]);
			mnl_attr_put_u16(nlh, ESA_A_WORKER_PORT, a->wport[i]);
			mnl_attr_put_u32(nlh, ESA_A_WORKER_IFINDEX, a->wifindex[i]);
			mnl_attr_nest_end(nlh, w);
		}
		mnl_attr_nest_end(nlh, ws);
	} else if (a->has_fan_in) {
		mnl_attr_put_u8(nlh, ESA_A_JOB_FAN_IN, a->fan_in);
	}
	if (a->prio == JOB_PRIO_AUTO)
		mnl_attr_put(nlh, ESA_A_JOB_PRIO_AUTO, 0, NULL);
	else if (a->prio >= 0)
		mnl_attr_put_u8(nlh, ESA_A_JOB_PRIORITY, (uint8_t)a->prio);
	if (a->has_quota)
		mnl_attr_put_u32(nlh, ESA_A_JOB_QUOTA, a->quota);
	if (a->has_token)
		mnl_attr_put_u64(nlh, ESA_A_JOB_TOKEN, a->token);
}

/*
 * A token job add drew: printed once, here, so the operator can hand it
 * to the members (nothing reports it again).
 */
static void print_new_token(const struct job_args *a)
{
	char hex[17];

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)a->token);
	out_open_object(NULL);
	out_u64("id", "job", a->id);
	out_str("token", NULL, hex);
	out_close_object();
	out_nl();
	out_finish();
}

/* The u32 attribute @type of a reply as @key (text: @label), if present. */
void print_attr_u32(const struct nlattr **tb, int type, const char *key,
		    const char *label)
{
	if (tb[type])
		out_u64(key, label, mnl_attr_get_u32(tb[type]));
}

/* A job's quota and static slice, as job show and occupancy print them. */
void print_slice(const struct nlattr **tb)
{
	print_attr_u32(tb, ESA_A_JOB_QUOTA, "quota", NULL);
	print_attr_u32(tb, ESA_A_JOB_AGG_BASE, "agg_base", "agg-base");
	print_attr_u32(tb, ESA_A_JOB_AGG_SLICE, "agg_slice", "agg-slice");
}

/* The members of a job record from the module. */
static void members_of(const struct nlattr **tb, struct esa_job_info *j)
{
	const struct nlattr *w, *wtb[ESA_A_WORKER_MAX + 1];

	memset(j, 0, sizeof(*j));
	if (tb[ESA_A_JOB_PS_ADDR])
		j->ps_addr = mnl_attr_get_u32(tb[ESA_A_JOB_PS_ADDR]);
	if (tb[ESA_A_JOB_PS_PORT])
		j->ps_port = mnl_attr_get_u16(tb[ESA_A_JOB_PS_PORT]);
	if (tb[ESA_A_JOB_PS_IFINDEX])
		j->ps_ifindex = mnl_attr_get_u32(tb[ESA_A_JOB_PS_IFINDEX]);
	if (!tb[ESA_A_JOB_WORKERS])
		return;
	mnl_attr_for_each_nested(w, tb[ESA_A_JOB_WORKERS]) {
		if (j->fan_in == ESA_MAX_WORKERS)
			break;
		memset(wtb, 0, sizeof(wtb));
		genl_parse_nested(w, wtb, ESA_A_WORKER_MAX);
		if (!wtb[ESA_A_WORKER_ADDR] || !wtb[ESA_A_WORKER_PORT])
			continue;
		j->worker_addr[j->fan_in] = mnl_attr_get_u32(wtb[ESA_A_WORKER_ADDR]);
		j->worker_port[j->fan_in] = mnl_attr_get_u16(wtb[ESA_A_WORKER_PORT]);
		if (wtb[ESA_A_WORKER_IFINDEX])
			j->worker_ifindex[j->fan_in] =
				mnl_attr_get_u32(wtb[ESA_A_WORKER_IFINDEX]);
		j->fan_in++;
	}
}

void job_members_of(const struct nlattr **tb, struct esa_job_info *j)
{
	members_of(tb, j);
}

void print_job(struct ctx *c, const struct nlattr **tb)
{
	struct esa_job_info j;
	bool fixed;

	print_attr_u32(tb, ESA_A_JOB_ID, "id", "job");
	if (tb[ESA_A_JOB_STATE])
		out_str("state", NULL,
			state_name(mnl_attr_get_u8(tb[ESA_A_JOB_STATE])));
	if (tb[ESA_A_JOB_FAN_IN])
		out_u64("fan_in", "fan-in", mnl_attr_get_u8(tb[ESA_A_JOB_FAN_IN]));
	fixed = tb[ESA_A_JOB_PRIO_MODE] &&
		mnl_attr_get_u8(tb[ESA_A_JOB_PRIO_MODE]) == ESA_PRIO_FIXED;
	if (tb[ESA_A_JOB_PRIO_MODE])
		out_str("prio_mode", "prio-mode", fixed ? "fixed" : "auto");
	if (fixed && tb[ESA_A_JOB_PRIORITY])
		out_u64("priority", NULL, mnl_attr_get_u8(tb[ESA_A_JOB_PRIORITY]));
	if (tb[ESA_A_JOB_EFF_PRIORITY])
		out_u64("eff_priority", "eff-priority",
			mnl_attr_get_u8(tb[ESA_A_JOB_EFF_PRIORITY]));
	print_slice(tb);
	if (tb[ESA_A_JOB_HAS_TOKEN])
		out_bool("has_token", "token",
			 mnl_attr_get_u8(tb[ESA_A_JOB_HAS_TOKEN]));
	print_attr_u32(tb, ESA_A_JOB_OCCUPANCY, "occupancy", NULL);
	if (tb[ESA_A_JOB_ATTAINED])
		out_u64("attained_bytes", "attained",
			mnl_attr_get_u64(tb[ESA_A_JOB_ATTAINED]));
	if (!tb[ESA_A_JOB_PS_ADDR] || !tb[ESA_A_JOB_PS_PORT])
		return;		/* an event that names the job only */
	members_of(tb, &j);
	print_members(c, &j);
}

static int job_list_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	struct job_list *l = data;

	genl_parse(nlh, tb);
	if (!tb[ESA_A_JOB_ID] || l->n == ESA_MAX_JOB_ID)
		return MNL_CB_OK;
	members_of(tb, &l->j[l->n]);
	l->j[l->n++].job_id = mnl_attr_get_u32(tb[ESA_A_JOB_ID]);
	return MNL_CB_OK;
}

static int module_jobs(struct ctx *c, struct job_list *l)
{
	l->n = 0;
	return genl_talk(&c->g, genl_req(&c->g, ESA_CMD_JOB_GET, NLM_F_DUMP),
			 job_list_cb, l);
}

int module_job_list(struct ctx *c, const struct cmd_req *r)
{
	int err = module_jobs(c, r->jobs);

	return err ? fail(c, r->what, err) : EXIT_OK;
}

/* @l with the change @cmd, @a would make (members only). */
static void job_list_apply(struct job_list *l, uint8_t cmd,
			   const struct job_args *a)
{
	struct esa_job_info *j = NULL;
	unsigned int k;
	int i;

	for (k = 0; k < l->n && l->j[k].job_id != a->id; k++)
		;
	if (cmd == ESA_CMD_JOB_DEL) {
		if (k < l->n)
			l->j[k] = l->j[--l->n];
		return;
	}
	if (k < l->n) {
		j = &l->j[k];
	} else if (l->n < ESA_MAX_JOB_ID) {
		j = &l->j[l->n++];
		memset(j, 0, sizeof(*j));
		j->job_id = a->id;
	}
	if (!j)
		return;
	if (a->has_ps) {
		j->ps_addr = a->ps_addr;
		j->ps_ifindex = a->ps_ifindex;
	}
	if (a->nworkers) {
		j->fan_in = a->nworkers < ESA_MAX_WORKERS ? a->nworkers :
			    ESA_MAX_WORKERS;
		for (i = 0; i < j->fan_in; i++) {
			j->worker_addr[i] = a->waddr[i];
			j->worker_ifindex[i] = a->wifindex[i];
		}
	}
}

/*
 * The members' port bindings in the pinned data plane follow the module's
 * jobs (the module-less commit does this itself). With @a, only check that
 * the change @cmd, @a would leave no address bound to two ports.
 */
int module_bind_jobs(struct ctx *c, const char *what, uint8_t cmd,
		     const struct job_args *a)
{
	struct esa_switch *sw = pinned_switch(c);
	struct esa_rules_err e = {};
	struct job_list *l;
	int err;

	if (!sw)
		return EXIT_OK;		/* bound when a data plane is attached */
	l = calloc(1, sizeof(*l));
	if (!l)
		return fail(c, what, -ENOMEM);
	err = module_jobs(c, l);
	if (!err && a) {
		job_list_apply(l, cmd, a);
		err = esa_switch_bind_check(l->j, l->n, &e);
	} else if (!err) {
		err = esa_switch_bind_jobs(sw, l->j, l->n, &e);
	}
	free(l);
	if (!err)
		return EXIT_OK;
	fprintf(stderr, "aggctl: %s: %s%s%s\n", what, strerror(-err),
		e.msg ? ": " : "", e.msg ? e.msg : "");
	return EXIT_FAIL;
}

/* @data: the struct ctx. */
int print_job_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};

	genl_parse(nlh, tb);
	out_open_object(NULL);
	print_job(data, tb);
	out_close_object();
	out_nl();
	return MNL_CB_OK;
}

int module_job_show(struct ctx *c, const struct cmd_req *r)
{
	const struct job_args *a = r->job;
	struct nlmsghdr *nlh;
	int err;

	if (a->has_id) {
		nlh = genl_req(&c->g, ESA_CMD_JOB_GET, 0);
		mnl_attr_put_u32(nlh, ESA_A_JOB_ID, a->id);
		err = genl_talk(&c->g, nlh, print_job_cb, c);
	} else {
		nlh = genl_req(&c->g, ESA_CMD_JOB_GET, NLM_F_DUMP);
		out_open_array(NULL);
		err = genl_talk(&c->g, nlh, print_job_cb, c);
		out_close_array();
	}
	out_finish();
	return err ? fail(c, "job show", err) : EXIT_OK;
}

/*
 * Job add, change or delete in the module's registry, the members' port
 * bindings in the pinned data plane following (module_bind_jobs()).
 */
int module_job_set(struct ctx *c, const struct cmd_req *r)
{
	struct nlmsghdr *nlh;
	int ret, err;

	ret = module_bind_jobs(c, r->what, r->cmd, r->job);
	if (ret)
		return ret;
	nlh = genl_req(&c->g, r->cmd, 0);
	if (r->cmd == ESA_CMD_JOB_DEL)
		mnl_attr_put_u32(nlh, ESA_A_JOB_ID, r->job->id);
	else
		put_job(nlh, r->job);
	err = genl_talk(&c->g, nlh, NULL, NULL);
	return err ? fail(c, r->what, err) : module_bind_jobs(c, r->what, 0, NULL);
}

/*
 * The switch sends a job's results once per port, to the worker of the
 * job behind it: two workers behind one port means one of them never gets
 * its results. Where the data plane has already learned where the workers
 * are (from their traffic), say so; the job itself was accepted.
 */
static void warn_shared_ports(struct ctx *c, const struct job_args *a,
			      const char *what)
{
	struct esa_switch *sw = pinned_switch(c);
	int fd = sw ? esa_switch_map_fd(sw, "esa_neigh") : -1;
	int lfd = sw ? esa_switch_map_fd(sw, "esa_learned") : -1;
	struct esa_neigh n[JOB_ARGS_MAX_WORKERS];
	bool known[JOB_ARGS_MAX_WORKERS] = { false };
	char port[IF_NAMESIZE], where[96];
	int i, k;

	/*
	 * Bound, else learned; an entry bound at first sight but not seen
	 * yet (port 0) says nothing
	 */
	for (i = 0; i < a->nworkers; i++)
		known[i] = ((fd >= 0 && !bpf_map_lookup_elem(fd, &a->waddr[i], &n[i])) ||
			    (lfd >= 0 && !bpf_map_lookup_elem(lfd, &a->waddr[i], &n[i]))) &&
			   n[i].ifindex;
	for (i = 0; i < a->nworkers; i++) {
		for (k = 0; k < i; k++) {
			if (a->waddr[i] == a->waddr[k])
				snprintf(where, sizeof(where), "share a host, so a switch port");
			else if (known[i] && known[k] && n[i].ifindex == n[k].ifindex)
				snprintf(where, sizeof(where),
					 "are both behind switch port %s (learned from their traffic)",
					 if_indextoname(n[i].ifindex, port) ? port : "?");
			else
				continue;
			fprintf(stderr, "aggctl: warning: %s %u: workers %s and %s %s: the switch sends one result copy per port, so one of them will not get its results; give each worker of a job its own port\n",
				what, a->id, fmt_addr_port(a->waddr[k], a->wport[k]),
				fmt_addr_port(a->waddr[i], a->wport[i]), where);
			return;
		}
	}
}

int do_job(struct ctx *c, int argc, char **argv)
{
	static const struct { const char *name; uint8_t cmd; bool add; } cmds[] = {
		{ "add", ESA_CMD_JOB_ADD, true },
		{ "change", ESA_CMD_JOB_CHANGE, false },
		{ "delete", ESA_CMD_JOB_DEL, false },
	};
	struct cmd_req r = {};
	struct job_args a;
	char what[32];
	unsigned int i;
	int ret;

	if (argc < 1 || matches(*argv, "help"))
		return job_usage(argc < 1 ? stderr : stdout);
	if (matches(*argv, "show") || matches(*argv, "list")) {
		/* "show [id ID]": parse the optional id alone */
		memset(&a, 0, sizeof(a));
		argc--;
		argv++;
		while (argc > 0) {
			if (strcmp(*argv, "id"))
				return usage_unknown("job", *argv);
			NEXT_ARG();
			ret = arg_job_id(*argv, &a.id);
			if (ret)
				return ret;
			a.has_id = true;
			argc--;
			argv++;
		}
		r.what = "job show";
		r.job = &a;
		return run_cmd(c, CMD_JOB_SHOW, &r);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!matches(*argv, cmds[i].name) &&
		    !(cmds[i].cmd == ESA_CMD_JOB_DEL && !strcmp(*argv, "del")))
			continue;
		ret = job_args_parse(argc - 1, argv + 1, &a, cmds[i].add);
		if (ret)
			return ret;
		if (cmds[i].cmd == ESA_CMD_JOB_DEL &&
		    (a.has_ps || a.nworkers || a.has_fan_in || a.has_quota ||
		     a.has_token || a.prio != JOB_PRIO_NONE)) {
			fprintf(stderr, "aggctl: job delete takes only \"id ID\"\n");
			return EXIT_USAGE;
		}
		snprintf(what, sizeof(what), "job %s", cmds[i].name);
		r.what = what;
		r.cmd = cmds[i].cmd;
		r.job = &a;
		ret = run_cmd(c, CMD_JOB_SET, &r);
		if (!ret)
			neigh_sync(c, what, NULL, 0);
		if (!ret)
			warn_shared_ports(c, &a, what);
		if (!ret && a.token_random)
			print_new_token(&a);
		return ret;
	}
	return usage_unknown("job", *argv);
}
