// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_TEST_RUN fixture tests of the XDP data plane (module-less
 * flavour): for every rule of Documentation/wire-protocol.rst the verdict,
 * the output frame and the map state (aggregators, counters) it leaves.
 * The program is loaded once (verification takes seconds); every test
 * starts from cleared maps.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"
#include "../lib/topo.h"

static struct esa_switch *g_sw;

FIXTURE(dp) {
	struct esa_switch *sw;
	struct dp_frame in, out;
	struct dp_out o;
	struct dp_pkt p;
	__s32 v[ESA_MAX_VALUES], w[ESA_MAX_VALUES];
};

/* The standard jobs, by id, that every test starts with. */
static const struct {
	__u8	fan_in;
	__u8	prio;
} std_job[] = {
	[1] = { .fan_in = 3, .prio = 1 },
	[2] = { .fan_in = 2, .prio = 5 },
};

static int std_jobs(struct esa_switch *sw)
{
	struct esa_job_info job;
	__u32 j;
	int err;

	for (j = 1; j < sizeof(std_job) / sizeof(std_job[0]); j++) {
		dp_job(&job, j, std_job[j].fan_in, std_job[j].prio, 0, 0);
		err = esa_switch_job_put(sw, &job);
		if (err)
			return err;
	}
	return 0;
}

FIXTURE_SETUP(dp)
{
	self->sw = g_sw;
	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ESA, DP_SLOTS, 0));
	ASSERT_EQ(0, std_jobs(self->sw));
}

FIXTURE_TEARDOWN(dp)
{
}

static void fill(__s32 *v, int n, __s32 base, __s32 step)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = base + step * i;
}

/*
 * Send worker .w's packet of job .job through the switch; return the
 * verdict. Fields by name, as in
 *	send_w(self, .job = 1, .fan_in = 3, .w = 0, .seq = 7, .idx = 4);
 * flags and priority left out are 0; values and count left out are the
 * 64 values of self->v.
 */
#define send_w(self, ...) send_wpkt(self, (struct dp_wpkt){ __VA_ARGS__ })
static int send_wpkt(FIXTURE_DATA(dp) *self, struct dp_wpkt w)
{
	if (!w.values)
		w.values = self->v;
	if (!w.count)
		w.count = 64;
	dp_pkt_w(&self->p, &w);
	dp_build(&self->in, &self->p);
	return dp_run(self->sw, &self->in, &self->out);
}

/*
 * The same for standard job @j's packet, with the fan-in and priority
 * std_job[] gives it:
 *	send_job(self, 1, .w = 0, .seq = 7, .idx = 4);
 */
#define send_job(self, j, ...)						\
	send_wpkt(self, (struct dp_wpkt){ .job = (j),			\
					  .fan_in = std_job[j].fan_in,	\
					  .priority = std_job[j].prio,	\
					  __VA_ARGS__ })

/* The flags of the frame the switch sent (parsed into self->o), or -1. */
static int out_flags(FIXTURE_DATA(dp) *self)
{
	if (dp_parse(self->out.buf, self->out.len, &self->o))
		return -1;
	return self->o.h.flags;
}

static int agg(FIXTURE_DATA(dp) *self, __u32 slot, struct esa_agg *a)
{
	return esa_switch_agg_read(self->sw, slot, a);
}

/* The state of aggregator @slot, or -1 if it cannot be read. */
static int slot_state(FIXTURE_DATA(dp) *self, __u32 slot)
{
	struct esa_agg a;

	return agg(self, slot, &a) ? -1 : a.state;
}

static void snapshot(struct esa_switch *sw, struct esa_agg *s)
{
	__u32 i;

	for (i = 0; i < DP_SLOTS; i++)
		esa_switch_agg_read(sw, i, &s[i]);
}

/* Slot @slot's gone record of (job, seq): its bitmap, 0 if none. */
static __u32 gone_of(FIXTURE_DATA(dp) *self, __u32 slot, __u32 job,
		     __u32 seq)
{
	struct esa_agg a;
	int i;

	if (agg(self, slot, &a))
		return ~0u;
	for (i = 0; i < ESA_GONE_WAYS; i++)
		if (a.gone_rec[i].job_id == job && a.gone_rec[i].seq == seq)
			return a.gone_rec[i].bitmap;
	return 0;
}

/*
 * atp, job 2 (fan_in 2) seq 4 on slot 1, every value 5: worker 0's
 * packet absorbed, worker 1's completes it (its output in self->out, the
 * slot held DONE). 0, or which step failed.
 */
static int atp_complete_held(FIXTURE_DATA(dp) *self)
{
	if (dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 0) ||
	    std_jobs(self->sw))
		return 1;
	fill(self->v, 64, 5, 0);
	if (send_job(self, 2, .w = 0, .seq = 4, .idx = 1) != XDP_DROP)
		return 2;
	/* unknown PS location: forwarded at L2 (flood), verdict REDIRECT */
	if (send_job(self, 2, .w = 1, .seq = 4, .idx = 1) != XDP_REDIRECT)
		return 3;
	return 0;
}

/*
 * A lock that stays held (another CPU's step stalled: preset here in the
 * map) costs the frame, not the switch: dropped after the bounded wait,
 * counted DROP_BUSY for its job and switch-wide, the aggregator left as
 * it was. Once the lock is free the endpoint's next send is taken.
 */
TEST_F(dp, lock_held_drops_busy)
{
	int fd = esa_switch_map_fd(self->sw, "esa_aggs");
	struct esa_agg held = { .lock = 1 }, a;
	__u32 slot = 4;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_map_update_elem(fd, &slot, &held, 0));
	fill(self->v, 64, -5, 3);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 7, .idx = slot));
	ASSERT_EQ(0, agg(self, slot, &a));
	EXPECT_EQ(1, a.lock);
	EXPECT_EQ(0, a.job_id);
	EXPECT_EQ(0, a.bitmap);
	EXPECT_EQ(ESA_AGG_FREE, a.state);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_BUSY));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_DROP_BUSY));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RX));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));

	held.lock = 0;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &slot, &held, 0));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 7, .idx = slot));
	ASSERT_EQ(0, agg(self, slot, &a));
	EXPECT_EQ(0, a.lock);		/* the step let it go */
	EXPECT_EQ(1, a.job_id);
	EXPECT_EQ(1, a.bitmap);
	EXPECT_EQ(self->v[63], a.values[63]);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_BUSY));
}

TEST_F(dp, claim_free_aggregator)
{
	struct esa_agg a;
	int i;

	fill(self->v, 64, -5, 3);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 7, .idx = 4));
	ASSERT_EQ(0, agg(self, 4, &a));
	EXPECT_EQ(1, a.job_id);
	EXPECT_EQ(7, a.seq);
	EXPECT_EQ(1, a.bitmap);
	EXPECT_EQ(64, a.value_count);
	EXPECT_EQ(ESA_AGG_PARTIAL, a.state);
	EXPECT_EQ(1, a.priority);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(self->v[i], a.values[i]);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RX));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_AGGREGATED));
	ASSERT_EQ(0, agg(self, 5, &a));
	EXPECT_EQ(0, a.job_id);
}

TEST_F(dp, add_same_sequence)
{
	struct esa_agg a;
	int i;

	fill(self->v, 100, 1000, 1);
	fill(self->w, 100, -7, -2);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 9, .idx = 2,
				     .count = 100));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 2, .seq = 9, .idx = 2,
				     .values = self->w, .count = 100));
	ASSERT_EQ(0, agg(self, 2, &a));
	EXPECT_EQ(5, a.bitmap);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(self->v[i] + self->w[i], a.values[i]);
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
}

TEST_F(dp, duplicate_never_added_twice)
{
	struct esa_agg a, b;

	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 0));
	ASSERT_EQ(0, agg(self, 0, &a));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 0));
	ASSERT_EQ(0, agg(self, 0, &b));
	EXPECT_EQ(0, memcmp(&a.values, &b.values, sizeof(a.values)));
	EXPECT_EQ(a.bitmap, b.bitmap);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DUPLICATES));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
}

