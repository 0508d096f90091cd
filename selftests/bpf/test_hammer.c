// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads, pinned to two CPUs, hammer one aggregator through
 * BPF_PROG_TEST_RUN: an 8-worker job, thread t sending as workers 4t..4t+3
 * for every sequence, all on slot 0, the two threads in lockstep per
 * sequence so their adds race. Whatever the interleaving, every
 * value must come out exactly once: in a COMPLETE sum, in a packet sent on
 * unaggregated (COLLISION), or in the partial left in the slot at the end.
 * A lost or doubled update under concurrency breaks the exact sums (with
 * the aggregator's lock taken out, sums come out wrong: checked by hand).
 * A frame whose lock stayed held through the data plane's bounded wait
 * is dropped as DROP_BUSY (bpf/esa_lock.h); seen in this CPU's counter,
 * it is sent again, as an endpoint would resend it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dp_util.h"
#include "kselftest.h"

#define NSEQ		20000
#define NVAL		64
#define FAN_IN		8
#define PER_THREAD	4

static struct esa_switch *sw;
static int ncpus;
/* sequences each thread has finished: a spin barrier per sequence */
static volatile int progress[2];

struct result {
	__s64 sum[NVAL];
	__u64 workers;		/* worker contributions seen in outputs */
	__u64 completes, collisions, absorbed, other;
	__u64 busy;		/* frames sent again after a DROP_BUSY */
	int err;
};

static __s32 value_of(__u32 seq, int w, int i)
{
	return (__s32)((seq * 2654435761u + w * 40503u + i * 97u) % 2000001u)
	       - 1000000;
}

/* DROP_BUSY frames so far on CPU @cpu (switch-wide), or ~0 on error. */
static __u64 busy_on(int cpu)
{
	int fd = esa_switch_map_fd(sw, "esa_stats");
	struct esa_counter_block *b = calloc(ncpus, sizeof(*b));
	__u32 k = 0;
	__u64 n = ~0ull;

	if (b && fd >= 0 && !bpf_map_lookup_elem(fd, &k, b))
		n = b[cpu].cnt[ESA_CNT_DROP_BUSY];
	free(b);
	return n;
}

static void *hammer(void *arg)
{
	long t = (long)arg;
	struct result *r = calloc(1, sizeof(*r));
	struct dp_frame in, out;
	struct dp_out o;
	struct dp_pkt p;
	__s32 v[NVAL];
	cpu_set_t set;
	__u32 seq;
	__u64 busy = 0, now;
	int k, i, verdict;

	CPU_ZERO(&set);
	CPU_SET(t, &set);
	if (!r || sched_setaffinity(0, sizeof(set), &set)) {
		if (r)
			r->err = errno;
		return r;
	}
	for (seq = 0; seq < NSEQ; seq++) {
		/*
		 * Lockstep: both threads send their workers of a sequence at
		 * the same time, so their adds race on the one aggregator.
		 */
		while (progress[!t] < (int)seq)
			sched_yield();	/* returns at once on an idle CPU */
		for (k = 0; k < PER_THREAD; k++) {
			int w = t * PER_THREAD + k;

			for (i = 0; i < NVAL; i++)
				v[i] = value_of(seq, w, i);
			dp_pkt_worker(&p, 1, FAN_IN, w, seq, 0, v, NVAL);
			dp_build(&in, &p);
			verdict = dp_run(sw, &in, &out);
			if (verdict == XDP_DROP) {
				now = busy_on(t);
				if (now == ~0ull) {
					r->err = EIO;
					return r;
				}
				if (now != busy) {	/* not taken: again */
					busy = now;
					r->busy++;
					k--;
					continue;
				}
				r->absorbed++;
				continue;
			}
			if (verdict < 0 || dp_parse(out.buf, out.len, &o)) {
				r->err = verdict < 0 ? -verdict : EPROTO;
				return r;
			}
			if (o.h.flags & ESA_F_COMPLETE)
				r->completes++;
			else if (o.h.flags & ESA_F_COLLISION)
				r->collisions++;
			else
				r->other++;
			r->workers += __builtin_popcount(o.h.worker_bitmap);
			for (i = 0; i < NVAL; i++)
				r->sum[i] += o.values[i];
		}
		__atomic_store_n(&progress[t], seq + 1, __ATOMIC_RELEASE);
	}
	return r;
}

int main(void)
{
	struct esa_switch_opts opts = { .agg_capacity = 8 };
	struct esa_job_info job;
	struct result *r[2];
	pthread_t th[2];
	__s64 expect[NVAL] = {}, got[NVAL] = {};
	__u64 workers, agg, coll, dup;
	struct esa_agg a;
	__u32 seq;
	int i, w, err, exact = 1;

	ksft_print_header();
	ksft_set_plan(4);
	ncpus = libbpf_num_possible_cpus();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		for (i = 0; i < 4; i++)
			ksft_test_result_skip("needs two CPUs\n");
		ksft_finished();
	}
	err = esa_switch_load(&sw, &opts);
	if (err || dp_reset(sw, ESA_POLICY_ESA, 8, 0)) {
		ksft_test_result_fail("load the data plane: %s\n", strerror(-err));
		return ksft_exit_fail();
	}
	dp_job(&job, 1, FAN_IN, 1, 0, 0);
	if (esa_switch_job_put(sw, &job)) {
		ksft_test_result_fail("job record\n");
		return ksft_exit_fail();
	}
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, hammer, (void *)(long)i);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], (void **)&r[i]);
	if (!r[0] || !r[1] || r[0]->err || r[1]->err) {
		ksft_test_result_fail("both threads ran (errno %d/%d)\n", r[0] ? r[0]->err : -1,
		       r[1] ? r[1]->err : -1);
		return ksft_exit_fail();
	}
	ksft_test_result_pass("two threads on CPUs 0 and 1 sent %d packets to slot 0\n",
	       2 * NSEQ * PER_THREAD);
	ksft_print_msg("completes %llu, collisions %llu, absorbed %llu, other %llu, "
		       "sent again after a busy lock %llu\n",
		 (unsigned long long)(r[0]->completes + r[1]->completes),
		 (unsigned long long)(r[0]->collisions + r[1]->collisions),
		 (unsigned long long)(r[0]->absorbed + r[1]->absorbed),
		 (unsigned long long)(r[0]->other + r[1]->other),
		 (unsigned long long)(r[0]->busy + r[1]->busy));

	for (seq = 0; seq < NSEQ; seq++)
		for (w = 0; w < FAN_IN; w++)
			for (i = 0; i < NVAL; i++)
				expect[i] += value_of(seq, w, i);
	workers = r[0]->workers + r[1]->workers;
	for (i = 0; i < NVAL; i++)
		got[i] = r[0]->sum[i] + r[1]->sum[i];
	if (!esa_switch_agg_read(sw, 0, &a) && a.state == ESA_AGG_PARTIAL) {
		workers += __builtin_popcount(a.bitmap);
		for (i = 0; i < NVAL; i++)
			got[i] += a.values[i];
	}
	for (i = 0; i < NVAL; i++)
		if (got[i] != expect[i]) {
			exact = 0;
			ksft_print_msg("value %d: expected %lld got %lld\n", i,
				 (long long)expect[i], (long long)got[i]);
		}
	ksft_test_result(exact, "every value summed exactly once (64 exact sums)\n");
	ksft_test_result(workers == 2ull * NSEQ * PER_THREAD,
	       "every worker contribution accounted once (%llu of %d)\n",
	       (unsigned long long)workers, 2 * NSEQ * PER_THREAD);
	agg = dp_cnt(sw, 1, ESA_CNT_AGGREGATED);
	coll = dp_cnt(sw, 1, ESA_CNT_COLLISIONS);
	dup = dp_cnt(sw, 1, ESA_CNT_DUPLICATES);
	ksft_test_result(agg + coll == 2ull * NSEQ * PER_THREAD && dup == 0 &&
	       dp_cnt(sw, 1, ESA_CNT_COMPLETED) ==
	       r[0]->completes + r[1]->completes &&
	       r[0]->completes + r[1]->completes == NSEQ &&
	       dp_cnt(sw, 1, ESA_CNT_DROP_BUSY) == r[0]->busy + r[1]->busy,
	       "counters add up, every sequence completed in the switch: "
	       "aggregated %llu + collisions %llu\n",
	       (unsigned long long)agg, (unsigned long long)coll);
	esa_switch_close(sw);
	ksft_finished();
}
