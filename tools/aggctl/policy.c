// SPDX-License-Identifier: GPL-2.0
/* aggctl policy { show | set NAME }. */
#include <stdio.h>
#include <string.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_switch.h"
#include "names.h"
#include "output.h"

static int policy_usage(FILE *f)
{
	fputs("usage: aggctl policy show\n"
	      "       aggctl policy set { esa | atp | static }\n", f);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

/* Policy and switch settings, as config get and the notifications carry. */
void print_config(const struct nlattr **tb)
{
	if (tb[ESA_A_POLICY])
		out_str("policy", NULL,
			policy_name(mnl_attr_get_u32(tb[ESA_A_POLICY])));
	print_attr_u32(tb, ESA_A_CFG_AGG_SLOTS, "agg_slots", "slots");
	print_attr_u32(tb, ESA_A_CFG_AGG_TIMEOUT_US, "agg_timeout_us", "timeout-us");
	print_attr_u32(tb, ESA_A_CFG_AGING_MS, "aging_ms", "aging-ms");
	print_attr_u32(tb, ESA_A_CFG_DP_GENERATION, "dp_generation", "dp-generation");
}

static int policy_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ESA_A_MAX + 1] = {};

	genl_parse(nlh, tb);
	out_open_object(NULL);
	if (tb[ESA_A_POLICY])
		out_str("policy", NULL,
			policy_name(mnl_attr_get_u32(tb[ESA_A_POLICY])));
	out_close_object();
	return MNL_CB_OK;
}

int module_policy_show(struct ctx *c, const struct cmd_req *r)
{
	struct nlmsghdr *nlh = genl_req(&c->g, ESA_CMD_POLICY_GET, 0);
	int err = genl_talk(&c->g, nlh, policy_cb, NULL);

	out_finish();
	return err ? fail(c, r->what, err) : EXIT_OK;
}

int module_policy_set(struct ctx *c, const struct cmd_req *r)
{
	struct nlmsghdr *nlh = genl_req(&c->g, ESA_CMD_POLICY_SET, 0);
	int err;

	mnl_attr_put_u32(nlh, ESA_A_POLICY, r->policy);
	err = genl_talk(&c->g, nlh, NULL, NULL);
	return err ? fail(c, r->what, err) : EXIT_OK;
}

int do_policy(struct ctx *c, int argc, char **argv)
{
	struct cmd_req r = {};
	int p;

	if (argc < 1)
		return policy_usage(stderr);
	if (matches(*argv, "help"))
		return policy_usage(stdout);
	if (matches(*argv, "show")) {
		if (argc > 1)
			return usage_unknown("policy", argv[1]);
		r.what = "policy show";
		return run_cmd(c, CMD_POLICY_SHOW, &r);
	}
	if (matches(*argv, "set")) {
		if (argc < 2)
			return usage_missing("set");
		p = policy_parse(argv[1]);
		if (p < 0)
			return usage_bad("policy (esa, atp or static)", argv[1]);
		if (argc > 2)
			return usage_unknown("policy", argv[2]);
		r.what = "policy set";
		r.policy = p;
		return run_cmd(c, CMD_POLICY_SET, &r);
	}
	return usage_unknown("policy", *argv);
}