/* esa: the last worker's frame leaves as COMPLETE (PS) + RESULT multicast. */
TEST_F(dp, complete_esa_multicast_and_free)
{
	__s32 u[ESA_MAX_VALUES];
	struct esa_agg a;
	int i, n = ESA_MAX_VALUES;

	fill(self->v, n, 1, 1);
	fill(self->w, n, 10, 10);
	fill(u, n, -3, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 3, .idx = 8,
				     .count = n));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 3, .idx = 8,
				     .values = self->w, .count = n));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 3, .idx = 8,
					 .values = u, .count = n));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(7, self->o.h.worker_bitmap);
	EXPECT_EQ(1, self->o.h.job_id);
	EXPECT_EQ(3, self->o.h.seq);
	EXPECT_EQ(n, self->o.h.value_count);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.daddr);
	EXPECT_EQ(ESA_UDP_PORT, self->o.dport);
	EXPECT_NE(0, self->o.udp_csum);		/* the sum is checksummed */
	EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len));
	EXPECT_TRUE(self->o.ip_csum_ok);
	EXPECT_EQ(62 + 4 * n, self->out.len);
	for (i = 0; i < n; i++)
		ASSERT_EQ(self->v[i] + self->w[i] + u[i], self->o.values[i]);
	ASSERT_EQ(0, agg(self, 8, &a));
	EXPECT_EQ(ESA_AGG_FREE, a.state);
	EXPECT_EQ(0, a.job_id);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_COMPLETED));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
}

TEST_F(dp, fan_in_one_completes_on_arrival)
{
	struct esa_job_info job;
	struct esa_agg a;

	dp_job(&job, 3, 1, 0, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &job));
	fill(self->v, 64, 42, 1);
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 3, .fan_in = 1, .w = 0,
				       .seq = 1, .idx = 6));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(42, self->o.values[0]);
	EXPECT_EQ(105, self->o.values[63]);
	ASSERT_EQ(0, agg(self, 6, &a));
	EXPECT_EQ(0, a.job_id);
}

/* atp: COMPLETE to the PS only; slot held until the PS's RESULT. */
TEST_F(dp, complete_atp_held_until_ps_result)
{
	struct esa_agg a;

	ASSERT_EQ(0, atp_complete_held(self));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(10, self->o.values[0]);
	EXPECT_EQ(0, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
	ASSERT_EQ(0, agg(self, 1, &a));
	EXPECT_EQ(ESA_AGG_DONE, a.state);
	EXPECT_EQ(2, a.job_id);
	/* a late retransmission: duplicate; a resend: on to the PS */
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 1, .seq = 4, .idx = 1));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_DUPLICATES));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 2, .w = 1, .seq = 4, .idx = 1,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_RESEND, out_flags(self));
	/* another job meanwhile collides */
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 1, .fan_in = 3, .w = 0,
				       .seq = 4, .idx = 1, .priority = 9));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	/* the PS's RESULT releases the slot and is multicast */
	dp_pkt_result(&self->p, 2, 2, 4, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 1));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
	/* a RESULT from anyone but the PS is dropped */
	self->p.saddr = DP_WORKER_ADDR(2, 0);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_DROP_PORT));
}

/*
 * A pull (RESULT | RESEND from the PS: "workers in the bitmap, resend") is
 * multicast like a result but releases nothing, even the held atp slot of
 * its (job, seq); one asking nobody is malformed.
 */
TEST_F(dp, pull_multicast_releases_nothing)
{
	ASSERT_EQ(0, atp_complete_held(self));
	ASSERT_EQ(ESA_AGG_DONE, slot_state(self, 1));
	dp_pkt_result(&self->p, 2, 2, 4, 1, self->v, 1);
	self->p.flags |= ESA_F_RESEND;
	self->p.bitmap = 1u << 1;
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	ASSERT_EQ(ESA_F_RESULT | ESA_F_RESEND, out_flags(self));
	EXPECT_EQ(1u << 1, self->o.h.worker_bitmap);
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_PULLS));
	EXPECT_EQ(0, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
	EXPECT_EQ(ESA_AGG_DONE, slot_state(self, 1));
	/* asking no worker, or one beyond fan_in: malformed */
	self->p.bitmap = 0;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	self->p.bitmap = 1u << 2;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(2, dp_cnt(self->sw, 2, ESA_CNT_DROP_MALFORMED));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_PULLS));
	/* the real RESULT still releases the slot */
	dp_pkt_result(&self->p, 2, 2, 4, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 1));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
}

/*
 * atp: only the PS's RESULT of the (job, seq) a slot holds complete
 * releases it. A RESULT of another sequence of the same job, or of another
 * job, aimed at that slot is multicast (ACT_RESULT) and leaves it held.
 */
TEST_F(dp, result_of_another_sequence_keeps_held_slot)
{
	struct esa_agg before, a;

	ASSERT_EQ(0, atp_complete_held(self));
	ASSERT_EQ(0, agg(self, 1, &before));
	ASSERT_EQ(ESA_AGG_DONE, before.state);
	ASSERT_EQ(4, before.seq);
	/* job 2, seq 5 and seq 3 (either side of the held 4), same slot */
	dp_pkt_result(&self->p, 2, 2, 5, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	self->p.seq = 3;
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	/* job 1's RESULT of the same seq 4 on that slot */
	dp_pkt_result(&self->p, 1, 3, 4, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	ASSERT_EQ(0, agg(self, 1, &a));
	EXPECT_EQ(0, memcmp(&before, &a, sizeof(a)));
	EXPECT_EQ(2, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
	/* a late worker packet of seq 4 is still a duplicate of the held sum */
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 4, .idx = 1));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_DUPLICATES));
	/* the RESULT of seq 4 itself releases it */
	dp_pkt_result(&self->p, 2, 2, 4, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 1));
}

TEST_F(dp, collision_atp_unaggregated_to_ps)
{
	struct esa_agg a, b;

	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 0));
	ASSERT_EQ(0, std_jobs(self->sw));
	fill(self->v, 64, 1, 1);
	fill(self->w, 80, 100, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 3));
	ASSERT_EQ(0, agg(self, 3, &a));
	/* job 2 has the higher priority, but atp never preempts */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 2, .w = 1, .seq = 8, .idx = 3,
					 .values = self->w, .count = 80));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	EXPECT_EQ(2, self->o.h.job_id);
	EXPECT_EQ(2, self->o.h.worker_bitmap);
	EXPECT_EQ(80, self->o.h.value_count);
	EXPECT_EQ(100, self->o.values[0]);
	EXPECT_EQ(179, self->o.values[79]);
	EXPECT_EQ(DP_PS_ADDR(2), self->o.daddr);
	EXPECT_TRUE(self->o.ip_csum_ok);
	ASSERT_EQ(0, agg(self, 3, &b));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_COLLISIONS));
	/* same job, another sequence: collision under every policy */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 2, .idx = 3));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_COLLISIONS));
}

/* esa: higher priority evicts the resident partial to its own PS. */
TEST_F(dp, preempt_evicts_partial_flagged_preempted)
{
	struct esa_neigh n = { .ifindex = 1, .mac = { 2, 0xaa, 0, 0, 0, 1 } };
	__be32 ps1 = htonl(DP_PS_ADDR(1));
	struct esa_agg a;
	int i;

	ASSERT_EQ(0, bpf_map_update_elem(esa_switch_map_fd(self->sw,
				"esa_neigh"), &ps1, &n, 0));
	ASSERT_EQ(0, esa_switch_learned_changed(self->sw));
	fill(self->v, 64, 7, 2);
	fill(self->w, 64, 1, 1);
	fill(self->o.values, 200, -50, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 9));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 2, .seq = 5, .idx = 9,
				     .values = self->w));
	memcpy(self->w, self->o.values, 200 * 4);
	/* job 2 (prio 5 > 1) with 200 values: the frame shrinks to 64 */
	ASSERT_EQ(XDP_TX, send_job(self, 2, .w = 1, .seq = 77, .idx = 9,
				   .values = self->w, .count = 200));
	ASSERT_EQ(ESA_F_PREEMPTED, out_flags(self));
	EXPECT_EQ(1, self->o.h.job_id);
	EXPECT_EQ(5, self->o.h.seq);
	EXPECT_EQ(9, self->o.h.agg_index);
	EXPECT_EQ(5, self->o.h.worker_bitmap);
	EXPECT_EQ(3, self->o.h.fan_in);
	EXPECT_EQ(1, self->o.h.priority);
	EXPECT_EQ(64, self->o.h.value_count);
	EXPECT_EQ(62 + 4 * 64, self->out.len);
	EXPECT_EQ(20 + 8 + 20 + 4 * 64, self->o.ip_len);
	EXPECT_EQ(8 + 20 + 4 * 64, self->o.udp_len);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.daddr);
	EXPECT_EQ(0, memcmp(self->o.dmac, n.mac, 6));
	EXPECT_TRUE(self->o.ip_csum_ok);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(7 + 2 * i + 1 + i, self->o.values[i]);
	ASSERT_EQ(0, agg(self, 9, &a));
	EXPECT_EQ(2, a.job_id);
	EXPECT_EQ(77, a.seq);
	EXPECT_EQ(2, a.bitmap);
	EXPECT_EQ(200, a.value_count);
	EXPECT_EQ(5, a.priority);
	EXPECT_EQ(-50, a.values[0]);
	EXPECT_EQ(149, a.values[199]);
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_PREEMPTIONS));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_EVICTIONS));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_PREEMPTIONS));
}

