// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl config save: the running switch as aggctl commands, one per line,
 * which `aggctl -batch FILE` applies again (aggctl.8, "CONFIGURATION
 * FILE"; esa-switch.service applies /etc/esa/switch.conf at boot).
 *
 * The switch is read from where the running backend keeps it (the esa
 * module over generic netlink, or the module-less data plane's pinned
 * maps) into one description, which is then written in one way for both:
 *
 *   switch attach dev IF... [mode M] [capacity N]   the ports, per XDP mode
 *   switch attach dev IF mode M role one-armed address A   each one-armed port
 *   switch set slots N timeout US [aging MS]        aging: module only
 *   policy set NAME
 *   job add id ID ps ADDR:PORT [dev IF] worker ADDR:PORT [dev IF]...
 *           [fan-in N] priority { P | auto } quota N [token HEX16]
 *
 * in the order that a switch built from nothing accepts them: the data
 * plane first (without the module the settings and jobs live in its maps),
 * then the settings a job is judged against, then the jobs. What is
 * learned from traffic (hosts behind ports, occupancy, counters, the
 * data plane's generation) is state, not configuration, and is not saved.
 * A job's token is configuration and a secret: the file written holds it,
 * so config save makes its output, when that is a file, readable by its
 * owner only (mode 0600).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_dp.h"
#include "names.h"
#include "port.h"

struct saved_port {
	char name[IF_NAMESIZE];
	__u8 xdp_mode;			/* XDP_ATTACHED_* */
	struct esa_port_role role;
};

struct saved_job {
	struct esa_job_info j;		/* j.fan_in: the workers listed */
	unsigned int fan_in;		/* as the switch has it */
	bool has_token;			/* the module said so; j.token: its value */
};

/* What config save writes, from either backend. */
struct saved_switch {
	bool dataplane;
	uint32_t capacity;
	struct saved_port ports[ESA_MAX_PORTS];
	unsigned int nports;
	uint32_t policy, slots, timeout_us, aging_ms;
	bool has_aging;			/* the module's; none without it */
	struct saved_job jobs[ESA_MAX_JOB_ID];
	unsigned int njobs;
};

static int config_usage(FILE *f)
{
	fputs("usage: aggctl config save [file FILE]\n"
	      "  writes the running switch as aggctl commands (aggctl -batch FILE),\n"
	      "  to FILE or standard output; a file is made mode 0600 (job tokens)\n",
	      f);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

/* The ports in the data plane's devmap (esa_mcast), with their XDP mode. */
static int read_ports(struct esa_switch *sw, struct saved_switch *s)
{
	int fd = esa_switch_map_fd(sw, "esa_mcast");
	__u32 key, next, *prev = NULL;
	struct link_info l;
	int err;

	if (fd < 0)
		return fd;
	while (s->nports < ESA_MAX_PORTS &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		err = link_get((int)key, &l);
		if (err) {
			fprintf(stderr, "aggctl: config save: port ifindex %u: %s (a port of the data plane is gone; detach it or restore it first)\n",
				key, strerror(-err));
			return err;
		}
		memcpy(s->ports[s->nports].name, l.name, IF_NAMESIZE);
		s->ports[s->nports].xdp_mode = l.xdp_mode;
		err = esa_switch_port_role(sw, (int)key, &s->ports[s->nports].role);
		if (err) {
			fprintf(stderr, "aggctl: config save: port %s: its role: %s\n",
				l.name, strerror(-err));
			return err;
		}
		s->nports++;
	}
	return 0;
}

static int module_config_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	struct saved_switch *s = data;

	genl_parse(nlh, tb);
	if (tb[ESA_A_POLICY])
		s->policy = mnl_attr_get_u32(tb[ESA_A_POLICY]);
	if (tb[ESA_A_CFG_AGG_SLOTS])
		s->slots = mnl_attr_get_u32(tb[ESA_A_CFG_AGG_SLOTS]);
	if (tb[ESA_A_CFG_AGG_TIMEOUT_US])
		s->timeout_us = mnl_attr_get_u32(tb[ESA_A_CFG_AGG_TIMEOUT_US]);
	if (tb[ESA_A_CFG_AGING_MS]) {
		s->aging_ms = mnl_attr_get_u32(tb[ESA_A_CFG_AGING_MS]);
		s->has_aging = true;
	}
	return MNL_CB_OK;
}

static int module_job_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	struct saved_switch *s = data;
	struct saved_job *sj;

	genl_parse(nlh, tb);
	if (!tb[ESA_A_JOB_ID] || s->njobs == ESA_MAX_JOB_ID)
		return MNL_CB_OK;
	sj = &s->jobs[s->njobs++];
	job_members_of(tb, &sj->j);
	sj->j.job_id = mnl_attr_get_u32(tb[ESA_A_JOB_ID]);
	sj->fan_in = tb[ESA_A_JOB_FAN_IN] ?
		     mnl_attr_get_u8(tb[ESA_A_JOB_FAN_IN]) : sj->j.fan_in;
	sj->j.prio_mode = tb[ESA_A_JOB_PRIO_MODE] ?
			  mnl_attr_get_u8(tb[ESA_A_JOB_PRIO_MODE]) :
			  ESA_PRIO_DYNAMIC;
	if (tb[ESA_A_JOB_PRIORITY])
		sj->j.priority = mnl_attr_get_u8(tb[ESA_A_JOB_PRIORITY]);
	if (tb[ESA_A_JOB_QUOTA])
		sj->j.quota = mnl_attr_get_u32(tb[ESA_A_JOB_QUOTA]);
	sj->has_token = tb[ESA_A_JOB_HAS_TOKEN] &&
			mnl_attr_get_u8(tb[ESA_A_JOB_HAS_TOKEN]);
	return MNL_CB_OK;
}

static int module_token_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	struct saved_job *sj = data;

	genl_parse(nlh, tb);
	if (tb[ESA_A_JOB_TOKEN])
		sj->j.token = mnl_attr_get_u64(tb[ESA_A_JOB_TOKEN]);
	return MNL_CB_OK;
}

