// SPDX-License-Identifier: GPL-2.0
/*
 * esa: arbitration of in-network aggregation for the ESA XDP data plane.
 *
 * Load order: state, kfuncs (a load that cannot expose them fails), the
 * netlink family, then the periodic work. Unload reverses it. The kernel
 * keeps a module reference for every loaded BPF program that calls the
 * kfuncs, so unload cannot start while one is attached: detach first
 * (aggctl switch detach).
 */
#include <linux/module.h>
#include <net/genetlink.h>

#include "esa_kmod.h"

static int __init esa_init(void)
{
	int err;

	err = esa_jobs_init();
	if (err)
		return err;
	err = esa_kfuncs_register();
	if (err) {
		pr_err("esa: not loaded: the kfuncs could not be registered (%d)\n",
		       err);
		goto err_jobs;
	}
	err = esa_netlink_init();
	if (err) {
		pr_err("esa: registering generic netlink family \"%s\" failed: %d\n",
		       ESA_GENL_NAME, err);
		goto err_jobs;
	}
	esa_work_start();
	pr_info("esa: loaded (policy esa, %u aggregators)\n",
		ESA_AGG_SLOTS_DEFAULT);
	return 0;

err_jobs:
	esa_jobs_exit();
	return err;
}

static void __exit esa_exit(void)
{
	/* The work sends notifications: stop it before the family goes. */
	esa_work_stop();
	esa_netlink_exit();
	esa_jobs_exit();
	pr_info("esa: unloaded\n");
}

module_init(esa_init);
module_exit(esa_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ESA in-network aggregation: job registry, preemption policies, XDP kfuncs, generic netlink");
MODULE_ALIAS_GENL_FAMILY(ESA_GENL_NAME);
MODULE_VERSION(ESA_VERSION);
