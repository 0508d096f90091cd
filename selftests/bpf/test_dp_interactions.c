// SPDX-License-Identifier: GPL-2.0
/*
 * Where two mechanisms of the data plane meet in one step (module-less
 * flavour, BPF_PROG_TEST_RUN): eviction, gone records, saturation,
 * static slices, resends and pulls. Each row is a sequence of frames with
 * the verdict and the exact frame out of every one, then the aggregator
 * and the gone records it leaves behind and the counters it moved.
 * Once the PS has sent a frame the switch knows its port (the test's
 * one port): what goes to it then leaves by XDP_TX, before by a flood.
 * test_dataplane.c checks each mechanism alone; a mistake where two meet
 * (a flag or a worker set lost on one of the paths) passes it and fails
 * here.
 *
 * Jobs: 1 has 3 workers (priority 1), 2 has 2 (priority 5). Worker w of
 * job 1 sends every value W1[w], of job 2 W2[w]: a sum's values say
 * which workers are in it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"

#define NV	64		/* values per frame */
#define BIG	(INT_MAX - 1)	/* two of these saturate */
#define PS	(-1)		/* a step sent by the job's PS */
#define MAX_STEPS	10
#define MAX_CHECKS	6

/* Values of job 1's workers and of job 2's: each sum tells who is in it. */
static const __s32 W1[3] = { 1, 10, 100 };
static const __s32 W2[2] = { 1000, 20000 };

struct step {
	__u8	job;
	int	w;		/* worker, or PS (a RESULT; a pull with RESEND) */
	__u32	seq, idx;
	__u8	flags;
	__u8	prio;
	__s32	val;		/* 0: the worker's own value (W1/W2) */
	__u32	bitmap;		/* PS steps: the workers addressed */
	__u32	sleep_us;	/* before the frame: let a claim go stale */
	/* what must come out */
	int	verdict;
	__u8	out_flags;	/* for a frame that leaves */
	__u8	out_job;
	__u32	out_seq, out_idx, out_bitmap;
	__s32	out_val;	/* every value of the frame out */
};

struct slot_state {		/* the aggregator left behind */
	__u32	slot;
	__u8	state;
	__u32	job, seq, bitmap, gone;
	__u8	overflow;
	__s32	val;		/* values[0] of a held slot */
};

struct gone_check { __u32 job, seq, bitmap; };	/* bitmap 0: no record */
struct cnt_check { __u32 job; unsigned int c; __u64 n; };

struct row {
	__u32	policy, timeout_us;
	int	static_slices;	/* job 1 [10, 14), job 2 [14, 18) */
	struct step steps[MAX_STEPS];
	struct slot_state end;
	struct gone_check gone[MAX_CHECKS];
	struct cnt_check cnt[MAX_CHECKS];
};

static struct esa_switch *g_sw;

FIXTURE(ix) {
	struct dp_frame in, out;
	struct dp_out o;
	struct dp_pkt p;
	__s32 v[ESA_MAX_VALUES];
};

FIXTURE_VARIANT(ix) {
	const struct row *row;
};

static int put_jobs(const struct row *r)
{
	struct esa_job_info job;
	int err;

	dp_job(&job, 1, 3, 1, r->static_slices ? 10 : 0,
	       r->static_slices ? 4 : 0);
	err = esa_switch_job_put(g_sw, &job);
	dp_job(&job, 2, 2, 5, r->static_slices ? 14 : 0,
	       r->static_slices ? 4 : 0);
	return err ? err : esa_switch_job_put(g_sw, &job);
}

FIXTURE_SETUP(ix)
{
	const struct row *r = variant->row;

	ASSERT_EQ(0, dp_reset(g_sw, r->policy, DP_SLOTS, r->timeout_us));
	ASSERT_EQ(0, put_jobs(r));
}

FIXTURE_TEARDOWN(ix)
{
}

static __s32 own_value(const struct step *s)
{
	if (s->val)
		return s->val;
	if (s->w == PS)
		return 7;
	return s->job == 1 ? W1[s->w] : W2[s->w];
}

