// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl monitor: print the esa events group until interrupted. One line
 * (text) or one JSON object per line (-j) per event, flushed at once so a
 * pipe sees each event when it happens.
 */
#include <stdio.h>
#include <string.h>
#include <linux/genetlink.h>
#include "aggctl.h"
#include "esa_genl.h"
#include "output.h"

static const char *event_name(uint8_t cmd)
{
	switch (cmd) {
	case ESA_CMD_JOB_ADDED_NTF:
		return "job-added";
	case ESA_CMD_JOB_REMOVED_NTF:
		return "job-removed";
	case ESA_CMD_JOB_PREEMPTED_NTF:
		return "job-preempted";
	case ESA_CMD_JOB_COMPLETED_NTF:
		return "job-completed";
	case ESA_CMD_JOB_CHANGED_NTF:
		return "job-changed";
	case ESA_CMD_POLICY_NTF:
		return "config";
	case ESA_CMD_JOB_SPOOFED_NTF:
		return "job-spoofed";
	}
	return NULL;
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ESA_A_MAX + 1] = {};
	const char *name = event_name(gh->cmd);

	if (!name)
		return MNL_CB_OK;	/* a newer module's event */
	genl_parse(nlh, tb);
	out_open_object(NULL);
	out_str("event", "", name);
	if (gh->cmd == ESA_CMD_POLICY_NTF) {
		print_config(tb);
	} else {
		print_job(data, tb);
		print_attr_u32(tb, ESA_A_EVENT_COUNT, "count", NULL);
	}
	out_close_object();
	out_finish();
	return MNL_CB_OK;
}

int module_monitor(struct ctx *c, const struct cmd_req *r)
{
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = genl_listen(&c->g, event_cb, c);
	return err ? fail(c, r->what, err) : EXIT_OK;
}

int do_monitor(struct ctx *c, int argc, char **argv)
{
	if (argc > 0 && matches(*argv, "help")) {
		puts("usage: aggctl monitor");
		return EXIT_OK;
	}
	if (argc > 0)
		return usage_unknown("monitor", *argv);
	return run_cmd(c, CMD_MONITOR, &(struct cmd_req){ .what = "monitor" });
}
