// SPDX-License-Identifier: GPL-2.0
/*
 * The module flavour of the data plane (build/bpf/esa_switch_kmod.bpf.o)
 * against the real module, in the VM: config, jobs and arbitration come
 * from the module's kfuncs. test_kmod_flavour.sh registers, through
 * aggctl, job 1 (2 workers, priority 1) and job 2 (2 workers, priority 5)
 * with the address plan of dp_util.h, sets the policy, then runs this.
 *
 * usage: test_kmod_flavour esa|atp
 */
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include "dp_util.h"
#include "kselftest.h"

static struct esa_switch *sw;
static struct dp_frame in, out;

static int send(__u32 job, int w, __u32 seq, __u32 idx, const __s32 *v,
		__u8 prio)
{
	struct dp_pkt p;

	dp_pkt_worker(&p, job, 2, w, seq, idx, v, 64);
	p.priority = prio;
	dp_build(&in, &p);
	return dp_run(sw, &in, &out);
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_KMOD,
				     .agg_capacity = 64 };
	__s32 a[64], b[64];
	struct dp_out r;
	struct esa_agg ag;
	int esa, i, v, err, sums = 1;

	if (argc != 2 || (strcmp(argv[1], "esa") && strcmp(argv[1], "atp"))) {
		ksft_print_header();
	ksft_set_plan(1);
		ksft_test_result_fail("usage: test_kmod_flavour esa|atp\n");
		return 2;
	}
	esa = !strcmp(argv[1], "esa");
	ksft_print_header();
	ksft_set_plan(5);
	err = esa_switch_load(&sw, &o);
	ksft_test_result(!err, "module flavour loads and verifies (%s)\n",
			 err ? strerror(-err) : "ok");
	if (err)
		return ksft_exit_fail();
	for (i = 0; i < 64; i++) {
		a[i] = i * 3 - 50;
		b[i] = 1000 - i;
	}
	v = send(1, 0, 1, 3, a, 1);
	if (v == XDP_DROP)
		v = send(1, 1, 1, 3, b, 1);
	if (v == XDP_REDIRECT || v == XDP_TX) {
		if (dp_parse(out.buf, out.len, &r) ||
		    !(r.h.flags & ESA_F_COMPLETE))
			sums = 0;
		for (i = 0; sums && i < 64; i++)
			sums = r.values[i] == a[i] + b[i];
	} else {
		sums = 0;
	}
	ksft_test_result(sums, "claim, add, COMPLETE with the exact sum (jobs from esa_job_lookup)\n");

	v = send(1, 0, 2, 4, a, 1);
	err = v == XDP_DROP && !esa_switch_agg_read(sw, 4, &ag) &&
	      ag.job_id == 1;
	v = send(2, 0, 1, 4, b, 5);
	if (esa) {
		ksft_test_result(err && v != XDP_DROP && !dp_parse(out.buf, out.len, &r) &&
		       r.h.flags == ESA_F_PREEMPTED && r.h.job_id == 1 &&
		       r.values[5] == a[5] && !esa_switch_agg_read(sw, 4, &ag) &&
		       ag.job_id == 2,
		       "esa_arbitrate lets priority 5 preempt priority 1\n");
	} else {
		ksft_test_result(err && v != XDP_DROP && !dp_parse(out.buf, out.len, &r) &&
		       r.h.flags == ESA_F_COLLISION && r.h.job_id == 2 &&
		       !esa_switch_agg_read(sw, 4, &ag) && ag.job_id == 1,
		       "esa_arbitrate says collide\n");
	}
	v = send(3, 0, 1, 5, a, 1);
	ksft_test_result(v == XDP_DROP && dp_cnt(sw, 0, ESA_CNT_DROP_UNKNOWN_JOB) == 1,
	       "a job the module does not know is dropped as unknown\n");
	ksft_test_result(dp_cnt(sw, 1, ESA_CNT_AGGREGATED) == 3 &&
	       dp_cnt(sw, 1, ESA_CNT_COMPLETED) == 1,
	       "per-job counters of the module flavour\n");
	esa_switch_close(sw);
	ksft_finished();
}