/* Build step @s's frame and run it; the verdict. */
static int run_step(FIXTURE_DATA(ix) *self, const struct step *s)
{
	__u8 fan_in = s->job == 1 ? 3 : 2;
	int i;

	for (i = 0; i < NV; i++)
		self->v[i] = own_value(s);
	if (s->w == PS) {
		dp_pkt_result(&self->p, s->job, fan_in, s->seq, s->idx,
			      self->v, NV);
		self->p.flags |= s->flags;
		if (s->bitmap)
			self->p.bitmap = s->bitmap;
	} else {
		dp_pkt_worker(&self->p, s->job, fan_in, s->w, s->seq, s->idx,
			      self->v, NV);
		self->p.flags = s->flags;
	}
	self->p.priority = s->prio;
	dp_build(&self->in, &self->p);
	if (s->sleep_us)
		usleep(s->sleep_us);
	return dp_run(g_sw, &self->in, &self->out);
}

static void check_out(struct __test_metadata *_metadata,
		      FIXTURE_DATA(ix) *self, const struct step *s, int k)
{
	int i;

	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o))
		TH_LOG("step %d: no aggregation frame out", k);
	EXPECT_EQ(s->out_flags, self->o.h.flags) TH_LOG("step %d", k);
	EXPECT_EQ(s->out_job, self->o.h.job_id) TH_LOG("step %d", k);
	EXPECT_EQ(s->out_seq, self->o.h.seq) TH_LOG("step %d", k);
	EXPECT_EQ(s->out_idx, self->o.h.agg_index) TH_LOG("step %d", k);
	EXPECT_EQ(s->out_bitmap, self->o.h.worker_bitmap) TH_LOG("step %d", k);
	EXPECT_EQ(NV, self->o.h.value_count) TH_LOG("step %d", k);
	EXPECT_TRUE(self->o.ip_csum_ok) TH_LOG("step %d", k);
	if (s->out_flags & ESA_F_RESULT)
		return;		/* a pull's value is no sum */
	for (i = 0; i < NV; i++)
		ASSERT_EQ(s->out_val, self->o.values[i])
			TH_LOG("step %d, value %d", k, i);
}

static __u32 gone_of(const struct esa_agg *a, __u32 job, __u32 seq)
{
	int i;

	for (i = 0; i < ESA_GONE_WAYS; i++)
		if (a->gone_rec[i].job_id == job && a->gone_rec[i].seq == seq)
			return a->gone_rec[i].bitmap;
	return 0;
}

TEST_F(ix, row)
{
	const struct row *r = variant->row;
	const struct slot_state *e = &r->end;
	struct esa_agg a;
	int k;

	for (k = 0; k < MAX_STEPS && r->steps[k].job; k++) {
		const struct step *s = &r->steps[k];

		ASSERT_EQ(s->verdict, run_step(self, s)) TH_LOG("step %d", k);
		if (s->verdict != XDP_DROP)
			check_out(_metadata, self, s, k);
	}
	ASSERT_EQ(0, esa_switch_agg_read(g_sw, e->slot, &a));
	EXPECT_EQ(e->state, a.state);
	EXPECT_EQ(e->job, a.job_id);
	EXPECT_EQ(e->seq, a.seq);
	EXPECT_EQ(e->bitmap, a.bitmap);
	EXPECT_EQ(e->gone, a.gone);
	if (e->state != ESA_AGG_FREE) {	/* a claim resets the rest */
		EXPECT_EQ(e->overflow, a.overflow);
		EXPECT_EQ(e->val, a.values[NV - 1]);
	}
	for (k = 0; k < MAX_CHECKS && r->gone[k].job; k++)
		EXPECT_EQ(r->gone[k].bitmap,
			  gone_of(&a, r->gone[k].job, r->gone[k].seq))
			TH_LOG("gone record of job %u seq %u", r->gone[k].job,
			       r->gone[k].seq);
	for (k = 0; k < MAX_CHECKS && r->cnt[k].job; k++)
		EXPECT_EQ(r->cnt[k].n, dp_cnt(g_sw, r->cnt[k].job, r->cnt[k].c))
			TH_LOG("job %u counter %s", r->cnt[k].job,
			       esa_counter_name(r->cnt[k].c));
}

/*
 * Eviction meets a gone record: job 1's worker 0 flushed seq 2 by a
 * resend (its values left), worker 1 claimed the slot knowing it, then
 * job 2 preempts (the steps of EVICT_AFTER_FLUSH). The eviction must
 * record both workers as gone, so worker 2's packet completes what had
 * left and goes on at once instead of claiming a slot that could never
 * complete.
 */