TEST_F(dp, preempt_grows_frame_for_larger_victim)
{
	struct esa_agg a;
	int i;

	fill(self->v, ESA_MAX_VALUES, -1000, 3);
	fill(self->w, 64, 0, 0);
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 1, .fan_in = 3, .w = 1,
				   .seq = 1, .idx = 0,
				   .count = ESA_MAX_VALUES));
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				       .seq = 1, .idx = 0, .values = self->w,
				       .priority = 1));
	ASSERT_EQ(ESA_F_PREEMPTED, out_flags(self));
	EXPECT_EQ(ESA_MAX_VALUES, self->o.h.value_count);
	EXPECT_EQ(62 + 4 * ESA_MAX_VALUES, self->out.len);
	for (i = 0; i < ESA_MAX_VALUES; i++)
		ASSERT_EQ(self->v[i], self->o.values[i]);
	ASSERT_EQ(0, agg(self, 0, &a));
	EXPECT_EQ(2, a.job_id);
	EXPECT_EQ(64, a.value_count);
}

TEST_F(dp, esa_equal_or_lower_priority_collides)
{
	struct esa_agg a, b;

	fill(self->v, 64, 1, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 1, .idx = 5));
	ASSERT_EQ(0, agg(self, 5, &a));
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 1, .fan_in = 3, .w = 0,
				       .seq = 1, .idx = 5, .priority = 5));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 1, .fan_in = 3, .w = 0,
				       .seq = 1, .idx = 5, .priority = 4));
	ASSERT_EQ(0, agg(self, 5, &b));
	EXPECT_TRUE(dp_same_resident(&a, &b));
	/* what went on is remembered for job 1's later packets of seq 1 */
	EXPECT_EQ(1, gone_of(self, 5, 1, 1));
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_COLLISIONS));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_PREEMPTIONS));
}

TEST_F(dp, static_slices_are_relative)
{
	struct esa_job_info job;
	struct esa_agg a;

	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_STATIC, DP_SLOTS, 0));
	dp_job(&job, 1, 3, 1, 10, 4);
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &job));
	dp_job(&job, 2, 2, 9, 14, 4);
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &job));
	fill(self->v, 64, 3, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 3));
	ASSERT_EQ(0, agg(self, 13, &a));
	EXPECT_EQ(1, a.job_id);
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				   .seq = 1, .idx = 0, .priority = 9));
	ASSERT_EQ(0, agg(self, 14, &a));
	EXPECT_EQ(2, a.job_id);
	ASSERT_EQ(0, agg(self, 13, &a));
	EXPECT_EQ(1, a.job_id);
	/* beyond the slice */
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 4));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_RANGE));
	/* completion under static multicasts and frees */
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 1,
				       .seq = 1, .idx = 0, .priority = 9));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(0, self->o.h.agg_index);
	EXPECT_EQ(6, self->o.values[0]);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 14));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_RESULTS));
}

TEST_F(dp, resend_flushes_partial)
{
	fill(self->v, 64, 10, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 2, .idx = 7));
	/* worker 1 not yet counted: added, then flushed as PARTIAL */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 2, .idx = 7,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(3, self->o.h.worker_bitmap);
	EXPECT_EQ(20, self->o.values[0]);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.daddr);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 7));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RESENDS));
	/* a claim that ended by a flush, not by completing: stranded */
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_STRANDED));
	/* resend of an already counted worker: flush without adding */
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 3, .idx = 7));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 3, .idx = 7,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(1, self->o.h.worker_bitmap);
	EXPECT_EQ(10, self->o.values[0]);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DUPLICATES));
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	/* resend finding a free slot: unaggregated with RESEND, no claim */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 4, .idx = 7,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_RESEND, out_flags(self));
	EXPECT_EQ(4, self->o.h.worker_bitmap);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 7));
}

TEST_F(dp, resend_completing_sends_complete)
{
	fill(self->v, 64, 1, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 2, .idx = 7));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 2, .idx = 7));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 2, .idx = 7,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(3, self->o.values[0]);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 7));
	/* completed, if by a resend: not stranded */
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_STRANDED_US));
}

TEST_F(dp, stale_slot_reclaimed_partial_to_owner)
{
	struct esa_agg a;

	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 2000));
	ASSERT_EQ(0, std_jobs(self->sw));
	fill(self->v, 64, 4, 0);
	fill(self->w, 70, 9, 0);
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 1, .fan_in = 3, .w = 1,
				   .seq = 6, .idx = 2, .priority = 9));
	/* young: job 2 collides (atp) */
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				       .seq = 6, .idx = 2, .values = self->w,
				       .count = 70));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	usleep(5000);
	/* old: job 2 takes it, job 1's partial goes to its PS as PARTIAL */
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				       .seq = 6, .idx = 2, .values = self->w,
				       .count = 70));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(1, self->o.h.job_id);
	EXPECT_EQ(2, self->o.h.worker_bitmap);
	EXPECT_EQ(64, self->o.h.value_count);
	EXPECT_EQ(4, self->o.values[63]);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.daddr);
	ASSERT_EQ(0, agg(self, 2, &a));
	EXPECT_EQ(2, a.job_id);
	EXPECT_EQ(70, a.value_count);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_EVICTIONS));
	/* job 1's claim ended by the reclaim, after holding >= 5 ms */
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	EXPECT_EQ(0, dp_cnt(self->sw, 2, ESA_CNT_STRANDED));
	EXPECT_LE(5000, dp_cnt(self->sw, 1, ESA_CNT_STRANDED_US));
	EXPECT_GT(5000000, dp_cnt(self->sw, 1, ESA_CNT_STRANDED_US));
	EXPECT_EQ(dp_cnt(self->sw, 1, ESA_CNT_STRANDED_US),
		  dp_cnt(self->sw, 0, ESA_CNT_STRANDED_US));
}

TEST_F(dp, saturation_sets_overflow)
{
	__s32 big[64], neg[64];
	struct esa_agg a;
	int i;

	for (i = 0; i < 64; i++) {
		big[i] = INT_MAX - 1;
		neg[i] = INT_MIN + 1;
	}
	neg[0] = 5;
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 1,
				     .values = big));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 1,
				     .values = big));
	ASSERT_EQ(0, agg(self, 1, &a));
	EXPECT_EQ(INT_MAX, a.values[3]);
	EXPECT_EQ(1, a.overflow);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_OVERFLOWS));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 1, .idx = 1,
					 .values = neg));
	ASSERT_EQ(ESA_F_COMPLETE | ESA_F_OVERFLOW, out_flags(self));
	EXPECT_EQ(INT_MAX, self->o.values[0]);	/* stuck at the bound */
	EXPECT_EQ(0, self->o.values[1]);	/* INT_MAX + INT_MIN + 1 */
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_OVERFLOWS));
	/* the negative side saturates too */
	for (i = 0; i < 64; i++)
		neg[i] = INT_MIN;
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 2, .idx = 1,
				     .values = neg));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 2, .idx = 1,
				     .values = neg));
	ASSERT_EQ(0, agg(self, 1, &a));
	EXPECT_EQ(INT_MIN, a.values[10]);
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_OVERFLOWS));
}

/*
 * Sums that left the switch in part (wire-protocol.rst): job 1 (3
 * workers) seq 1 holds slot 3, so seq 9's packets of workers 0 and 1
 * collide and are remembered; after seq 1 completes and frees the slot,
 * worker 2's packet of seq 9 completes what had left: it goes on to the
 * PS flagged PARTIAL instead of claiming a slot it could never complete.
 */
