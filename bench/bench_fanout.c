// SPDX-License-Identifier: GPL-2.0
/*
 * Copies per second of a one-armed port's fan-out (esa_fanout, the TC
 * program that makes one copy per worker; Documentation/dataplane.rst,
 * "One-armed ports"), on one CPU. Drives the pinned data plane's XDP
 * program with BPF_PROG_TEST_RUN in live-frame mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES): each frame, the PS's RESULT of job JOB
 * under atp to the port's address, is marked by XDP and passed up to the
 * port's stack, where esa_fanout clones it to every worker out of the
 * port. Set up by bench_fanout.sh; a figure, not a test:
 *   fanout workers=<W> frames=<n> fanout_runs=<r> copies_per_s=<c>
 *          tc_ns_per_copy=<x> cpu_ns_per_result=<y>
 * copies_per_s: the whole path on this CPU (XDP, the skb, esa_fanout,
 * the clones' transmit), by the wall clock; tc_ns_per_copy: esa_fanout's
 * own run time (BPF_ENABLE_STATS) per copy; cpu_ns_per_result: the CPU
 * time this thread spent on the whole path (CLOCK_THREAD_CPUTIME_ID: the
 * test runs execute in its system calls) per frame, i.e. per result,
 * which other load on the CPU does not inflate as it does the wall
 * clock.
 *
 * A one-armed port takes only jobs with a token: the frames carry job
 * JOB's TOKEN (16 hex digits). A run in which esa_fanout never ran (the
 * frames were dropped before it: see the job's counters) is an error, not
 * a figure.
 *
 * usage: bench_fanout PINDIR IFNAME SW_ADDR PS_ADDR JOB WORKERS FRAMES TOKEN
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "dp_util.h"

#define BATCH	64

/* esa_fanout of the data plane pinned under @dir. */
static int fanout_fd(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/esa_fanout", dir);
	return bpf_obj_get(path);
}

/* Its run count and time (kernel.bpf_stats_enabled, or BPF_ENABLE_STATS). */
static struct bpf_prog_info fanout_stats(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	bpf_obj_get_info_by_fd(fd, &info, &len);
	return info;
}

static double now_s(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const __s32 vals[64];
	struct esa_switch *sw;
	struct dp_frame f;
	struct dp_pkt p;
	struct in_addr swa, psa;
	struct xdp_md md = {};
	__u32 job, workers, frames, ifindex, done;
	struct bpf_prog_info before, after;
	int err, fan, stats;
	__u64 runs, token;
	double t0, t, c0, c;
	char *end;

	if (argc != 9 || !(ifindex = if_nametoindex(argv[2])) ||
	    !inet_aton(argv[3], &swa) || !inet_aton(argv[4], &psa) ||
	    !(token = strtoull(argv[8], &end, 16)) || *end) {
		fprintf(stderr, "usage: bench_fanout PINDIR IFNAME SW_ADDR PS_ADDR JOB WORKERS FRAMES TOKEN\n");
		return 2;
	}
	job = atoi(argv[5]);
	workers = atoi(argv[6]);
	frames = atoi(argv[7]);
	err = esa_switch_open_pinned(&sw, argv[1]);
	if (err) {
		fprintf(stderr, "bench_fanout: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	dp_pkt_result(&p, job, workers, 0, 0, vals, 64);
	p.saddr = ntohl(psa.s_addr);
	p.daddr = ntohl(swa.s_addr);
	p.token = token;
	dp_build(&f, &p);
	md.data_end = f.len;
	md.ingress_ifindex = ifindex;
	fan = fanout_fd(argv[1]);
	stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fan < 0 || stats < 0) {
		fprintf(stderr, "bench_fanout: esa_fanout's run time: %s\n", strerror(errno));
		return 1;
	}
	before = fanout_stats(fan);
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	for (done = 0; done < frames; done += BATCH) {
		/*
		 * One call per batch: a live-frame run reuses its pages, so
		 * a frame the program rewrote (its source is the switch's
		 * now) would come back rewritten within one call.
		 */
		LIBBPF_OPTS(bpf_test_run_opts, o,
			    .data_in = f.buf, .data_size_in = f.len,
			    .ctx_in = &md, .ctx_size_in = sizeof(md),
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			    .repeat = BATCH, .batch_size = BATCH);

		if (bpf_prog_test_run_opts(esa_switch_prog_fd(sw), &o)) {
			fprintf(stderr, "bench_fanout: test run: %s\n", strerror(errno));
			return 1;
		}
	}
	t = now_s(CLOCK_MONOTONIC) - t0;
	c = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	after = fanout_stats(fan);
	runs = after.run_cnt - before.run_cnt;
	if (!runs) {
		fprintf(stderr, "bench_fanout: esa_fanout never ran: the data plane dropped every frame (aggctl stats job %u says why)\n",
			job);
		return 1;
	}
	printf("fanout workers=%u frames=%u fanout_runs=%llu copies_per_s=%.0f tc_ns_per_copy=%.0f cpu_ns_per_result=%.0f\n",
	       workers, done, (unsigned long long)runs,
	       done * (double)workers / t,
	       (after.run_time_ns - before.run_time_ns) /
	       ((double)runs * workers), c * 1e9 / done);
	esa_switch_close(sw);
	return 0;
}