#define EVICT_AFTER_FLUSH						\
		{ 1, 0, 2, 7, .verdict = XDP_DROP },			\
		{ 1, 0, 2, 7, ESA_F_RESEND, .verdict = XDP_REDIRECT,	\
		  .out_flags = ESA_F_PARTIAL, 1, 2, 7, 1, 1 },		\
		{ 1, 1, 2, 7, .verdict = XDP_DROP },			\
		{ 2, 0, 5, 7, .prio = 5, .verdict = XDP_REDIRECT,	\
		  .out_flags = ESA_F_PREEMPTED, 1, 2, 7, 2, 10 }

static const struct row evict_keeps_gone = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		EVICT_AFTER_FLUSH,
		{ 2, 1, 5, 7, .prio = 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 2, 5, 7, 3, 21000 },
		{ 1, 2, 2, 7, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL, 1, 2, 7, 4, 100 },
	},
	.end = { 7, ESA_AGG_FREE },
	.gone = { { 1, 2, 0 } },
	.cnt = { { 1, ESA_CNT_EVICTIONS, 1 }, { 1, ESA_CNT_EARLY_PARTIALS, 1 },
		 { 1, ESA_CNT_STRANDED, 1 }, { 2, ESA_CNT_COMPLETED, 1 } },
};

/*
 * The same meeting before the preemption's output is used: the evicted
 * sum's record holds its gone worker, and a resend of that worker finds
 * the slot held by job 2 and passes on as a RESEND, never as a claim.
 */
static const struct row evict_record_then_resend = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		EVICT_AFTER_FLUSH,
		{ 1, 0, 2, 7, ESA_F_RESEND, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESEND, 1, 2, 7, 1, 1 },
	},
	.end = { 7, ESA_AGG_PARTIAL, 2, 5, 1, 0, 0, 1000 },
	.gone = { { 1, 2, 3 } },
	.cnt = { { 1, ESA_CNT_COLLISIONS, 1 }, { 1, ESA_CNT_RESENDS, 2 },
		 { 2, ESA_CNT_PREEMPTIONS, 1 } },
};

/*
 * Saturation meets preemption: the evicted partial carries OVERFLOW; the
 * new resident starts clean, so its complete sum does not.
 */
static const struct row preempt_saturated = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 1, 0, 1, 3, .val = BIG, .verdict = XDP_DROP },
		{ 1, 1, 1, 3, .val = BIG, .verdict = XDP_DROP },
		{ 2, 0, 8, 3, .prio = 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PREEMPTED | ESA_F_OVERFLOW, 1, 1, 3, 3,
		  INT_MAX },
		{ 2, 1, 8, 3, .prio = 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 2, 8, 3, 3, 21000 },
	},
	.end = { 3, ESA_AGG_FREE },
	.gone = { { 1, 1, 3 } },
	.cnt = { { 1, ESA_CNT_OVERFLOWS, 1 }, { 2, ESA_CNT_OVERFLOWS, 0 },
		 { 1, ESA_CNT_EVICTIONS, 1 } },
};

/* Saturation meets a resend flush: the PARTIAL carries OVERFLOW. */
static const struct row flush_saturated = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 1, 0, 4, 2, .val = BIG, .verdict = XDP_DROP },
		{ 1, 1, 4, 2, .val = BIG, .verdict = XDP_DROP },
		{ 1, 1, 4, 2, ESA_F_RESEND, .val = BIG,
		  .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL | ESA_F_OVERFLOW, 1, 4, 2, 3,
		  INT_MAX },
	},
	.end = { 2, ESA_AGG_FREE },
	.gone = { { 1, 4, 3 } },
	.cnt = { { 1, ESA_CNT_STRANDED, 1 }, { 1, ESA_CNT_DUPLICATES, 1 } },
};

/*
 * Static slices meet a reclaim: job 1's stale partial (slot 12, index 2
 * of its slice starting at 10) leaves with the index the job knows, 2,
 * flagged OVERFLOW as it saturated; the record then lets worker 2's
 * packet of that sum go on at once, with its relative index.
 */
static const struct row static_reclaim_saturated = {
	.policy = ESA_POLICY_STATIC, .timeout_us = 2000, .static_slices = 1,
	.steps = {
		{ 1, 0, 1, 2, .val = BIG, .verdict = XDP_DROP },
		{ 1, 1, 1, 2, .val = BIG, .verdict = XDP_DROP },
		{ 1, 2, 5, 2, .sleep_us = 5000, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL | ESA_F_OVERFLOW, 1, 1, 2, 3,
		  INT_MAX },
		{ 1, 2, 1, 2, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL, 1, 1, 2, 4, 100 },
	},
	.end = { 12, ESA_AGG_PARTIAL, 1, 5, 4, 0, 0, 100 },
	.gone = { { 1, 1, 0 } },
	.cnt = { { 1, ESA_CNT_EVICTIONS, 1 }, { 1, ESA_CNT_STRANDED, 1 },
		 { 1, ESA_CNT_EARLY_PARTIALS, 1 } },
};