TEST_F(dp, gone_last_packet_goes_on_without_claiming)
{
	fill(self->v, 64, 2, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 3));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 9, .idx = 3));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 9, .idx = 3));
	EXPECT_EQ(3, gone_of(self, 3, 1, 9));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 3));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 1, .idx = 3));
	ASSERT_EQ(ESA_AGG_FREE, slot_state(self, 3));
	fill(self->w, 64, -7, 3);
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 9, .idx = 3,
					 .values = self->w));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(4, self->o.h.worker_bitmap);
	EXPECT_EQ(9, self->o.h.seq);
	EXPECT_EQ(-7, self->o.values[0]);
	EXPECT_EQ(-7 + 3 * 63, self->o.values[63]);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.daddr);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 3));
	EXPECT_EQ(0, gone_of(self, 3, 1, 9));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_EARLY_PARTIALS));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_EARLY_PARTIALS));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	/* its values count as aggregated (a partial of one) */
	EXPECT_EQ(4, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_COLLISIONS));
}

/*
 * A sum of which only worker 0 left claims the freed slot knowing it:
 * when workers 1 and 2 are in, the partial leaves at once as PARTIAL and
 * frees the slot (before: it sat there until a resend or the reclaim).
 */
TEST_F(dp, gone_claim_sends_partial_when_rest_is_in)
{
	struct esa_agg a;
	int i;

	fill(self->v, 100, 1, 1);
	fill(self->w, 100, 1000, -2);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 4, .idx = 6,
				     .count = 100));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 12, .idx = 6,
					 .count = 100));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 4, .idx = 6,
				     .count = 100));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 4, .idx = 6,
					 .count = 100));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 12, .idx = 6,
				     .count = 100));
	ASSERT_EQ(0, agg(self, 6, &a));
	EXPECT_EQ(12, a.seq);
	EXPECT_EQ(2, a.bitmap);
	EXPECT_EQ(1, a.gone);
	EXPECT_EQ(0, gone_of(self, 6, 1, 12));	/* moved into the slot */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 12, .idx = 6,
					 .values = self->w, .count = 100));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(6, self->o.h.worker_bitmap);
	EXPECT_EQ(100, self->o.h.value_count);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(self->v[i] + self->w[i], self->o.values[i]);
	ASSERT_EQ(0, agg(self, 6, &a));
	EXPECT_EQ(ESA_AGG_FREE, a.state);
	EXPECT_EQ(0, a.gone);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_EARLY_PARTIALS));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_COMPLETED));
	/* a worker whose values left, sending again: on to the PS too */
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 13, .idx = 6,
				     .count = 100));
	ASSERT_EQ(0, agg(self, 6, &a));
	ASSERT_EQ(13, a.seq);
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 14, .idx = 6,
					 .count = 100));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 14, .idx = 6,
					 .count = 100));
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	EXPECT_EQ(1, gone_of(self, 6, 1, 14));
}

/*
 * Preemption: job 1's evicted partial is remembered, as is its worker 1's
 * later packet that collides with job 2; when job 2 completes, worker 2's
 * packet goes on at once instead of claiming.
 */
TEST_F(dp, gone_after_preemption)
{
	fill(self->v, 64, 5, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 9));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 2, .w = 0, .seq = 77, .idx = 9));
	ASSERT_EQ(ESA_F_PREEMPTED, out_flags(self));
	EXPECT_EQ(1, gone_of(self, 9, 1, 5));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 5, .idx = 9));
	EXPECT_EQ(3, gone_of(self, 9, 1, 5));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 2, .w = 1, .seq = 77, .idx = 9));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 5, .idx = 9));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(4, self->o.h.worker_bitmap);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 9));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_EARLY_PARTIALS));
}

/*
 * A resend flush remembers what it sent: the late first packets of the
 * other workers claim knowing it, and leave as soon as they are all in.
 * A resend from a worker whose values already left flushes the partial
 * without adding them again.
 */
TEST_F(dp, gone_after_flush_and_resend_of_gone_worker)
{
	struct esa_agg a;

	fill(self->v, 64, 10, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 2, .idx = 7));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 2, .idx = 7,
					 .flags = ESA_F_RESEND));
	EXPECT_EQ(1, gone_of(self, 7, 1, 2));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 2, .idx = 7));
	ASSERT_EQ(0, agg(self, 7, &a));
	EXPECT_EQ(1, a.gone);
	EXPECT_EQ(2, a.bitmap);
	/* worker 0 resends again: the partial (worker 1 only) is flushed */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 2, .idx = 7,
					 .flags = ESA_F_RESEND));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(2, self->o.h.worker_bitmap);
	EXPECT_EQ(10, self->o.values[0]);
	EXPECT_EQ(3, gone_of(self, 7, 1, 2));
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_STRANDED));
	/* worker 2's first packet: all the rest had left */
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 2, .idx = 7));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(4, self->o.h.worker_bitmap);
	EXPECT_EQ(ESA_AGG_FREE, slot_state(self, 7));
	EXPECT_EQ(0, gone_of(self, 7, 1, 2));
}

/* A reclaim remembers the stale partial it sent to the owner's PS. */
TEST_F(dp, gone_after_reclaim)
{
	struct esa_agg a;

	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ESA, DP_SLOTS, 2000));
	ASSERT_EQ(0, std_jobs(self->sw));
	fill(self->v, 64, 4, 0);
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 1, .fan_in = 3, .w = 0,
				   .seq = 6, .idx = 2, .priority = 9));
	usleep(5000);
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				       .seq = 6, .idx = 2));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(1, gone_of(self, 2, 1, 6));
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 2, .fan_in = 2, .w = 1,
				       .seq = 6, .idx = 2));
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 1, .fan_in = 3, .w = 2,
				   .seq = 6, .idx = 2, .priority = 9));
	ASSERT_EQ(0, agg(self, 2, &a));
	EXPECT_EQ(1, a.job_id);
	EXPECT_EQ(1, a.gone);
	ASSERT_EQ(XDP_REDIRECT, send_w(self, .job = 1, .fan_in = 3, .w = 1,
				       .seq = 6, .idx = 2, .priority = 9));
	ASSERT_EQ(ESA_F_PARTIAL, out_flags(self));
	EXPECT_EQ(6, self->o.h.worker_bitmap);
	EXPECT_EQ(8, self->o.values[0]);
}

/*
 * Records: a sum whose every worker left is forgotten (no packet of it is
 * to come); eight sums are kept per slot, a ninth takes the ways in turn.
 * atp keeps none: it is ATP's rule as published.
 */
TEST_F(dp, gone_records_capacity_and_atp)
{
	struct esa_agg a;
	__u32 seq;
	int w;

	fill(self->v, 64, 1, 0);
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 1, .idx = 0));
	for (w = 0; w < 3; w++)
		ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = w, .seq = 3,
						 .idx = 0));
	EXPECT_EQ(0, gone_of(self, 0, 1, 3));
	for (seq = 10; seq < 10 + ESA_GONE_WAYS; seq++)
		ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = seq,
						 .idx = 0));
	for (seq = 10; seq < 10 + ESA_GONE_WAYS; seq++)
		EXPECT_EQ(2, gone_of(self, 0, 1, seq));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 99, .idx = 0));
	EXPECT_EQ(2, gone_of(self, 0, 1, 99));
	EXPECT_EQ(0, gone_of(self, 0, 1, 10));
	EXPECT_EQ(2, gone_of(self, 0, 1, 11));

	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 0));
	ASSERT_EQ(0, std_jobs(self->sw));
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 1, .idx = 0));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 3, .idx = 0));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 1, .seq = 3, .idx = 0));
	EXPECT_EQ(0, gone_of(self, 0, 1, 3));
	ASSERT_EQ(0, agg(self, 0, &a));
	EXPECT_EQ(0, a.gone_rec[0].job_id);
}

/* Bind IPv4 @addr (host order) to port @ifindex (0: first sight) for @job. */
static int bind_addr(FIXTURE_DATA(dp) *self, __u32 addr, __u32 ifindex,
		     __u16 job)
{
	struct esa_neigh n = { .ifindex = ifindex, .bound_job = job };
	__be32 a = htonl(addr);

	if (bpf_map_update_elem(esa_switch_map_fd(self->sw, "esa_neigh"),
				&a, &n, 0))
		return -errno;
	return esa_switch_learned_changed(self->sw);
}

/* Where @addr sits: its binding, else what was learned of it. */
static int neigh_of(FIXTURE_DATA(dp) *self, __u32 addr, struct esa_neigh *n)
{
	__be32 a = htonl(addr);

	if (!bpf_map_lookup_elem(esa_switch_map_fd(self->sw, "esa_neigh"),
				 &a, n))
		return 0;
	return bpf_map_lookup_elem(esa_switch_map_fd(self->sw, "esa_learned"),
				   &a, n);
}

