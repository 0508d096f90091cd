// SPDX-License-Identifier: GPL-2.0
/*
 * The module flavour of the data plane (build/bpf/esa_switch_kmod.bpf.o)
 * against the real module, in the VM: config, jobs and arbitration come
 * from the module's kfuncs. test_kmod_flavour.sh registers, through
 * aggctl, job 1 (2 workers, priority 1) and job 2 (2 workers, priority 5)
 * with the address plan of dp_util.h, sets the policy, then runs this.
 *
 * With AGGCTL, it also checks that the module accounted every event the
 * data plane counted for jobs 1 and 2 (esa_account()): each counter but
 * rx (the data plane keeps a job's rx to itself) grew in the module by
 * what the data plane counted, and the module's bytes by 256 per
 * aggregated packet of 64 values.
 *
 * With AGGCTL, last, it deletes job 1 and adds it again with aggctl: the
 * new job's sum must not take in what the old one left on the switch.
 *
 * usage: test_kmod_flavour esa|atp [AGGCTL]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * The module's counters of job @job ("module:" of `aggctl stats job N`;
 * 0: the switch-wide ones, the first record of `aggctl stats`) into @cnt,
 * its bytes into cnt[__ESA_CNT_MAX]; -1 when not read.
 */
static int module_counters(const char *aggctl, __u32 job, __u64 *cnt)
{
	char cmd[4200], line[4096], *tok, *name = NULL;
	int in_module = 0, found = 0;
	unsigned int i;
	FILE *f;

	memset(cnt, 0, (__ESA_CNT_MAX + 1) * sizeof(*cnt));
	if (job)
		snprintf(cmd, sizeof(cmd), "%s stats job %u", aggctl, job);
	else
		snprintf(cmd, sizeof(cmd), "%s stats", aggctl);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		pclose(f);
		return -1;
	}
	pclose(f);
	for (tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
		if (!strcmp(tok, "module:") || !strcmp(tok, "dataplane:")) {
			in_module = !strcmp(tok, "module:");
			found |= in_module;
			name = NULL;
		} else if (in_module && !name) {
			name = tok;
		} else if (in_module) {
			for (i = 0; i < __ESA_CNT_MAX; i++)
				if (!strcmp(name, esa_counter_name(i)))
					cnt[i] = strtoull(tok, NULL, 0);
			if (!strcmp(name, "bytes"))
				cnt[__ESA_CNT_MAX] = strtoull(tok, NULL, 0);
			name = NULL;
		}
	}
	return found ? 0 : -1;
}

/*
 * Whether the module's counters of @job grew from @before by what the
 * data plane counted; the differences on stderr.
 */
static int module_accounted(const char *aggctl, __u32 job, const __u64 *before)
{
	__u64 now[__ESA_CNT_MAX + 1], dp, bytes;
	unsigned int c;
	int ok = 1;

	if (module_counters(aggctl, job, now)) {
		ksft_print_msg("job %u: aggctl stats gave no module counters\n", job);
		return 0;
	}
	for (c = 0; c < __ESA_CNT_MAX; c++) {
		if (c == ESA_CNT_RX)
			continue;
		dp = dp_cnt(sw, job, c);
		if (now[c] - before[c] != dp) {
			ksft_print_msg("job %u %s: module +%llu, data plane %llu\n",
				       job, esa_counter_name(c),
				       (unsigned long long)(now[c] - before[c]),
				       (unsigned long long)dp);
			ok = 0;
		}
	}
	bytes = now[__ESA_CNT_MAX] - before[__ESA_CNT_MAX];
	if (bytes != 256 * dp_cnt(sw, job, ESA_CNT_AGGREGATED)) {
		ksft_print_msg("job %u: module bytes +%llu for %llu aggregated\n",
			       job, (unsigned long long)bytes,
			       (unsigned long long)dp_cnt(sw, job, ESA_CNT_AGGREGATED));
		ok = 0;
	}
	return ok;
}

/* ADDR:PORT of a job member as aggctl takes it. */
static const char *member(char *buf, __u32 addr, __u16 port)
{
	sprintf(buf, "%u.%u.%u.%u:%u", addr >> 24, (addr >> 16) & 255,
		(addr >> 8) & 255, addr & 255, port);
	return buf;
}

