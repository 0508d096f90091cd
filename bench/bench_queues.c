// SPDX-License-Identifier: GPL-2.0
/*
 * The switch's packet rate per core over one or several receive queues of
 * a port. A benchmark that prints figures, not a test.
 *
 * The switch (module-less flavour, policy esa, one job) runs natively on
 * port SW, a veth whose peer GEN is made by the caller with as many queues
 * (bench/bench_queues.sh). One thread per CPU drives
 * bench_queues.bpf.c's esa_gen with BPF_PROG_TEST_RUN live frames: it
 * sends that CPU's share of the job's workers (worker w from CPU w % threads,
 * as a NIC's RSS spreads a job by worker 5-tuple) into GEN; veth hands each
 * frame to SW's receive queue (sending CPU mod queues), whose NAPI runs the
 * switch's program. The threads meet at a barrier after every batch so
 * that no worker runs more than a batch ahead of the others (the window of
 * aggregators is larger than that).
 *
 * Per repeat it prints the frames the switch's program ran on per second,
 * the program's own ns per frame (kernel BPF run-time statistics), the CPU
 * time of each sending thread (the generator, veth's transmit and the NAPI
 * poll that runs the switch, all in the thread when it enables softirqs
 * again; work deferred to ksoftirqd is not in it) and frames per second of
 * that CPU time; last the min/median/max of each over the repeats:
 *   queues=Q threads=T mpps=<min/med/max> prog_ns=... mpps_per_cpu=...
 *
 * usage: bench_queues [-t THREADS] [-r REPEATS] [-n FRAMES] [-w FAN_IN]
 *                     [-v VALUES] [--drop] GEN SW
 * --drop: a plain XDP_DROP on SW instead of the switch (the cost of the
 * generator and of veth alone).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dp_util.h"
#include "bench_queues.skel.h"

#define MAX_THREADS	2
#define MAX_REPEATS	50
#define MAX_CPUS	64
#define JOB		1
/* Frames per BPF_PROG_TEST_RUN call (each thread), between barriers. */
#define BATCH		4096
/* Aggregators the job cycles over: more sequences than a batch holds. */
#define WINDOW		4096

struct opts {
	int threads, repeats, fan_in, values, drop, queues;
	long frames;		/* per thread and repeat */
	int gen_ifindex, sw_ifindex;
	const char *sw_name;
};

struct thread_arg {
	int cpu, prog_fd;
	long frames;
	const struct dp_frame *frame;
	pthread_barrier_t *barrier;
	double cpu_s;		/* this thread's CPU time */
	int err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int prog_stats(int fd, __u64 *cnt, __u64 *ns)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err = bpf_obj_get_info_by_fd(fd, &info, &len);

	if (err)
		return err;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *sender(void *p)
{
	struct thread_arg *a = p;
	double cpu0 = thread_cpu_s();
	cpu_set_t set;
	long sent;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		a->err = -EINVAL;
		return NULL;
	}
	for (sent = 0; sent < a->frames; sent += BATCH) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = a->frame->buf,
			    .data_size_in = a->frame->len, .repeat = BATCH,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (!a->err && bpf_prog_test_run_opts(a->prog_fd, &t))
			a->err = -errno;
		/* Even after an error: the others wait here. */
		pthread_barrier_wait(a->barrier);
	}
	a->cpu_s = thread_cpu_s() - cpu0;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_mmm(const char *name, double *v, int n, const char *fmt)
{
	qsort(v, n, sizeof(*v), cmp_double);
	printf(" %s=", name);
	printf(fmt, v[0]);
	putchar('/');
	printf(fmt, v[n / 2]);
	putchar('/');
	printf(fmt, v[n - 1]);
}