/*
 * Issue 18: job 1's worker 0 is bound to port 7; the test frames come in
 * on port 1 (lo). A data packet, an ordinary IPv4 frame and an ARP frame
 * claiming its address are spoofs: dropped before anything is learned
 * from them, counted DROP_SPOOF switch-wide and for job 1, not RX; no
 * aggregator, neighbour or MAC entry changes.
 */
TEST_F(dp, spoof_of_a_bound_address_dropped_counted)
{
	static struct esa_agg before[DP_SLOTS], after[DP_SLOTS];
	__u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xcc, 0, 0, 0, 9,
		0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1,
		2, 0xcc, 0, 0, 0, 9, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 10, 9, 8, 1,
	};
	struct esa_mac_key k = {};
	__be32 w0 = htonl(DP_WORKER_ADDR(1, 0));
	struct esa_fdb_entry port;
	struct esa_neigh n;

	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 0), 7, 1));
	snapshot(self->sw, before);
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	/* the same frame to another UDP port: ordinary traffic, still a spoof */
	self->in.buf[37] ^= 1;
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	memcpy(arp + 28, &w0, 4);
	memcpy(self->in.buf, arp, sizeof(arp));
	self->in.len = sizeof(arp);
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(3, dp_cnt(self->sw, 0, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_RX));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	snapshot(self->sw, after);
	EXPECT_EQ(0, memcmp(before, after, sizeof(before)));
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 0), &n));
	EXPECT_EQ(7, n.ifindex);
	EXPECT_EQ(1, n.bound_job);
	memcpy(k.addr, arp + 6, 6);
	EXPECT_NE(0, bpf_map_lookup_elem(esa_switch_map_fd(self->sw, "esa_fdb"),
					 &k, &port));
	/* a RESULT from a PS address bound elsewhere: the same */
	ASSERT_EQ(0, bind_addr(self, DP_PS_ADDR(1), 7, 1));
	dp_pkt_result(&self->p, 1, 3, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(4, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
}

/*
 * An ARP frame of hardware type IEEE 802 (6), which a Linux host on
 * Ethernet takes as it takes Ethernet's (1), claiming a bound address
 * from another port: a spoof like any other.
 */
TEST_F(dp, arp_of_ieee802_hardware_checked)
{
	__u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xcc, 0, 0, 0, 9,
		0x08, 0x06, 0, 6, 0x08, 0, 6, 4, 0, 2,
		2, 0xcc, 0, 0, 0, 9, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 10, 9, 8, 1,
	};
	__be32 w0 = htonl(DP_WORKER_ADDR(1, 0));

	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 0), 7, 1));
	memcpy(arp + 28, &w0, 4);
	memcpy(self->in.buf, arp, sizeof(arp));
	self->in.len = sizeof(arp);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
}

/*
 * A bound address on its own port is served as before; one bound at first
 * sight takes the port it first shows up on, its MAC with it, and keeps
 * its binding (a later learning does not unbind it).
 */
TEST_F(dp, bound_address_served_on_its_port_first_sight_fixes_it)
{
	struct esa_neigh n;
	struct esa_agg a;

	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 0), 1, 1));
	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 1), 0, 1));
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 2));
	ASSERT_EQ(0, agg(self, 2, &a));
	EXPECT_EQ(3, a.bitmap);
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 1), &n));
	EXPECT_EQ(1, n.ifindex);
	EXPECT_EQ(1, n.bound_job);
	EXPECT_EQ(0, memcmp(n.mac, self->in.buf + 6, 6));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 2, .idx = 3));
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 1), &n));
	EXPECT_EQ(1, n.bound_job);
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
}

/*
 * A PS bound at first sight and not seen yet (a data plane just attached,
 * the module keeping its jobs): a resend passed on to it is switched like
 * a frame to an unknown address (flooded by its own destination MAC), not
 * sent to port 0 with a zero MAC and lost; the PS's answer then binds it.
 */
TEST_F(dp, frame_for_unseen_first_sight_ps_flooded)
{
	struct esa_neigh n;
	__u8 dst[6];

	ASSERT_EQ(0, bind_addr(self, DP_PS_ADDR(1), 0, 1));
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 1, .idx = 2,
					 .flags = ESA_F_RESEND));
	memcpy(dst, self->in.buf, 6);
	EXPECT_EQ(0, memcmp(self->out.buf, dst, 6));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_COLLISIONS));
	ASSERT_EQ(0, neigh_of(self, DP_PS_ADDR(1), &n));
	EXPECT_EQ(0, n.ifindex);
	EXPECT_EQ(1, n.bound_job);
}

/*
 * A source MAC with the group bit is no station's: such a frame is a spoof
 * of no job (dropped, counted switch-wide), even when it claims a bound
 * worker from its own port, so it can neither be summed nor be passed on
 * unchecked. An ARP sender MAC with the group bit is checked like any
 * other and teaches nothing: it does not bind a first-sight address.
 */
TEST_F(dp, group_source_mac_never_passes_unchecked)
{
	static struct esa_agg before[DP_SLOTS], after[DP_SLOTS];
	__u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xcc, 0, 0, 0, 9,
		0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2,
		3, 0, 0, 0, 0, 1, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 10, 9, 8, 1,
	};
	__be32 w0 = htonl(DP_WORKER_ADDR(1, 0)), ps = htonl(DP_PS_ADDR(1));
	struct esa_neigh n;

	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 0), 7, 1));
	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 1), 1, 1));
	ASSERT_EQ(0, bind_addr(self, DP_PS_ADDR(1), 0, 1));
	snapshot(self->sw, before);
	fill(self->v, 64, 1, 1);
	dp_pkt_worker(&self->p, 1, 3, 0, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	self->in.buf[6] = 0x03;			/* 03:..: a group address */
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	/* worker 1 from its own port, but from a group MAC */
	dp_pkt_worker(&self->p, 1, 3, 1, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	self->in.buf[6] |= 1;
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(2, dp_cnt(self->sw, 0, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_AGGREGATED));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	snapshot(self->sw, after);
	EXPECT_EQ(0, memcmp(before, after, sizeof(before)));
	/* ARP: "worker 0 is at 03:00:00:00:00:01", from another port */
	memcpy(arp + 28, &w0, 4);
	memcpy(self->in.buf, arp, sizeof(arp));
	self->in.len = sizeof(arp);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	/* ... the PS's first-sight address: not bound by it */
	memcpy(self->in.buf + 28, &ps, 4);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(2, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	ASSERT_EQ(0, neigh_of(self, DP_PS_ADDR(1), &n));
	EXPECT_EQ(0, n.ifindex);
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 0), &n));
	EXPECT_EQ(7, n.ifindex);
}

/* Insert an 802.1Q (@tpid 0x8100) or 802.1ad (0x88a8) tag after the MACs. */
static void add_tag(struct dp_frame *f, __u16 tpid, __u16 vid)
{
	memmove(f->buf + 16, f->buf + 12, f->len - 12);
	f->buf[12] = tpid >> 8;
	f->buf[13] = tpid;
	f->buf[14] = vid >> 8;
	f->buf[15] = vid;
	f->len += 4;
}

/* Tag @f as @stack says: 1 = 802.1Q VID 0; 2 = 802.1ad VID 5 over that. */
static void tag_as(struct dp_frame *f, int stack)
{
	add_tag(f, 0x8100, 0);
	if (stack > 1)
		add_tag(f, 0x88a8, 5);
}

/*
 * Tagged frames, priority-tagged (VID 0, which a host takes as untagged)
 * or stacked: judged by what the tags carry. A data packet or RESULT
 * claiming a member bound to another port is a spoof of its job; a
 * member's own data packet to the aggregator, tagged, is dropped as
 * malformed (sums come from untagged frames only) without touching an
 * aggregator; ordinary UDP is switched unchanged; under three tags the
 * switch cannot see the payload and drops it.
 */
