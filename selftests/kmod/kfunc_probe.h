/* SPDX-License-Identifier: GPL-2.0 */
/* Request and result of kfunc_probe.bpf.c, shared with kfunc_probe.c. */
#ifndef _KFUNC_PROBE_H
#define _KFUNC_PROBE_H

#include <linux/types.h>
#include "esa_kfuncs.h"	/* the opts; the prototypes go unused here */

enum probe_op {
	PROBE_ARBITRATE,
	PROBE_ACCOUNT,
	PROBE_LOOKUP,
	PROBE_CONFIG,
	PROBE_LOOKUP_CONFIG,
};

struct probe_req {
	__u32 op;
	__u32 job_id;
	struct esa_arb_opts arb;
	struct esa_acct_opts acct;
};

struct probe_res {
	__s32 ret;
	__u32 pad;
	struct esa_switch_config cfg;
	struct esa_job_info info;
};

#endif