/* The tokens of the jobs that have one (job records never carry them). */
static int module_tokens(struct ctx *c, struct saved_switch *s)
{
	struct nlmsghdr *nlh;
	unsigned int i;
	int err;

	for (i = 0; i < s->njobs; i++) {
		if (!s->jobs[i].has_token)
			continue;
		nlh = genl_req(&c->g, ESA_CMD_JOB_TOKEN_GET, 0);
		mnl_attr_put_u32(nlh, ESA_A_JOB_ID, s->jobs[i].j.job_id);
		err = genl_talk(&c->g, nlh, module_token_cb, &s->jobs[i]);
		if (err)
			return err;
		if (!s->jobs[i].j.token) {
			fprintf(stderr, "aggctl: config save: job %u: the module has a token for it but did not give it\n",
				s->jobs[i].j.job_id);
			return -EPROTO;
		}
	}
	return 0;
}

/* Settings, policy and jobs from the esa module. */
static int read_module(struct ctx *c, struct saved_switch *s)
{
	int err;

	err = genl_talk(&c->g, genl_req(&c->g, ESA_CMD_CONFIG_GET, 0),
			module_config_cb, s);
	if (!err)
		err = genl_talk(&c->g, genl_req(&c->g, ESA_CMD_POLICY_GET, 0),
				module_config_cb, s);
	if (!err)
		err = genl_talk(&c->g, genl_req(&c->g, ESA_CMD_JOB_GET,
						NLM_F_DUMP), module_job_cb, s);
	if (!err)
		err = module_tokens(c, s);
	return err ? fail(c, "config save", err) : EXIT_OK;
}

/* Settings, policy and jobs from the module-less data plane's maps. */
static int read_maps(struct ctx *c, struct esa_switch *sw,
		     struct saved_switch *s)
{
	struct esa_switch_config cfg;
	struct saved_job *sj;
	uint32_t id;
	int err;