TEST_F(dp, tagged_frames_judged_by_what_they_carry)
{
	static struct esa_agg before[DP_SLOTS], after[DP_SLOTS];
	int stack, spoofs = 0, malformed = 0;

	ASSERT_EQ(0, bind_addr(self, DP_WORKER_ADDR(1, 0), 7, 1));
	ASSERT_EQ(0, bind_addr(self, DP_PS_ADDR(1), 7, 1));
	snapshot(self->sw, before);
	fill(self->v, 64, 1, 1);
	for (stack = 1; stack <= 2; stack++) {
		dp_pkt_worker(&self->p, 1, 3, 0, 1, 2, self->v, 64);
		dp_build(&self->in, &self->p);
		tag_as(&self->in, stack);
		EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
		EXPECT_EQ(++spoofs, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF))
			TH_LOG("%d tags: worker 0 from another port", stack);
		dp_pkt_result(&self->p, 1, 3, 1, 2, self->v, 64);
		dp_build(&self->in, &self->p);
		tag_as(&self->in, stack);
		EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
		EXPECT_EQ(++spoofs, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF))
			TH_LOG("%d tags: a RESULT from the PS's address", stack);
		/* worker 1 (not bound) to the aggregator: not summed */
		dp_pkt_worker(&self->p, 1, 3, 1, 1, 2, self->v, 64);
		dp_build(&self->in, &self->p);
		tag_as(&self->in, stack);
		EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
		EXPECT_EQ(++malformed, dp_cnt(self->sw, 0, ESA_CNT_DROP_MALFORMED))
			TH_LOG("%d tags: a data packet to the aggregator", stack);
		/* the same to another UDP port: switched as it is */
		self->in.buf[37 + 4 * stack] ^= 1;
		EXPECT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
		EXPECT_EQ(self->in.len, self->out.len);
		EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	}
	dp_pkt_worker(&self->p, 1, 3, 1, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	self->in.buf[37] ^= 1;
	tag_as(&self->in, 2);
	add_tag(&self->in, 0x8100, 0);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(++malformed, dp_cnt(self->sw, 0, ESA_CNT_DROP_MALFORMED));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_AGGREGATED));
	EXPECT_EQ(2, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	snapshot(self->sw, after);
	EXPECT_EQ(0, memcmp(before, after, sizeof(before)));
}

/*
 * IPv4 fragments are never aggregation packets. A first fragment (MF) of
 * a datagram to the aggregator is dropped as malformed; a later fragment
 * is data, however much its bytes look like a RESULT: switched unchanged,
 * to its MAC or, broadcast, flooded; no aggregator is touched.
 */
TEST_F(dp, fragments_never_parsed_as_aggregation)
{
	static struct esa_agg before[DP_SLOTS], after[DP_SLOTS];
	__u8 later[2] = { 0x00, 0x05 };		/* offset 40 bytes, no MF */

	snapshot(self->sw, before);
	fill(self->v, 64, 1, 1);
	EXPECT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	self->in.buf[20] = 0x20;		/* MF: the first part */
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_DROP_MALFORMED));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_AGGREGATED));
	dp_pkt_result(&self->p, 1, 3, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	memcpy(self->in.buf + 20, later, 2);
	memset(self->in.buf, 0xff, 6);
	EXPECT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(self->in.len, self->out.len);
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_RESULTS));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	ASSERT_EQ(0, agg(self, 2, &after[2]));
	EXPECT_EQ(1, after[2].bitmap);		/* worker 0's packet only */
	snapshot(self->sw, after);
	for (int i = 0; i < DP_SLOTS; i++)
		if (i != 2)
			EXPECT_EQ(0, memcmp(&before[i], &after[i], sizeof(before[i])));
}

/*
 * The per-CPU learning memo (esa_learn() in bpf/esa_switch.bpf.c) is tested
 * on one CPU: the memo of the CPU the frames run on is the one the next
 * frame would hit. Each test sends a source twice first: the first frame
 * learns (writes), the second finds nothing to write and is memoised.
 */
static int run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void stay_on_this_cpu(void)
{
	run_on_cpu(sched_getcpu());
}

/*
 * A source learned and memoised on port 1, then bound to port 7 by the
 * loader (esa_switch_bind_jobs(), what aggctl calls): its very next frame
 * from port 1 is a spoof, not a memo hit.
 */
TEST_F(dp, memo_void_after_binding_to_another_port)
{
	struct esa_job_info job;
	struct esa_neigh n;

	stay_on_this_cpu();
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 0), &n));
	EXPECT_EQ(1, n.ifindex);
	EXPECT_EQ(0, n.bound_job);
	dp_job(&job, 1, 3, 1, 0, 0);
	job.worker_ifindex[0] = 7;
	ASSERT_EQ(0, esa_switch_bind_jobs(self->sw, &job, 1, NULL));
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	ASSERT_EQ(0, neigh_of(self, DP_WORKER_ADDR(1, 0), &n));
	EXPECT_EQ(7, n.ifindex);
}

/*
 * A memo is for one (port, MAC, address): a bound address claimed by a
 * memoised MAC on the memoised port is still checked and dropped. The
 * bound address is 64 above the memoised one, so that both fall in the
 * same way of the memo (ESA_LEARN_MEMO_WAYS, picked by the address's low
 * bits): only the memo's own address check tells them apart.
 */
TEST_F(dp, memo_hit_does_not_skip_spoof_check_of_another_address)
{
	__u32 other = DP_WORKER_ADDR(1, 0) + 64;
	__u8 mac[6];

	stay_on_this_cpu();
	ASSERT_EQ(0, bind_addr(self, other, 7, 1));
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	memcpy(mac, self->in.buf + 6, 6);
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_DROP_SPOOF));
	dp_pkt_worker(&self->p, 1, 3, 1, 1, 2, self->v, 64);
	self->p.saddr = other;
	dp_build(&self->in, &self->p);
	memcpy(self->in.buf + 6, mac, 6);	/* worker 0's MAC */
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_SPOOF));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
}

static void expect_learned_on(struct __test_metadata *_metadata,
			      FIXTURE_DATA(dp) *self, __u32 addr,
			      const __u8 *mac, __u32 port)
{
	struct esa_mac_key k = {};
	struct esa_fdb_entry e;
	struct esa_neigh n;

	memcpy(k.addr, mac, 6);
	ASSERT_EQ(0, neigh_of(self, addr, &n));
	EXPECT_EQ(port, n.ifindex);
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(self->sw,
				"esa_fdb"), &k, &e));
	EXPECT_EQ(port, e.ifindex);
}

/*
 * An unbound host memoised on port 1 by one CPU moves to another port,
 * learned there by another CPU (the data plane's own write voids every
 * CPU's memo), and back on the first CPU: learned on port 1 again, not a
 * memo hit that leaves it on the other port. The other port is a veth in
 * a network namespace of this test's own (the harness runs each test in a
 * child; BPF_PROG_TEST_RUN needs a real device).
 */
TEST_F(dp, memo_void_after_host_moves_port_and_back)
{
	int cpu = sched_getcpu(), cpu2 = -1, i;
	cpu_set_t set;
	__u8 mac[6];
	__u32 other;

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (i = 0; i < CPU_SETSIZE && cpu2 < 0; i++)
		if (i != cpu && CPU_ISSET(i, &set))
			cpu2 = i;
	if (cpu2 < 0)
		SKIP(return, "one CPU: the move must be learned on another");
	ASSERT_EQ(0, run_on_cpu(cpu));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, topo_veth_add("esamv0", "esamv1"));
	other = if_nametoindex("esamv0");
	ASSERT_NE(0, other);
	ASSERT_NE(1, other);
	dp_pkt_worker(&self->p, 1, 3, 0, 1, 2, self->v, 64);
	dp_build(&self->in, &self->p);
	self->in.buf[37] ^= 1;		/* ordinary UDP: forwarded */
	memcpy(mac, self->in.buf + 6, 6);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	expect_learned_on(_metadata, self, DP_WORKER_ADDR(1, 0), mac, 1);
	ASSERT_EQ(0, run_on_cpu(cpu2));
	dp_run_on(self->sw, &self->in, &self->out, other);
	expect_learned_on(_metadata, self, DP_WORKER_ADDR(1, 0), mac, other);
	ASSERT_EQ(0, run_on_cpu(cpu));
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	expect_learned_on(_metadata, self, DP_WORKER_ADDR(1, 0), mac, 1);
}

