// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl switch: the XDP data plane on the switch ports (through
 * the loader, tools/lib/dp) and the switch-wide settings (module or maps).
 *
 * attach loads the data plane once and pins it under the pin directory,
 * so later aggctl runs (and other tools) find it; the flavour follows the
 * module: with esa loaded the program calls its kfuncs, without it the
 * program reads jobs and config from its own maps. unload removes the
 * pins once no port uses the program; only then can the module go.
 *
 * The module counts occupancy per aggregator array, and each array lives
 * and dies with its data plane. So with the module, attach gives a data
 * plane it loads a fresh generation (written into the program, passed
 * with every claim and release) and makes it the module's current one
 * before loading; unload sets it back to 0 (no data plane). Nothing is
 * reset and nothing waits: events of an array that is gone change nothing
 * (Documentation/kmod.rst, "Occupancy").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_dp.h"
#include "names.h"
#include "output.h"
#include "port.h"

static int switch_usage(FILE *f)
{
	fputs("usage: aggctl switch show\n"
	      "       aggctl switch attach dev IF [dev IF]... [mode { native | generic }]\n"
	      "                            [role { per-host | one-armed }] [address A.B.C.D]\n"
	      "                            [capacity SLOTS]\n"
	      "       aggctl switch detach dev IF [dev IF]...\n"
	      "       aggctl switch unload\n"
	      "       aggctl switch set [slots N] [timeout US] [aging MS]\n", f);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

static int config_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};

	genl_parse(nlh, tb);
	print_config(tb);
	return MNL_CB_OK;
}

/* What a config set request carries. */
struct cfg_req {
	bool has_s, has_t, has_a;
	uint32_t slots, timeout, aging;
};

/* One ESA_CMD_CONFIG_SET: 0 or -errno (the kernel's explanation in c->g). */
static int config_set(struct ctx *c, const struct cfg_req *r)
{
	struct nlmsghdr *nlh = genl_req(&c->g, ESA_CMD_CONFIG_SET, 0);

	if (r->has_s)
		mnl_attr_put_u32(nlh, ESA_A_CFG_AGG_SLOTS, r->slots);
	if (r->has_t)
		mnl_attr_put_u32(nlh, ESA_A_CFG_AGG_TIMEOUT_US, r->timeout);
	if (r->has_a)
		mnl_attr_put_u32(nlh, ESA_A_CFG_AGING_MS, r->aging);
	return genl_talk(&c->g, nlh, NULL, NULL);
}

static int generation_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};

	genl_parse(nlh, tb);
	if (tb[ESA_A_CFG_DP_GENERATION])
		*(uint32_t *)data = mnl_attr_get_u32(tb[ESA_A_CFG_DP_GENERATION]);
	return MNL_CB_OK;
}

/* The module's current data plane generation. */
static int generation_get(struct ctx *c, uint32_t *gen)
{
	struct nlmsghdr *nlh = genl_req(&c->g, ESA_CMD_CONFIG_GET, 0);

	*gen = 0;
	return genl_talk(&c->g, nlh, generation_cb, gen);
}

/* Make @gen the module's current data plane generation (0: none). */
static int generation_set(struct ctx *c, uint32_t gen)
{
	struct nlmsghdr *nlh = genl_req(&c->g, ESA_CMD_CONFIG_SET, 0);

	mnl_attr_put_u32(nlh, ESA_A_CFG_DP_GENERATION, gen);
	return genl_talk(&c->g, nlh, NULL, NULL);
}

/* The addresses in neighbour table @map behind port @ifindex; how many. */
static int print_hosts_in(struct esa_switch *sw, const char *map, int ifindex)
{
	int fd = esa_switch_map_fd(sw, map);
	__be32 key, next, *prev = NULL;
	struct esa_neigh n;
	char a[INET_ADDRSTRLEN];
	int count = 0;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &n) || (int)n.ifindex != ifindex)
			continue;
		out_str(NULL, "", inet_ntop(AF_INET, &key, a, sizeof(a)));
		count++;
	}
	return count;
}