/*
 * Job 1 deleted and added again (2 workers, priority 1) through aggctl;
 * 0 on success.
 */
static int readd_job1(const char *aggctl)
{
	char cmd[512], ps[32], w0[32], w1[32];

	snprintf(cmd, sizeof(cmd),
		 "%s job del id 1 && %s job add id 1 ps %s worker %s worker %s priority 1",
		 aggctl, aggctl, member(ps, DP_PS_ADDR(1), ESA_UDP_PORT),
		 member(w0, DP_WORKER_ADDR(1, 0), DP_WORKER_PORT(1, 0)),
		 member(w1, DP_WORKER_ADDR(1, 1), DP_WORKER_PORT(1, 1)));
	return system(cmd);
}

/*
 * A job added again under its id while its predecessor's partial sits on
 * slot 6: the new job's workers sum from nothing (no duplicate, no old
 * values in the COMPLETE). 1 if so.
 */
static int reused_id_starts_afresh(const char *aggctl, const __s32 *a,
				   const __s32 *b)
{
	__u64 dups = dp_cnt(sw, 1, ESA_CNT_DUPLICATES);
	struct dp_out r;
	int i, v;

	if (send(1, 0, 9, 6, a, 1) != XDP_DROP || readd_job1(aggctl)) {
		ksft_print_msg("partial of job 1 or aggctl job del/add failed\n");
		return 0;
	}
	v = send(1, 0, 9, 6, b, 1);
	if (v != XDP_DROP) {
		ksft_print_msg("the new worker 0's packet: verdict %d\n", v);
		return 0;
	}
	v = send(1, 1, 9, 6, b, 1);
	if ((v != XDP_REDIRECT && v != XDP_TX) ||
	    dp_parse(out.buf, out.len, &r) || !(r.h.flags & ESA_F_COMPLETE)) {
		ksft_print_msg("no COMPLETE (verdict %d)\n", v);
		return 0;
	}
	for (i = 0; i < 64; i++)
		if (r.values[i] != 2 * b[i]) {
			ksft_print_msg("value %d: %d, not %d\n", i, r.values[i],
				       2 * b[i]);
			return 0;
		}
	return dp_cnt(sw, 1, ESA_CNT_DUPLICATES) == dups;
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_KMOD,
				     .agg_capacity = 64 };
	__u64 before[3][__ESA_CNT_MAX + 1], now[__ESA_CNT_MAX + 1];
	const char *aggctl = argc > 2 ? argv[2] : NULL;
	__s32 a[64], b[64];
	struct dp_out r;
	struct esa_agg ag;
	int esa, i, v, err, sums = 1;

	if (argc < 2 || argc > 3 ||
	    (strcmp(argv[1], "esa") && strcmp(argv[1], "atp"))) {
		ksft_print_header();
		ksft_set_plan(1);
		ksft_test_result_fail("usage: test_kmod_flavour esa|atp [AGGCTL]\n");
		return 2;
	}
	esa = !strcmp(argv[1], "esa");
	ksft_print_header();
	ksft_set_plan(aggctl ? 8 : 5);
	if (aggctl && (module_counters(aggctl, 0, before[0]) ||
		       module_counters(aggctl, 1, before[1]) ||
		       module_counters(aggctl, 2, before[2]))) {
		ksft_test_result_fail("%s stats job 1 and 2: no module counters\n",
				      aggctl);
		return ksft_exit_fail();
	}
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
	if (aggctl) {
		int ok1 = module_accounted(aggctl, 1, before[1]);
		int ok2 = module_accounted(aggctl, 2, before[2]);

		ksft_test_result(ok1 && ok2,
				 "the module accounted every event the data plane counted\n");
		ksft_test_result(!module_counters(aggctl, 0, now) &&
				 now[ESA_CNT_DROP_UNKNOWN_JOB] -
				 before[0][ESA_CNT_DROP_UNKNOWN_JOB] == 1,
				 "the module counted the unknown job's drop switch-wide\n");
		ksft_test_result(reused_id_starts_afresh(aggctl, a, b),
				 "job 1 added again sums from nothing (incarnation)\n");
	}
	esa_switch_close(sw);
	ksft_finished();
}