/* L2: other traffic forwarded, MACs and IPv4 neighbours learned. */
TEST_F(dp, l2_forwarding_and_learning)
{
	__u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xbb, 0, 0, 0, 7,
		0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1,
		2, 0xbb, 0, 0, 0, 7, 10, 9, 8, 7,
		0, 0, 0, 0, 0, 0, 10, 9, 8, 1,
	};
	struct esa_mac_key k = { .addr = { 2, 0xbb, 0, 0, 0, 7 } };
	__be32 ip = htonl(0x0a090807);
	struct esa_fdb_entry port;
	struct esa_neigh n;

	memcpy(self->in.buf, arp, sizeof(arp));
	self->in.len = sizeof(arp);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->out.buf, arp, sizeof(arp)));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(self->sw,
				"esa_learned"), &ip, &n));
	EXPECT_EQ(1, n.ifindex);
	EXPECT_EQ(0, memcmp(n.mac, k.addr, 6));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(self->sw,
				"esa_fdb"), &k, &port));
	EXPECT_EQ(1, port.ifindex);
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	/* ordinary UDP to another port: forwarded unchanged */
	fill(self->v, 64, 1, 1);
	dp_pkt_worker(&self->p, 1, 3, 0, 1, 1, self->v, 64);
	dp_build(&self->in, &self->p);
	self->in.buf[37] ^= 1;		/* dport 47001 */
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(self->in.len, self->out.len);
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	EXPECT_EQ(2, dp_cnt(self->sw, 0, ESA_CNT_FORWARDED));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_RX));
	/* to a MAC learned on the ingress port itself: filtered */
	memcpy(self->in.buf, k.addr, 6);
	ASSERT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
}

/* Every malformed kind: dropped, counted by reason, no aggregator touched. */
struct bad_case {
	const char *what;
	unsigned int counter;
	int job_level;		/* also counted for job 1 */
	void (*mutate)(struct dp_frame *f);
};

/* a version no endpoint sends (2 is a token job's: test_token.c) */
static void m_version(struct dp_frame *f) { f->buf[42] = 3; }
static void m_flags(struct dp_frame *f) { f->buf[43] = ESA_F_COMPLETE; }
static void m_result_resend(struct dp_frame *f)
{ f->buf[43] = ESA_F_RESULT | ESA_F_RESEND; }
static void m_fan0(struct dp_frame *f) { f->buf[44] = 0; }
static void m_fan33(struct dp_frame *f) { f->buf[44] = 33; }
static void m_fan_job(struct dp_frame *f) { f->buf[44] = 4; }
static void m_count0(struct dp_frame *f) { f->buf[48] = 0; f->buf[49] = 0; }
static void m_count364(struct dp_frame *f)
{ f->buf[48] = 364 >> 8; f->buf[49] = 364 & 0xff; }
static void m_count_len(struct dp_frame *f) { f->buf[49] = 63; }
static void m_udp_len(struct dp_frame *f) { f->buf[39] += 4; }
static void m_ip_len(struct dp_frame *f) { f->buf[17] += 4; }
static void m_trunc(struct dp_frame *f) { f->len -= 4; }
static void m_trunc_hdr(struct dp_frame *f) { f->len = 60; }
/* cut inside the UDP header: still UDP by IPv4, port unreadable */
static void m_trunc_udp(struct dp_frame *f) { f->len = 14 + 20 + 6; }
static void m_job0(struct dp_frame *f) { f->buf[46] = 0; f->buf[47] = 0; }
static void m_job_unknown(struct dp_frame *f) { f->buf[47] = 77; }
static void m_job_big(struct dp_frame *f) { f->buf[46] = 0x04; }
static void m_bits2(struct dp_frame *f) { f->buf[61] = 3; }
static void m_bits0(struct dp_frame *f) { f->buf[61] = 0; }
static void m_bit_fan(struct dp_frame *f) { f->buf[61] = 8; }
static void m_src_ip(struct dp_frame *f) { f->buf[29] ^= 1; }
static void m_src_port(struct dp_frame *f) { f->buf[35] ^= 1; }
static void m_index(struct dp_frame *f) { f->buf[57] = DP_SLOTS; }
static void m_index_big(struct dp_frame *f) { f->buf[54] = 0x80; }
static void m_ip_opts(struct dp_frame *f)
{
	/* one 4-byte option (NOPs): the UDP header moves, lengths agree */
	memmove(f->buf + 38, f->buf + 34, f->len - 34);
	memset(f->buf + 34, 1, 4);
	f->buf[14] = 0x46;
	f->buf[17] += 4;
	f->len += 4;
}

static const struct bad_case bad_cases[] = {
	{ "version", ESA_CNT_DROP_MALFORMED, 0, m_version },
	{ "switch-only flag", ESA_CNT_DROP_MALFORMED, 0, m_flags },
	{ "pull not from the PS", ESA_CNT_DROP_PORT, 1, m_result_resend },
	{ "fan_in 0", ESA_CNT_DROP_MALFORMED, 0, m_fan0 },
	{ "fan_in 33", ESA_CNT_DROP_MALFORMED, 0, m_fan33 },
	{ "fan_in not the job's", ESA_CNT_DROP_MALFORMED, 1, m_fan_job },
	{ "count 0", ESA_CNT_DROP_MALFORMED, 0, m_count0 },
	{ "count 364", ESA_CNT_DROP_MALFORMED, 0, m_count364 },
	{ "count vs udp length", ESA_CNT_DROP_TRUNCATED, 0, m_count_len },
	{ "udp length", ESA_CNT_DROP_TRUNCATED, 0, m_udp_len },
	{ "ip length", ESA_CNT_DROP_TRUNCATED, 0, m_ip_len },
	{ "truncated values", ESA_CNT_DROP_TRUNCATED, 0, m_trunc },
	{ "truncated header", ESA_CNT_DROP_TRUNCATED, 0, m_trunc_hdr },
	{ "cut inside the UDP header", ESA_CNT_DROP_TRUNCATED, 0, m_trunc_udp },
	{ "job 0", ESA_CNT_DROP_UNKNOWN_JOB, 0, m_job0 },
	{ "unknown job", ESA_CNT_DROP_UNKNOWN_JOB, 0, m_job_unknown },
	{ "job > 1023", ESA_CNT_DROP_UNKNOWN_JOB, 0, m_job_big },
	{ "two worker bits", ESA_CNT_DROP_MALFORMED, 1, m_bits2 },
	{ "no worker bit", ESA_CNT_DROP_MALFORMED, 1, m_bits0 },
	{ "worker bit >= fan_in", ESA_CNT_DROP_MALFORMED, 1, m_bit_fan },
	{ "wrong source address", ESA_CNT_DROP_PORT, 1, m_src_ip },
	{ "wrong source port", ESA_CNT_DROP_PORT, 1, m_src_port },
	{ "index >= agg_slots", ESA_CNT_DROP_RANGE, 1, m_index },
	{ "index huge", ESA_CNT_DROP_RANGE, 1, m_index_big },
	{ "IPv4 options", ESA_CNT_DROP_MALFORMED, 0, m_ip_opts },
};

TEST_F(dp, bad_packets_dropped_counted_untouched)
{
	static struct esa_agg before[DP_SLOTS], after[DP_SLOTS];
	unsigned int i;

	fill(self->v, 64, 3, 1);
	/* residents on the slots the bad packets aim at */
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 5, .idx = 0));
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 5, .idx = 1));
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		__u64 g = dp_cnt(self->sw, 0, c->counter);
		__u64 j = dp_cnt(self->sw, 1, c->counter);
		__u64 rx = dp_cnt(self->sw, 0, ESA_CNT_RX);

		snapshot(self->sw, before);
		dp_pkt_worker(&self->p, 1, 3, 0, 5, 0, self->v, 64);
		dp_build(&self->in, &self->p);
		c->mutate(&self->in);
		EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out))
			TH_LOG("%s: verdict", c->what);
		EXPECT_EQ(g + 1, dp_cnt(self->sw, 0, c->counter))
			TH_LOG("%s: global counter", c->what);
		EXPECT_EQ(j + c->job_level, dp_cnt(self->sw, 1, c->counter))
			TH_LOG("%s: job counter", c->what);
		EXPECT_EQ(rx + 1, dp_cnt(self->sw, 0, ESA_CNT_RX))
			TH_LOG("%s: rx", c->what);
		snapshot(self->sw, after);
		EXPECT_EQ(0, memcmp(before, after, sizeof(before)))
			TH_LOG("%s: an aggregator changed", c->what);
	}
}

/*
 * The job records are an array by job id: a deleted job's record stays in
 * the array, zeroed, and must not be taken for the job (its packets are
 * unknown-job drops, its slot untouched), nor for another id.
 */