/* The hosts behind port @ifindex: bound there (esa_neigh), or learned. */
static void print_hosts(struct esa_switch *sw, int ifindex)
{
	int count;

	out_text("hosts");
	out_open_array("hosts");
	count = print_hosts_in(sw, "esa_neigh", ifindex);
	count += print_hosts_in(sw, "esa_learned", ifindex);
	if (!count)
		out_text("-");
	out_close_array();
}

static const char *const ready_names[] = {
	[PORT_READY] = "yes", [PORT_NOT_READY] = "no",
	[PORT_UNCHECKED] = "unchecked",
};

/* The port's role, and a one-armed port's address. */
static void print_role(struct esa_switch *sw, int ifindex)
{
	struct esa_port_role r;
	char a[INET_ADDRSTRLEN];

	if (esa_switch_port_role(sw, ifindex, &r)) {
		out_str("role", NULL, "unknown");
		return;
	}
	out_str("role", NULL, r.role == ESA_PORT_ONE_ARMED ? "one-armed" :
		"per-host");
	if (r.role == ESA_PORT_ONE_ARMED)
		out_str("address", NULL,
			inet_ntop(AF_INET, &r.addr, a, sizeof(a)));
}

/*
 * One record per port: how the program is attached, the MTU, a veth's
 * peer, the hosts learned behind it, and whether frames forwarded to it
 * can arrive (and if not, why and what to do).
 */
static void print_port(struct esa_switch *sw, int ifindex, __u32 prog_id)
{
	struct esa_port_role role;
	struct port_info p;
	enum port_ready r;
	char why[512];

	out_nl();
	out_open_object(NULL);
	if (port_probe(ifindex, &p)) {
		out_u64("ifindex", "port ifindex", ifindex);
		out_str("ready", NULL, "no");
		out_str("why", NULL, "the interface is gone");
		out_close_object();
		return;
	}
	out_str("port", NULL, p.link.name);
	p.one_armed = !esa_switch_port_role(sw, ifindex, &role) &&
		      role.role == ESA_PORT_ONE_ARMED;
	out_str("xdp", NULL, p.link.xdp_prog == prog_id ?
		xdp_mode_name(p.link.xdp_mode) : "none");
	print_role(sw, ifindex);
	out_u64("mtu", NULL, p.link.mtu);
	if (p.peer_known) {
		out_str("peer", NULL, p.peer.name);
		if (p.peer_ns[0])
			out_str("peer_netns", "netns", p.peer_ns);
		out_bool("peer_gro", "peer-gro", p.peer_gro);
		out_bool("peer_xdp", "peer-xdp", p.peer.xdp_prog != 0);
	}
	print_hosts(sw, ifindex);
	r = port_verdict(&p, prog_id, why, sizeof(why));
	out_str("ready", NULL, ready_names[r]);
	if (r != PORT_READY)
		out_str("why", NULL, why);
	out_close_object();
}

/* The ports in the data plane's devmap (esa_mcast), then one record each. */
static int print_ports(struct esa_switch *sw)
{
	int fd = esa_switch_map_fd(sw, "esa_mcast");
	__u32 key, next, *prev = NULL, prog_id = 0;
	int ifs[ESA_MAX_PORTS], n = 0, i;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char name[IF_NAMESIZE];

	while (fd >= 0 && n < ESA_MAX_PORTS &&
	       !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		ifs[n++] = (int)key;
	}
	/* Text: "ports a b"; JSON: "ports": ["a", "b"]. */
	out_text("ports");
	out_open_array("ports");
	for (i = 0; i < n; i++) {
		if (!if_indextoname(ifs[i], name))
			snprintf(name, sizeof(name), "#%d", ifs[i]);
		out_str(NULL, "", name);
	}
	out_close_array();
	if (!bpf_obj_get_info_by_fd(esa_switch_prog_fd(sw), &info, &len))
		prog_id = info.id;
	out_open_array("port_state");
	for (i = 0; i < n; i++)
		print_port(sw, ifs[i], prog_id);
	out_close_array();
	return n;
}