/*
 * Static slices meet preemption rules: under static nothing preempts,
 * not even a higher priority in another slice; each job's index 0 is
 * its own slot, and a complete sum leaves with the relative index.
 */
static const struct row static_slices_complete = {
	.policy = ESA_POLICY_STATIC, .static_slices = 1,
	.steps = {
		{ 1, 0, 3, 1, .verdict = XDP_DROP },
		{ 2, 0, 3, 1, .prio = 5, .verdict = XDP_DROP },
		{ 1, 1, 3, 1, .verdict = XDP_DROP },
		{ 1, 2, 3, 1, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 1, 3, 1, 7, 111 },
	},
	.end = { 15, ESA_AGG_PARTIAL, 2, 3, 1, 0, 0, 1000 },
	.cnt = { { 1, ESA_CNT_COMPLETED, 1 }, { 2, ESA_CNT_PREEMPTIONS, 0 },
		 { 1, ESA_CNT_EVICTIONS, 0 } },
};

/*
 * A gone claim meets saturation: worker 0 of seq 12 collided, worker 1
 * claims the freed slot knowing it, worker 2 saturates and completes
 * what is in: the early PARTIAL carries OVERFLOW.
 */
static const struct row early_partial_saturated = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 1, 1, 4, 6, .verdict = XDP_DROP },
		{ 1, 0, 12, 6, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COLLISION, 1, 12, 6, 1, 1 },
		{ 1, 0, 4, 6, .verdict = XDP_DROP },
		{ 1, 2, 4, 6, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 1, 4, 6, 7, 111 },
		{ 1, 1, 12, 6, .val = BIG, .verdict = XDP_DROP },
		{ 1, 2, 12, 6, .val = BIG, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL | ESA_F_OVERFLOW, 1, 12, 6, 6,
		  INT_MAX },
	},
	.end = { 6, ESA_AGG_FREE },
	.gone = { { 1, 12, 0 } },
	.cnt = { { 1, ESA_CNT_EARLY_PARTIALS, 1 }, { 1, ESA_CNT_OVERFLOWS, 1 },
		 { 1, ESA_CNT_COLLISIONS, 1 } },
};

/*
 * A collision meets a resend and a gone claim: worker 0's packet and its
 * resend both pass (the resend flagged RESEND only) and are remembered
 * once; workers 1 and 2 then finish on the freed slot as a PARTIAL of 2.
 * Worker 0 sending again while they sum: its values are at the PS, so it
 * passes as a COLLISION for the PS to dedupe, adding nothing.
 */
static const struct row collide_resend_gone_claim = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 2, 0, 1, 5, .prio = 5, .verdict = XDP_DROP },
		{ 1, 0, 9, 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COLLISION, 1, 9, 5, 1, 1 },
		{ 1, 0, 9, 5, ESA_F_RESEND, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESEND, 1, 9, 5, 1, 1 },
		{ 2, 1, 1, 5, .prio = 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 2, 1, 5, 3, 21000 },
		{ 1, 1, 9, 5, .verdict = XDP_DROP },
		{ 1, 0, 9, 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COLLISION, 1, 9, 5, 1, 1 },
		{ 1, 2, 9, 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_PARTIAL, 1, 9, 5, 6, 110 },
	},
	.end = { 5, ESA_AGG_FREE },
	.gone = { { 1, 9, 0 } },
	.cnt = { { 1, ESA_CNT_COLLISIONS, 3 }, { 1, ESA_CNT_EARLY_PARTIALS, 1 },
		 { 1, ESA_CNT_AGGREGATED, 2 }, { 1, ESA_CNT_DUPLICATES, 0 } },
};

/*
 * A pull meets a partial: the PS asking workers 1 and 2 to resend seq 3
 * is multicast as it is and leaves job 1's partial (esa) untouched; a
 * RESULT of that seq does not release a partial either (only atp holds
 * complete slots for it); the workers then complete it.
 */
