// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl's two backends, as ethtool has its ioctl and netlink ones: a
 * command whose work differs between the esa module (its generic netlink
 * family) and a module-less data plane (its pinned maps) is one row of
 * the table below, with both implementations. The backend is picked once
 * per command line (aggctl_run(): the module when its family answers);
 * the object's do_*() parses the arguments once and hands what it parsed
 * to run_cmd() (aggctl.h), which runs the row's implementation for that
 * backend. A command the module-less switch cannot do has no maps
 * implementation, and says what it needs. The table reaches the commands'
 * files through struct ctx, so that they, which it names, do not name it.
 *
 * Not rows: the steps both backends share with a part of each inside,
 * which ask have_module() where they differ: the data plane's life
 * (dataplane.c: its flavour, the module's generation, the module-less
 * defaults), switch show's settings and config save's output.
 */
#include "aggctl.h"

const struct backend_cmd_impl backend_cmds[__CMD_MAX] = {
	[CMD_JOB_SHOW]		= { module_job_show, maps_job_show },
	[CMD_JOB_SET]		= { module_job_set, maps_job_set },
	[CMD_JOB_LIST]		= { module_job_list, maps_job_list },
	[CMD_POLICY_SHOW]	= { module_policy_show, maps_policy_show },
	[CMD_POLICY_SET]	= { module_policy_set, maps_policy_set },
	[CMD_SWITCH_SET]	= { module_switch_set, maps_switch_set },
	[CMD_STATS]		= { module_stats, maps_stats },
	[CMD_OCCUPANCY]		= { module_occupancy, maps_occupancy },
	[CMD_MONITOR]		= { module_monitor, NULL, "the event channel" },
	[CMD_CONFIG_READ]	= { module_config_read, maps_config_read },
};