/* Give each CPU its workers: worker w is sent from CPU w % threads. */
static int set_shares(struct bench_queues_bpf *skel, const struct opts *o)
{
	int ncpu = libbpf_num_possible_cpus(), c, err;
	struct { __u32 first, step, count, next; } *st;
	__u32 key = 0;

	if (ncpu < 0)
		return ncpu;
	st = calloc(ncpu, sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (c = 0; c < ncpu && c < o->threads; c++) {
		st[c].first = c;
		st[c].step = o->threads;
		st[c].count = (o->fan_in - c + o->threads - 1) / o->threads;
	}
	err = bpf_map__update_elem(skel->maps.gen_state, &key, sizeof(key), st,
				   ncpu * sizeof(*st), 0);
	free(st);
	return err;
}

static int load_switch(struct esa_switch **sw, const struct opts *o)
{
	struct esa_switch_opts so = { .agg_capacity = WINDOW };
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = WINDOW };
	struct esa_job_info job;
	char why[256];
	int err;

	err = esa_switch_load(sw, &so);
	if (err) {
		fprintf(stderr, "bench_queues: loading the switch: %s\n",
			esa_switch_load_strerror(err, &so, why, sizeof(why)));
		return err;
	}
	dp_job(&job, JOB, o->fan_in, 1, 0, WINDOW);
	err = esa_switch_set_config(*sw, &cfg);
	if (!err)
		err = esa_switch_job_put(*sw, &job);
	if (!err)
		err = esa_switch_attach_port(*sw, o->sw_ifindex,
					     XDP_FLAGS_DRV_MODE);
	if (err)
		fprintf(stderr, "bench_queues: switch on %s: %s\n", o->sw_name,
			strerror(-err));
	return err;
}

static int run(const struct opts *o)
{
	double mpps[MAX_REPEATS], prog_ns[MAX_REPEATS], per_cpu[MAX_REPEATS];
	struct thread_arg args[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct bench_queues_bpf *skel;
	struct esa_switch *sw = NULL;
	pthread_barrier_t barrier;
	struct dp_frame frame;
	struct dp_pkt pkt;
	__s32 vals[ESA_MAX_VALUES];
	int err, i, r, stats_fd, sw_fd;

	skel = bench_queues_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->out_ifindex = o->gen_ifindex;
	skel->rodata->job_id = JOB;
	skel->rodata->window = WINDOW;
	for (i = 0; i < o->values; i++)
		vals[i] = i;
	dp_pkt_worker(&pkt, JOB, o->fan_in, 0, 0, 0, vals, o->values);
	dp_build(&frame, &pkt);
	memcpy(skel->bss->template_hdrs, frame.buf,
	       sizeof(skel->bss->template_hdrs));
	err = bench_queues_bpf__load(skel);
	if (err) {
		fprintf(stderr, "bench_queues: loading the generator: %s\n",
			strerror(-err));
		goto out;
	}
	err = set_shares(skel, o);
	if (err)
		goto out;
	err = bpf_xdp_attach(o->gen_ifindex,
			     bpf_program__fd(skel->progs.esa_sink),
			     XDP_FLAGS_DRV_MODE, NULL);
	if (err) {
		fprintf(stderr, "bench_queues: sink on GEN: %s\n",
			strerror(-err));
		goto out;
	}
	if (o->drop) {
		sw_fd = bpf_program__fd(skel->progs.esa_sink);
		err = bpf_xdp_attach(o->sw_ifindex, sw_fd, XDP_FLAGS_DRV_MODE,
				     NULL);
	} else {
		err = load_switch(&sw, o);
		sw_fd = sw ? esa_switch_prog_fd(sw) : -1;
	}
	if (err)
		goto detach;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		err = stats_fd;
		fprintf(stderr, "bench_queues: BPF run-time statistics: %s\n",
			strerror(-err));
		goto detach;
	}
	printf("# %s: %d receive queue(s), %d sending thread(s), fan_in %d, %d values, %s\n",
	       o->sw_name, o->queues, o->threads, o->fan_in, o->values,
	       o->drop ? "XDP_DROP on the port" : "the switch on the port");
	for (r = 0; r < o->repeats && !err; r++) {
		__u64 cnt0, ns0, cnt1, ns1;
		double t_start, wall, busy = 0;

		pthread_barrier_init(&barrier, NULL, o->threads);
		err = prog_stats(sw_fd, &cnt0, &ns0);
		if (err)
			break;
		t_start = now_s();
		for (i = 0; i < o->threads; i++) {
			args[i] = (struct thread_arg){
				.cpu = i, .frames = o->frames,
				.prog_fd = bpf_program__fd(skel->progs.esa_gen),
				.frame = &frame, .barrier = &barrier };
			pthread_create(&tid[i], NULL, sender, &args[i]);
		}
		for (i = 0; i < o->threads; i++) {
			pthread_join(tid[i], NULL);
			if (args[i].err && !err)
				err = args[i].err;
		}
		wall = now_s() - t_start;
		pthread_barrier_destroy(&barrier);
		if (err) {
			fprintf(stderr, "bench_queues: BPF_PROG_TEST_RUN: %s\n",
				strerror(-err));
			break;
		}
		err = prog_stats(sw_fd, &cnt1, &ns1);
		if (err)
			break;
		printf("repeat %d: %llu frames in %.3f s", r,
		       (unsigned long long)(cnt1 - cnt0), wall);
		for (i = 0; i < o->threads; i++) {
			busy += args[i].cpu_s;
			printf(", cpu%d %.3f s", args[i].cpu, args[i].cpu_s);
		}
		putchar('\n');
		mpps[r] = (cnt1 - cnt0) / wall / 1e6;
		prog_ns[r] = cnt1 > cnt0 ? (double)(ns1 - ns0) / (cnt1 - cnt0) : 0;
		per_cpu[r] = busy > 0 ? (cnt1 - cnt0) / busy / 1e6 : 0;
	}
	if (!err) {
		__u64 cnt[__ESA_CNT_MAX];

		printf("queues=%d threads=%d", o->queues, o->threads);
		print_mmm("mpps", mpps, o->repeats, "%.3f");
		print_mmm("prog_ns", prog_ns, o->repeats, "%.0f");
		print_mmm("mpps_per_cpu", per_cpu, o->repeats, "%.3f");
		putchar('\n');
		if (sw && !esa_switch_counters(sw, 0, cnt)) {
			printf("# switch counters:");
			for (i = 0; i < __ESA_CNT_MAX; i++)
				if (cnt[i])
					printf(" %s=%llu", esa_counter_name(i),
					       (unsigned long long)cnt[i]);
			putchar('\n');
		}
	}
	close(stats_fd);
detach:
	if (sw) {
		esa_switch_detach_port(sw, o->sw_ifindex);
		esa_switch_close(sw);
	} else {
		bpf_xdp_detach(o->sw_ifindex, XDP_FLAGS_DRV_MODE, NULL);
	}
	bpf_xdp_detach(o->gen_ifindex, XDP_FLAGS_DRV_MODE, NULL);
out:
	bench_queues_bpf__destroy(skel);
	return err;
}