static const struct row pull_over_partial = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 1, 0, 3, 5, .verdict = XDP_DROP },
		{ 1, PS, 3, 5, ESA_F_RESEND, .bitmap = 6,
		  .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESULT | ESA_F_RESEND, 1, 3, 5, 6 },
		{ 1, PS, 3, 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESULT, 1, 3, 5, 7 },
		{ 1, 1, 3, 5, ESA_F_RESEND, .verdict = XDP_TX,
		  .out_flags = ESA_F_PARTIAL, 1, 3, 5, 3, 11 },
	},
	.end = { 5, ESA_AGG_FREE },
	.gone = { { 1, 3, 3 } },
	.cnt = { { 1, ESA_CNT_PULLS, 1 }, { 1, ESA_CNT_RESULTS, 1 },
		 { 1, ESA_CNT_STRANDED, 1 } },
};

/*
 * atp: a pull meets the held complete slot and the resend of a worker
 * already in it: the pull releases nothing, the resend passes on as a
 * RESEND (the PS answers it), and only the RESULT frees the slot.
 */
static const struct row atp_pull_resend_held = {
	.policy = ESA_POLICY_ATP,
	.steps = {
		{ 2, 0, 4, 1, .prio = 5, .verdict = XDP_DROP },
		{ 2, 1, 4, 1, .prio = 5, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COMPLETE, 2, 4, 1, 3, 21000 },
		{ 2, PS, 4, 1, ESA_F_RESEND, .bitmap = 2,
		  .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESULT | ESA_F_RESEND, 2, 4, 1, 2 },
		{ 2, 1, 4, 1, ESA_F_RESEND, .prio = 5, .verdict = XDP_TX,
		  .out_flags = ESA_F_RESEND, 2, 4, 1, 2, 20000 },
	},
	.end = { 1, ESA_AGG_DONE, 2, 4, 3, 0, 0, 21000 },
	.cnt = { { 2, ESA_CNT_PULLS, 1 }, { 2, ESA_CNT_COLLISIONS, 1 },
		 { 2, ESA_CNT_RESULTS, 0 } },
};

/*
 * A resend meets a gone record: workers 0 and 1 of job 1's seq 6
 * collided with job 2's sum, worker 2's resend passes too; the record
 * then holds every worker and goes (no packet of that sum is to come).
 */
static const struct row resend_completes_record = {
	.policy = ESA_POLICY_ESA,
	.steps = {
		{ 2, 0, 1, 4, .prio = 5, .verdict = XDP_DROP },
		{ 1, 0, 6, 4, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COLLISION, 1, 6, 4, 1, 1 },
		{ 1, 1, 6, 4, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_COLLISION, 1, 6, 4, 2, 10 },
		{ 1, 2, 6, 4, ESA_F_RESEND, .verdict = XDP_REDIRECT,
		  .out_flags = ESA_F_RESEND, 1, 6, 4, 4, 100 },
	},
	.end = { 4, ESA_AGG_PARTIAL, 2, 1, 1, 0, 0, 1000 },
	.gone = { { 1, 6, 0 } },
	.cnt = { { 1, ESA_CNT_COLLISIONS, 3 }, { 1, ESA_CNT_RESENDS, 1 } },
};

FIXTURE_VARIANT_ADD(ix, evict_keeps_gone) { .row = &evict_keeps_gone };
FIXTURE_VARIANT_ADD(ix, evict_record_then_resend) {
	.row = &evict_record_then_resend };
FIXTURE_VARIANT_ADD(ix, preempt_saturated) { .row = &preempt_saturated };
FIXTURE_VARIANT_ADD(ix, flush_saturated) { .row = &flush_saturated };
FIXTURE_VARIANT_ADD(ix, static_reclaim_saturated) {
	.row = &static_reclaim_saturated };
FIXTURE_VARIANT_ADD(ix, static_slices_complete) {
	.row = &static_slices_complete };
FIXTURE_VARIANT_ADD(ix, early_partial_saturated) {
	.row = &early_partial_saturated };
FIXTURE_VARIANT_ADD(ix, collide_resend_gone_claim) {
	.row = &collide_resend_gone_claim };
FIXTURE_VARIANT_ADD(ix, pull_over_partial) { .row = &pull_over_partial };
FIXTURE_VARIANT_ADD(ix, atp_pull_resend_held) {
	.row = &atp_pull_resend_held };
FIXTURE_VARIANT_ADD(ix, resend_completes_record) {
	.row = &resend_completes_record };

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };

	if (dp_load_or_fail(&g_sw, &o))
		return 1;
	return test_harness_run(argc, argv);
}