static int count_ports(struct esa_switch *sw)
{
	int fd = esa_switch_map_fd(sw, "esa_mcast");
	__u32 key, next, *prev = NULL;
	int n = 0;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

/* References on the module: one per loaded program calling its kfuncs. */
static int module_refs(void)
{
	FILE *f = fopen("/sys/module/esa/refcnt", "r");
	int n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static int switch_show(struct ctx *c)
{
	struct esa_switch *sw;
	struct nlmsghdr *nlh;
	int err = 0, refs;

	out_open_object(NULL);
	out_bool("module", "module", have_module(c));
	if (have_module(c)) {
		nlh = genl_req(&c->g, ESA_CMD_CONFIG_GET, 0);
		err = genl_talk(&c->g, nlh, config_cb, NULL);
		refs = module_refs();
		if (refs >= 0)
			out_u64("module_refs", "module-refs", refs);
		/* Why rmmod esa says "in use", and what to do about it. */
		if (refs > 0 && !out_is_json())
			fprintf(stderr, "aggctl: hint: %d BPF program(s) use the esa module; before rmmod esa: aggctl switch detach dev IF...; aggctl switch unload\n",
				refs);
	}
	sw = pinned_switch(c);
	if (!sw && (c->sw_err == -EACCES || c->sw_err == -EPERM)) {
		/* Not "no data plane": one may be there, unreadable. */
		out_close_object();
		out_finish();
		return no_dataplane(c, "switch show");
	}
	out_bool("dataplane", "dataplane", sw != NULL);
	if (sw) {
		out_str("flavour", NULL,
			esa_switch_has_job_maps(sw) ? "maps" : "kmod");
		if (!have_module(c))
			maps_config_print(c);
		print_ports(sw);
	}
	out_close_object();
	out_finish();
	return err ? fail(c, "switch show", err) : EXIT_OK;
}

static int sw_fail(const char *what, const char *dev, int err)
{
	fprintf(stderr, "aggctl: %s%s%s: %s\n", what, dev ? " " : "",
		dev ? dev : "", strerror(-err));
	return EXIT_FAIL;
}

struct esa_switch *switch_get_or_load(struct ctx *c, uint32_t cap)
{
	struct esa_switch_opts o = {
		.flavour = have_module(c) ? ESA_FLAVOUR_KMOD : ESA_FLAVOUR_MAPS,
		.agg_capacity = cap,
	};
	struct esa_switch_config cfg;
	struct esa_switch *sw = pinned_switch(c);
	uint32_t old_gen = 0;
	int err;

	if (sw)
		return sw;
	if (have_module(c)) {
		/* a new array, counted from its first claim on */
		o.generation = esa_switch_new_generation();
		err = generation_get(c, &old_gen);
		if (!err)
			err = generation_set(c, o.generation);
		if (err) {
			fail(c, "switch attach: the data plane's generation", err);
			return NULL;
		}
	}
	err = esa_switch_load(&sw, &o);
	if (err) {
		char msg[160];

		/* ENOMEM: the array the user sized, a smaller capacity fits */
		fprintf(stderr, "aggctl: switch attach: loading the XDP data plane: %s%s\n",
			esa_switch_load_strerror(err, &o, msg, sizeof(msg)),
			err == -ENOMEM ? " (a smaller capacity N takes less)" : "");
		if (have_module(c))
			generation_set(c, old_gen);
		return NULL;
	}
	if (!have_module(c)) {
		/* Module-less: the config map starts zeroed; give it defaults. */
		cfg = (struct esa_switch_config){
			.policy = ESA_POLICY_ESA,
			.agg_slots = cap && cap < ESA_AGG_SLOTS_DEFAULT ? cap :
				     ESA_AGG_SLOTS_DEFAULT,
			.agg_timeout_us = ESA_TIMEOUT_US_DEFAULT,
		};
		err = esa_switch_set_config(sw, &cfg);
	}
	if (!err)
		err = esa_switch_pin(sw, c->pin_dir);
	if (err) {
		sw_fail("switch attach: pinning under", c->pin_dir, err);
		esa_switch_close(sw);
		return NULL;
	}
	c->sw = sw;
	c->sw_err = 0;
	/*
	 * The module's jobs' members are bound in the new data plane too, or
	 * there is no new data plane: one pinned without its bindings would
	 * let anyone pose as the members, and a retry would find it loaded.
	 */
	if (have_module(c) && module_bind_jobs(c, "switch attach", 0, NULL)) {
		if (!switch_unload_pinned(c, "switch attach"))
			generation_set(c, old_gen);
		return NULL;
	}
	return sw;
}

int switch_unload_pinned(struct ctx *c, const char *what)
{
	int err = esa_switch_unpin(c->pin_dir);

	if (err)
		return sw_fail(what, c->pin_dir, err);
	if (c->sw) {
		esa_switch_close(c->sw);
		c->sw = NULL;
	}
	if (!have_module(c))
		return EXIT_OK;
	/* Its array is gone: no data plane is current any more. */
	err = generation_set(c, 0);
	return err ? fail(c, what, err) : EXIT_OK;
}

static int switch_unload(struct ctx *c)
{
	struct esa_switch *sw = pinned_switch(c);
	int n;

	if (!sw)
		return no_dataplane(c, "switch unload");
	n = count_ports(sw);
	if (n) {
		fprintf(stderr, "aggctl: switch unload: %d port(s) still attached; detach them first (aggctl switch show; aggctl switch detach dev IF)\n",
			n);
		return EXIT_FAIL;
	}
	return switch_unload_pinned(c, "switch unload");
}

static int switch_set(struct ctx *c, int argc, char **argv)
{
	struct esa_switch *sw;
	struct cfg_req r = {};
	int err;

	while (argc > 0) {
		if (!strcmp(*argv, "slots")) {
			NEXT_ARG();
			if (arg_u32("slots", *argv, 1, ESA_MAX_AGGREGATORS,
				    &r.slots))
				return EXIT_USAGE;
			r.has_s = true;
		} else if (!strcmp(*argv, "timeout")) {
			NEXT_ARG();
			if (arg_u32("timeout (us)", *argv, ESA_TIMEOUT_US_MIN,
				    ESA_TIMEOUT_US_MAX, &r.timeout))
				return EXIT_USAGE;
			r.has_t = true;
		} else if (!strcmp(*argv, "aging")) {
			NEXT_ARG();
			if (arg_u32("aging (ms)", *argv, ESA_AGING_MS_MIN,
				    ESA_AGING_MS_MAX, &r.aging))
				return EXIT_USAGE;
			r.has_a = true;
		} else {
			return usage_unknown("switch", *argv);
		}
		argc--;
		argv++;
	}
	if (!r.has_s && !r.has_t && !r.has_a) {
		fprintf(stderr, "aggctl: switch set: give slots, timeout or aging\n");
		return EXIT_USAGE;
	}
	/* Slots index the data plane's array: no more than it holds. */
	sw = pinned_switch(c);
	if (r.has_s && sw && r.slots > esa_switch_agg_capacity(sw)) {
		fprintf(stderr, "aggctl: switch set: slots %u above the %u aggregators of the data plane under %s (its capacity, fixed at switch attach ... capacity N)\n",
			r.slots, esa_switch_agg_capacity(sw), c->pin_dir);
		return EXIT_FAIL;
	}
	if (!have_module(c)) {
		if (r.has_a)
			return needs_module(c, "switch set",
					    "aging (of dynamic priorities)");
		return maps_config_set(c, r.has_s ? &r.slots : NULL,
				       r.has_t ? &r.timeout : NULL);
	}
	err = config_set(c, &r);
	return err ? fail(c, "switch set", err) : EXIT_OK;
}

int do_switch(struct ctx *c, int argc, char **argv)
{
	if (argc < 1)
		return switch_usage(stderr);
	if (matches(*argv, "help"))
		return switch_usage(stdout);
	if (matches(*argv, "show")) {
		if (argc > 1)
			return usage_unknown("switch", argv[1]);
		return switch_show(c);
	}
	if (matches(*argv, "attach"))
		return switch_attach(c, argc - 1, argv + 1);
	if (matches(*argv, "detach"))
		return switch_detach(c, argc - 1, argv + 1);
	if (matches(*argv, "unload")) {
		if (argc > 1)
			return usage_unknown("switch", argv[1]);
		return switch_unload(c);
	}
	if (!strcmp(*argv, "set"))
		return switch_set(c, argc - 1, argv + 1);
	return usage_unknown("switch", *argv);
}
