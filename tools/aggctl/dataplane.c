// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl: the life of the pinned data plane, loaded by switch attach and
 * unloaded by switch attach's rollback and switch unload.
 *
 * The flavour follows the module: with esa loaded the program calls its
 * kfuncs, without it the program reads jobs and config from its own maps.
 *
 * The module counts occupancy per aggregator array, and each array lives
 * and dies with its data plane. So with the module, a data plane loaded
 * here gets a fresh generation (written into the program, passed with
 * every claim and release) that is made the module's current one before
 * loading; unloading sets it back to 0 (no data plane). Nothing is reset
 * and nothing waits: events of an array that is gone change nothing
 * (Documentation/kmod.rst, "Occupancy").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "esa_dp.h"

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
