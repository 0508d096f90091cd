// SPDX-License-Identifier: GPL-2.0
/*
 * Data plane benchmark (`make bench-dataplane`). On one core (CPU 0), for
 * 64 and ESA_MAX_VALUES values per packet:
 *  - add_ns: the switch program's time for a packet whose values are added
 *    into a partial aggregate (workers 1..30 of a 32-worker job);
 *  - complete_ns: for the packet that completes it (worker 31: add, sum
 *    written back into the frame, COMPLETE + RESULT multicast redirect);
 *  - cloop_ns: a plain C loop doing the same saturating big-endian add of
 *    the same packet into an int32 array on the same core;
 * and, first, the L2 forwarding of a TCP frame with a complete checksum
 * and with one left to offload, which the switch completes (full_ns,
 * partial_ns; bpf/esa_csum.h).
 * Program times are BPF_PROG_TEST_RUN's own in-kernel duration (no syscall
 * or copy cost), one distinct packet per run: with repeat > 1 the same
 * frame would hit the duplicate path from its second run on. The timer
 * cost of a run, measured on an empty XDP program with the same frame, is
 * subtracted (printed as nop_ns). Each figure is the median of its runs
 * (the C loop: the best of 7 rounds), so a stray interrupt or a busy
 * neighbour on the host does not move it. Last line:
 *   dataplane values=<max> add_ns=<x> complete_ns=<y> cloop_ns=<z> ratio=<x/z>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "dp_util.h"

#define FAN_IN	32
#define NSEQ	3000
#define SLOTS	64

static __u32 run_ns(int prog, const struct dp_frame *in)
{
	static __u8 out[DP_FRAME_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = in->buf,
		    .data_size_in = in->len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog, &t)) {
		perror("BPF_PROG_TEST_RUN");
		exit(1);
	}
	return t.duration;
}

static int nop_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0,
		  .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "esa_nop", "GPL", insns, 2,
			     NULL);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static double median(__u32 *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* The same work as the switch's add, in plain C: one round. */
static double cloop_round(const __be32 *pkt, int n)
{
	static __s32 acc[ESA_MAX_VALUES];
	const long iters = 100000;
	double t0, t1;
	long k;
	int i;

	t0 = now_ns();
	for (k = 0; k < iters; k++) {
		for (i = 0; i < n; i++) {
			__s64 t = (__s64)acc[i] + (__s32)ntohl(pkt[i]);

			if (t > 0x7fffffffLL)
				t = 0x7fffffffLL;
			else if (t < -0x80000000LL)
				t = -0x80000000LL;
			acc[i] = (__s32)t;
		}
		asm volatile("" : : "r"(acc) : "memory");
	}
	t1 = now_ns();
	return (t1 - t0) / iters;
}

static double cloop(const __be32 *pkt, int n)
{
	double best = cloop_round(pkt, n), t;
	int r;

	for (r = 1; r < 7; r++) {
		t = cloop_round(pkt, n);
		if (t < best)
			best = t;
	}
	return best;
}

/*
 * L2 forwarding of a TCP frame (not for the aggregator) with a complete
 * checksum and with one left to offload (CHECKSUM_PARTIAL, which the switch
 * completes), each run on a fresh copy of the frame (repeat 1: with repeat
 * the second run would see the checksum the first one completed), minus the
 * empty program's time; medians of NSEQ runs.
 */