TEST_F(dp, deleted_job_dropped_as_unknown)
{
	struct esa_job_info j;
	struct esa_agg before, after;
	__u64 unknown = dp_cnt(self->sw, 0, ESA_CNT_DROP_UNKNOWN_JOB);

	fill(self->v, 64, 3, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 0));
	ASSERT_EQ(0, esa_switch_job_del(self->sw, 1));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(self->sw, 1, &j));
	EXPECT_EQ(-ENOENT, esa_switch_job_del(self->sw, 1));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(self->sw, 0, &j));
	ASSERT_EQ(0, agg(self, 0, &before));
	EXPECT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 5, .idx = 0));
	EXPECT_EQ(unknown + 1, dp_cnt(self->sw, 0, ESA_CNT_DROP_UNKNOWN_JOB));
	ASSERT_EQ(0, agg(self, 0, &after));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
	/* job 2 is still there, and job 1 can be added again */
	EXPECT_EQ(0, esa_switch_job_get(self->sw, 2, &j));
	EXPECT_EQ(2, j.job_id);
	dp_job(&j, 1, 3, 1, 0, 0);
	EXPECT_EQ(0, esa_switch_job_put(self->sw, &j));
	EXPECT_EQ(0, esa_switch_job_get(self->sw, 1, &j));
}

/*
 * Job 1 deleted and added again through the control plane aggctl uses
 * (esa_switch_commit()), @fan_in workers, priority @prio.
 */
static int readd_job1(struct esa_switch *sw, __u8 fan_in, __u8 prio)
{
	struct esa_job_info j;

	dp_job(&j, 1, fan_in, prio, 0, 0);
	return esa_switch_commit(sw, NULL, NULL, 1, NULL) ?:
	       esa_switch_commit(sw, NULL, &j, 0, NULL);
}

/*
 * A job added again under its old id starts from nothing: the partial its
 * predecessor left on the slot is neither added to the new sum nor counts
 * its worker as a duplicate, and the new job holds only what it claimed.
 */
TEST_F(dp, reused_job_id_starts_afresh)
{
	int i, wrong = 0;

	fill(self->v, 64, 1000, 7);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 4));
	ASSERT_EQ(0, readd_job1(self->sw, 3, 1));
	fill(self->w, 64, -3, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 4,
				     .values = self->w));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 5, .idx = 4,
				     .values = self->w));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 2, .seq = 5, .idx = 4,
					 .values = self->w));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	EXPECT_EQ(7, self->o.h.worker_bitmap);
	for (i = 0; i < 64; i++)
		wrong += self->o.values[i] != 3 * (-3 + i);
	EXPECT_EQ(0, wrong) TH_LOG("%d of 64 sums wrong", wrong);
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_DUPLICATES));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_EVICTIONS));
	/* the new job claimed the slot and gave it back: it holds none */
	EXPECT_EQ(0, dp_occupancy(self->sw, 1));
}

/*
 * What a deleted job held is nobody's: another job that takes the slot
 * sends the old partial nowhere, not to the PS of the id's new job, and
 * the old job's release does not count against the new one.
 */
TEST_F(dp, deleted_jobs_partial_goes_nowhere)
{
	fill(self->v, 64, 1000, 7);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 5, .idx = 9));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 6, .idx = 10));
	ASSERT_EQ(0, readd_job1(self->sw, 3, 1));
	EXPECT_EQ(0, dp_occupancy(self->sw, 1));
	/* job 2 takes slot 9: absorbed, no PREEMPTED frame to job 1's PS */
	fill(self->w, 64, 1, 1);
	EXPECT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 77, .idx = 9,
				     .values = self->w));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_EVICTIONS));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_AGGREGATED));
	EXPECT_EQ(1, dp_occupancy(self->sw, 2));
	/* the new job 1 takes slot 10 and holds it, once */
	EXPECT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 6, .idx = 10,
				     .values = self->w));
	EXPECT_EQ(1, dp_occupancy(self->sw, 1));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_DUPLICATES));
}

/*
 * The record that a worker's values left the switch (a collision) belongs
 * to its job's incarnation: the id's next job sums that sequence on the
 * switch in full, not as a partial the PS would wait to complete.
 */
TEST_F(dp, reused_job_id_ignores_gone_records)
{
	int i, wrong = 0;

	fill(self->v, 64, 1, 0);
	/* job 2 holds slot 3; job 1's worker 0 collides: recorded gone */
	ASSERT_EQ(XDP_DROP, send_job(self, 2, .w = 0, .seq = 8, .idx = 3));
	send_job(self, 1, .w = 0, .seq = 4, .idx = 3);
	ASSERT_EQ(1, gone_of(self, 3, 1, 4));
	send_job(self, 2, .w = 1, .seq = 8, .idx = 3);
	ASSERT_EQ(0, readd_job1(self->sw, 3, 1));
	fill(self->w, 64, 10, 1);
	EXPECT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 4, .idx = 3,
				     .values = self->w));
	EXPECT_EQ(XDP_DROP, send_job(self, 1, .w = 2, .seq = 4, .idx = 3,
				     .values = self->w));
	ASSERT_EQ(XDP_REDIRECT, send_job(self, 1, .w = 0, .seq = 4, .idx = 3,
					 .values = self->w));
	ASSERT_EQ(ESA_F_COMPLETE, out_flags(self));
	for (i = 0; i < 64; i++)
		wrong += self->o.values[i] != 3 * (10 + i);
	EXPECT_EQ(0, wrong) TH_LOG("%d of 64 sums wrong", wrong);
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_EARLY_PARTIALS));
}

/*
 * Without the module a fixed job competes with its configured priority,
 * whatever its packets stamp: job 1 fixed at 0 stamping 255 does not
 * preempt job 2 fixed at 200, and job 2 stamping 0 still preempts job 1.
 * An auto job competes with what its packets stamp.
 */
TEST_F(dp, fixed_priority_from_the_config)
{
	struct esa_job_info j;
	struct esa_agg a;

	dp_job(&j, 1, 3, 0, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &j));
	dp_job(&j, 2, 2, 200, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &j));
	fill(self->v, 64, 1, 0);
	ASSERT_EQ(XDP_DROP, send_w(self, .job = 2, .fan_in = 2, .w = 0,
				   .seq = 8, .idx = 5));
	send_w(self, .job = 1, .fan_in = 3, .w = 0, .seq = 4, .idx = 5,
	       .priority = 255);
	ASSERT_EQ(ESA_F_COLLISION, out_flags(self));
	ASSERT_EQ(0, agg(self, 5, &a));
	EXPECT_EQ(2, a.job_id);
	EXPECT_EQ(200, a.priority);
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_PREEMPTIONS));

	ASSERT_EQ(XDP_DROP, send_w(self, .job = 1, .fan_in = 3, .w = 0,
				   .seq = 4, .idx = 6, .priority = 255));
	ASSERT_EQ(0, agg(self, 6, &a));
	EXPECT_EQ(0, a.priority);
	send_w(self, .job = 2, .fan_in = 2, .w = 0, .seq = 9, .idx = 6);
	ASSERT_EQ(0, agg(self, 6, &a));
	EXPECT_EQ(2, a.job_id);
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_PREEMPTIONS));

	/* job 1 auto: its packets' 255 beats job 2's recorded 200 */
	ASSERT_EQ(0, esa_switch_job_get(self->sw, 1, &j));
	j.prio_mode = ESA_PRIO_DYNAMIC;
	ASSERT_EQ(0, esa_switch_job_put(self->sw, &j));
	send_w(self, .job = 1, .fan_in = 3, .w = 0, .seq = 7, .idx = 5,
	       .priority = 255);
	ASSERT_EQ(0, agg(self, 5, &a));
	EXPECT_EQ(1, a.job_id);
	EXPECT_EQ(255, a.priority);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_PREEMPTIONS));
}

TEST_F(dp, value_count_mismatch_dropped)
{
	struct esa_agg a, b;

	fill(self->v, 100, 1, 1);
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 0, .seq = 1, .idx = 2));
	ASSERT_EQ(0, agg(self, 2, &a));
	ASSERT_EQ(XDP_DROP, send_job(self, 1, .w = 1, .seq = 1, .idx = 2,
				     .count = 100));
	ASSERT_EQ(0, agg(self, 2, &b));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_MALFORMED));
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };

	if (dp_load_or_fail(&g_sw, &o))
		return 1;
	return test_harness_run(argc, argv);
}