	err = esa_switch_get_config(sw, &cfg);
	if (err) {
		fprintf(stderr, "aggctl: config save: the data plane's config: %s\n",
			strerror(-err));
		return EXIT_FAIL;
	}
	s->policy = cfg.policy;
	s->slots = cfg.agg_slots;
	s->timeout_us = cfg.agg_timeout_us;
	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		sj = &s->jobs[s->njobs];
		if (esa_switch_job_get(sw, id, &sj->j))
			continue;
		sj->fan_in = sj->j.fan_in;
		s->njobs++;
	}
	return EXIT_OK;
}

/* " dev IF" for a member bound to a port; nothing for first sight. */
static void put_dev(FILE *f, __u32 ifindex)
{
	char name[IF_NAMESIZE];

	if (!ifindex)
		return;
	if (if_indextoname(ifindex, name))
		fprintf(f, " dev %s", name);
	else
		fprintf(f, " dev %u", ifindex);
}

static void write_job(FILE *f, const struct saved_job *sj)
{
	const struct esa_job_info *j = &sj->j;
	int i;

	fprintf(f, "job add id %u ps %s", j->job_id,
		fmt_addr_port(j->ps_addr, j->ps_port));
	put_dev(f, j->ps_ifindex);
	for (i = 0; i < j->fan_in && i < ESA_MAX_WORKERS; i++) {
		fprintf(f, " worker %s",
			fmt_addr_port(j->worker_addr[i], j->worker_port[i]));
		put_dev(f, j->worker_ifindex[i]);
	}
	/* job add's fan-in defaults to the workers listed */
	if (sj->fan_in != j->fan_in)
		fprintf(f, " fan-in %u", sj->fan_in);
	if (j->prio_mode == ESA_PRIO_FIXED)
		fprintf(f, " priority %u", j->priority);
	else
		fprintf(f, " priority auto");
	fprintf(f, " quota %u", j->quota);
	if (j->token)
		fprintf(f, " token %016llx", (unsigned long long)j->token);
	fputc('\n', f);
}

/*
 * One attach line per XDP mode for the per-host ports, then one per
 * one-armed port (each has its own address); the first loads, with the
 * capacity.
 */
static void write_ports(FILE *f, const struct saved_switch *s)
{
	static const __u8 modes[] = { XDP_ATTACHED_DRV, XDP_ATTACHED_SKB };
	const struct saved_port *p;
	char a[INET_ADDRSTRLEN];
	bool first = true;
	unsigned int m, i, n;

	for (m = 0; m < sizeof(modes); m++) {
		n = 0;
		for (i = 0; i < s->nports; i++) {
			p = &s->ports[i];
			if (p->xdp_mode != modes[m] ||
			    p->role.role == ESA_PORT_ONE_ARMED)
				continue;
			fprintf(f, "%s dev %s", n ? "" : "switch attach", p->name);
			n++;
		}
		if (!n)
			continue;
		fprintf(f, " mode %s", xdp_mode_name(modes[m]));
		if (first)
			fprintf(f, " capacity %u", s->capacity);
		fputc('\n', f);
		first = false;
	}
	for (i = 0; i < s->nports; i++) {
		p = &s->ports[i];
		if (p->role.role != ESA_PORT_ONE_ARMED)
			continue;
		fprintf(f, "switch attach dev %s mode %s role one-armed address %s",
			p->name, xdp_mode_name(p->xdp_mode),
			inet_ntop(AF_INET, &p->role.addr, a, sizeof(a)));
		if (first)
			fprintf(f, " capacity %u", s->capacity);
		fputc('\n', f);
		first = false;
	}
}