static void bench_forward(struct esa_switch *sw, int nop, __u32 payload)
{
	static const char *const what[] = { "full", "partial" };
	static __u32 t[2][NSEQ], tn[NSEQ];
	struct dp_frame f[2], out;
	double nopm;
	int r, k;

	dp_build_l4(&f[0], IPPROTO_TCP, payload, 5, DP_CSUM_FULL, 1);
	dp_build_l4(&f[1], IPPROTO_TCP, payload, 5, DP_CSUM_PARTIAL, 1);
	if (dp_run(sw, &f[1], &out) != XDP_REDIRECT ||
	    !dp_l4_csum_ok(out.buf, out.len)) {
		fprintf(stderr, "the partial checksum was not completed\n");
		exit(1);
	}
	for (r = 0; r < NSEQ; r++) {
		for (k = 0; k < 2; k++)
			t[k][r] = run_ns(esa_switch_prog_fd(sw), &f[k]);
		tn[r] = run_ns(nop, &f[0]);
	}
	nopm = median(tn, NSEQ);
	printf("# forward tcp payload=%u frame=%u", payload, f[0].len);
	for (k = 0; k < 2; k++)
		printf(" %s_ns=%.1f", what[k], median(t[k], NSEQ) - nopm);
	printf(" (nop_ns=%.1f)\n", nopm);
}

static void bench(struct esa_switch *sw, int nop, int n)
{
	static __u32 add_t[NSEQ * (FAN_IN - 2)], comp_t[NSEQ], nop_t[NSEQ];
	static __s32 vals[ESA_MAX_VALUES];
	double add, comp, nopm, c;
	struct dp_frame f;
	struct dp_pkt p;
	long nadd = 0, ncomp = 0;
	__u32 seq;
	int w, i;

	for (i = 0; i < n; i++)
		vals[i] = (i * 7919) % 20001 - 10000;
	for (seq = 0; seq < NSEQ; seq++) {
		for (w = 0; w < FAN_IN; w++) {
			dp_pkt_worker(&p, 1, FAN_IN, w, seq, seq % SLOTS, vals, n);
			dp_build(&f, &p);
			if (w == 0) {		/* the claim */
				run_ns(esa_switch_prog_fd(sw), &f);
				nop_t[seq] = run_ns(nop, &f);
			} else if (w < FAN_IN - 1) {
				add_t[nadd++] = run_ns(esa_switch_prog_fd(sw), &f);
			} else {
				comp_t[ncomp++] = run_ns(esa_switch_prog_fd(sw), &f);
			}
		}
	}
	if (dp_cnt(sw, 1, ESA_CNT_COMPLETED) != (__u64)NSEQ) {
		fprintf(stderr, "expected %d completions, got %llu\n", NSEQ,
			(unsigned long long)dp_cnt(sw, 1, ESA_CNT_COMPLETED));
		exit(1);
	}
	nopm = median(nop_t, NSEQ);
	add = median(add_t, nadd) - nopm;
	comp = median(comp_t, ncomp) - nopm;
	dp_build(&f, &p);
	c = cloop((const __be32 *)(f.buf + 62), n);
	printf("# values=%d nop_ns=%.1f (timer cost per run, subtracted)\n",
	       n, nopm);
	printf("dataplane values=%d add_ns=%.1f complete_ns=%.1f cloop_ns=%.1f "
	       "ratio=%.2f\n", n, add, comp, c, add / c);
}

int main(void)
{
	struct esa_switch_opts o = { .agg_capacity = SLOTS };
	struct esa_job_info job;
	struct esa_switch *sw;
	cpu_set_t set;
	int err, nop;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	err = esa_switch_load(&sw, &o);
	if (err) {
		fprintf(stderr, "load: %s\n", strerror(-err));
		return 1;
	}
	nop = nop_prog();
	if (nop < 0) {
		perror("load nop program");
		return 1;
	}
	dp_job(&job, 1, FAN_IN, 1, 0, 0);
	if (dp_reset(sw, ESA_POLICY_ESA, SLOTS, 0) ||
	    esa_switch_job_put(sw, &job)) {
		fprintf(stderr, "configure the switch\n");
		return 1;
	}
	bench_forward(sw, nop, 0);
	bench_forward(sw, nop, 1460);
	bench(sw, nop, ESA_MIN_VALUES);
	if (esa_switch_counters_reset(sw))
		return 1;
	bench(sw, nop, ESA_MAX_VALUES);
	esa_switch_close(sw);
	return 0;
}