/* Receive queues of @dev (its rx-N entries in sysfs). */
static int rx_queues(const char *dev)
{
	char path[128];
	int n = 0;

	for (;; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d",
			 dev, n);
		if (access(path, F_OK))
			return n;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_queues [-t THREADS] [-r REPEATS] "
		"[-n FRAMES] [-w FAN_IN] [-v VALUES] [--drop] GEN SW\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "drop", no_argument, NULL, 'd' }, { NULL, 0, NULL, 0 } };
	struct opts o = { .threads = 1, .repeats = 5, .frames = 1 << 20,
			  .fan_in = 8, .values = ESA_MAX_VALUES };
	char *end;
	long v;
	int c;

	while ((c = getopt_long(argc, argv, "t:r:n:w:v:", lopts, NULL)) != -1) {
		if (c == 'd') {
			o.drop = 1;
			continue;
		}
		if (c == '?')
			return usage();
		v = strtol(optarg, &end, 10);
		if (*end || v < 1) {
			fprintf(stderr, "bench_queues: -%c: '%s' is not a "
				"positive number\n", c, optarg);
			return 2;
		}
		if ((c == 't' && v > MAX_THREADS) ||
		    (c == 'r' && v > MAX_REPEATS) ||
		    (c == 'w' && v > ESA_MAX_WORKERS) ||
		    (c == 'v' && v > ESA_MAX_VALUES)) {
			fprintf(stderr, "bench_queues: -%c %ld: out of range "
				"(threads <= %d, repeats <= %d, fan_in <= %d, "
				"values <= %d)\n", c, v, MAX_THREADS,
				MAX_REPEATS, ESA_MAX_WORKERS, ESA_MAX_VALUES);
			return 2;
		}
		switch (c) {
		case 't': o.threads = v; break;
		case 'r': o.repeats = v; break;
		case 'n': o.frames = (v + BATCH - 1) / BATCH * BATCH; break;
		case 'w': o.fan_in = v; break;
		case 'v': o.values = v; break;
		}
	}
	if (argc - optind != 2)
		return usage();
	if (o.threads > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "bench_queues: -t %d: only %ld CPUs online\n",
			o.threads, sysconf(_SC_NPROCESSORS_ONLN));
		return 2;
	}
	o.gen_ifindex = if_nametoindex(argv[optind]);
	o.sw_ifindex = if_nametoindex(argv[optind + 1]);
	o.sw_name = argv[optind + 1];
	if (!o.gen_ifindex || !o.sw_ifindex) {
		fprintf(stderr, "bench_queues: no interface %s\n",
			argv[o.gen_ifindex ? optind + 1 : optind]);
		return 2;
	}
	o.queues = rx_queues(o.sw_name);
	return run(&o) ? 1 : 0;
}