static void write_switch(FILE *f, const struct saved_switch *s, bool module)
{
	unsigned int i;

	fprintf(f, "# The ESA switch, saved by aggctl config save from %s.\n"
		   "# Apply with: aggctl -batch FILE (aggctl(8), CONFIGURATION FILE).\n",
		module ? "the esa module" : "the module-less data plane");
	write_ports(f, s);
	fprintf(f, "switch set slots %u timeout %u", s->slots, s->timeout_us);
	if (s->has_aging)
		fprintf(f, " aging %u", s->aging_ms);
	fprintf(f, "\npolicy set %s\n", policy_name(s->policy));
	for (i = 0; i < s->njobs; i++)
		write_job(f, &s->jobs[i]);
}

/*
 * Ports whose program is not this data plane's (another XDP program, or
 * none) cannot be written as an attach: say which rather than save a
 * switch that would come back different.
 */
static int check_ports(const struct saved_switch *s)
{
	unsigned int i;
	int bad = 0;

	for (i = 0; i < s->nports; i++) {
		if (s->ports[i].xdp_mode == XDP_ATTACHED_DRV ||
		    s->ports[i].xdp_mode == XDP_ATTACHED_SKB)
			continue;
		fprintf(stderr, "aggctl: config save: port %s is in the data plane but its XDP program is %s (aggctl switch show says why)\n",
			s->ports[i].name, xdp_mode_name(s->ports[i].xdp_mode));
		bad = 1;
	}
	return bad ? EXIT_FAIL : EXIT_OK;
}

/*
 * Where config save writes: FILE (created, or truncated, mode 0600), or
 * standard output, made mode 0600 if it is a regular file (a shell's
 * redirection creates it with the umask's mode). NULL after a message.
 */
static FILE *save_output(const char *path)
{
	struct stat st;
	FILE *f;
	int fd;

	if (!path) {
		if (!fstat(STDOUT_FILENO, &st) && S_ISREG(st.st_mode) &&
		    fchmod(STDOUT_FILENO, 0600)) {
			perror("aggctl: config save: chmod 0600 of the output");
			return NULL;
		}
		return stdout;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		fprintf(stderr, "aggctl: config save: file %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "aggctl: config save: file %s: %s\n", path,
			strerror(errno));
		close(fd);
	}
	return f;
}

static int config_save(struct ctx *c, const char *path)
{
	struct esa_switch *sw = pinned_switch(c);
	struct saved_switch *s;
	FILE *out;
	int ret;

	if (!sw && !have_module(c))
		return no_module(c, "config save");
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(c, "config save", -ENOMEM);
	if (sw) {
		s->dataplane = true;
		s->capacity = esa_switch_agg_capacity(sw);
		ret = read_ports(sw, s) ? EXIT_FAIL : check_ports(s);
		if (!ret && !s->nports) {
			fprintf(stderr, "aggctl: config save: the data plane under %s has no port (attach one, or unload it: aggctl switch unload)\n",
				c->pin_dir);
			ret = EXIT_FAIL;
		}
	} else {
		ret = EXIT_OK;
	}
	if (!ret)
		ret = have_module(c) ? read_module(c, s) : read_maps(c, sw, s);
	out = ret ? NULL : save_output(path);
	if (!ret && !out)
		ret = EXIT_FAIL;
	if (!ret)
		write_switch(out, s, have_module(c));
	free(s);
	if (!ret && (fflush(out) || ferror(out))) {
		perror("aggctl: config save: writing");
		ret = EXIT_FAIL;
	}
	if (out && out != stdout && fclose(out) && !ret) {
		perror("aggctl: config save: writing");
		ret = EXIT_FAIL;
	}
	return ret;
}

int do_config(struct ctx *c, int argc, char **argv)
{
	if (argc < 1)
		return config_usage(stderr);
	if (matches(*argv, "help"))
		return config_usage(stdout);
	if (matches(*argv, "save")) {
		if (argc == 3 && !strcmp(argv[1], "file"))
			return config_save(c, argv[2]);
		if (argc == 2 && !strcmp(argv[1], "file"))
			return usage_missing("file");
		if (argc > 1)
			return usage_unknown("config", argv[1]);
		return config_save(c, NULL);
	}
	return usage_unknown("config", *argv);
}
