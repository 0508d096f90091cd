// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_PROG_TEST_RUN fixture tests of the job token (Documentation/
 * security.rst, wire-protocol.rst "The token trailer"), module-less
 * flavour: a frame of a job with a token is summed only with the job's
 * token; a wrong or missing one, or a version that does not fit the job,
 * is dropped as soon as the job is known, counted DROP_TOKEN, with no
 * aggregator touched; every frame the switch sends for a job with a token
 * carries it (a sum in place, an evicted partial its own job's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"

#define TOKEN1	0x0123456789abcdefULL	/* job 1's */
#define TOKEN3	0xfedcba9876543210ULL	/* job 3's */

static struct esa_switch *g_sw;

FIXTURE(tok) {
	struct esa_switch *sw;
	struct dp_frame in, out;
	struct dp_out o;
	struct dp_pkt p;
	__s32 v[ESA_MAX_VALUES], w[ESA_MAX_VALUES];
	struct esa_agg before[DP_SLOTS];
};

/*
 * Job 1: 3 workers, priority 1, TOKEN1; job 2: 2 workers, priority 5, no
 * token; job 3: 2 workers, priority 9, TOKEN3.
 */
static int token_jobs(struct esa_switch *sw)
{
	struct esa_job_info job;
	int err;

	dp_job(&job, 1, 3, 1, 0, 0);
	job.token = TOKEN1;
	err = esa_switch_job_put(sw, &job);
	dp_job(&job, 2, 2, 5, 0, 0);
	err = err ?: esa_switch_job_put(sw, &job);
	dp_job(&job, 3, 2, 9, 0, 0);
	job.token = TOKEN3;
	return err ?: esa_switch_job_put(sw, &job);
}

/* The PS of job @j learned on a port, so a frame to it is XDP_TX. */
static int learn_ps(struct esa_switch *sw, __u32 j)
{
	struct esa_neigh n = { .ifindex = 1, .mac = { 2, 0xaa, 0, 0, 0, j } };
	__be32 ps = htonl(DP_PS_ADDR(j));

	if (bpf_map_update_elem(esa_switch_map_fd(sw, "esa_neigh"), &ps, &n, 0))
		return -1;
	return esa_switch_learned_changed(sw);
}

FIXTURE_SETUP(tok)
{
	self->sw = g_sw;
	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ESA, DP_SLOTS, 0));
	ASSERT_EQ(0, token_jobs(self->sw));
}

FIXTURE_TEARDOWN(tok)
{
}

static void fill(__s32 *v, int n, __s32 base, __s32 step)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = base + step * i;
}

/* Worker w of job j sends seq, slot, n values with @token; the verdict. */
static int send_tok(FIXTURE_DATA(tok) *self, __u32 j, __u8 fan_in, int w,
		    __u32 seq, __u32 idx, const __s32 *v, __u16 n,
		    __u64 token)
{
	dp_pkt_worker(&self->p, j, fan_in, w, seq, idx, v, n);
	self->p.token = token;
	dp_build(&self->in, &self->p);
	return dp_run(self->sw, &self->in, &self->out);
}

static void snapshot(struct esa_switch *sw, struct esa_agg *s)
{
	__u32 i;

	for (i = 0; i < DP_SLOTS; i++)
		esa_switch_agg_read(sw, i, &s[i]);
}

static int aggs_unchanged(struct esa_switch *sw, const struct esa_agg *s)
{
	struct esa_agg a;
	__u32 i;

	for (i = 0; i < DP_SLOTS; i++)
		if (esa_switch_agg_read(sw, i, &a) || memcmp(&a, &s[i], sizeof(a)))
			return 0;
	return 1;
}

/* The members' token: summed; the COMPLETE carries it, checksum right. */
TEST_F(tok, right_token_summed_and_carried)
{
	int i;

	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_tok(self, 1, 3, 0, 5, 2, self->v, 64, TOKEN1));
	ASSERT_EQ(XDP_DROP, send_tok(self, 1, 3, 1, 5, 2, self->v, 64, TOKEN1));
	ASSERT_EQ(XDP_REDIRECT, send_tok(self, 1, 3, 2, 5, 2, self->v, 64, TOKEN1));
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(ESA_F_COMPLETE, self->o.h.flags);
	EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, self->o.h.version);
	EXPECT_EQ(TOKEN1, self->o.token);
	EXPECT_EQ(7, self->o.h.worker_bitmap);
	EXPECT_EQ(62 + 4 * 64 + ESA_TOKEN_LEN, self->out.len);
	EXPECT_EQ(8 + ESA_HDR_LEN + 4 * 64 + ESA_TOKEN_LEN, self->o.udp_len);
	EXPECT_EQ(20 + 8 + ESA_HDR_LEN + 4 * 64 + ESA_TOKEN_LEN, self->o.ip_len);
	EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(3 * (1 + i), self->o.values[i]);
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_DROP_TOKEN));
}

/*
 * A wrong token, a frame without one (version 1), and a version-2 frame
 * of a job without a token: dropped, counted DROP_TOKEN for the job and
 * switch-wide (and RX), no aggregator touched; the sum of the members
 * afterwards is theirs alone.
 */
TEST_F(tok, wrong_or_missing_token_dropped_counted)
{
	static const struct {
		const char *what;
		__u32 job;
		__u8 fan_in;
		__u64 token;
	} cases[] = {
		{ "wrong token", 1, 3, TOKEN1 ^ 1 },
		{ "another job's token", 1, 3, TOKEN3 },
		{ "no token (version 1)", 1, 3, 0 },
		{ "version 2 for a job without a token", 2, 2, TOKEN1 },
	};
	unsigned int k;
	int i;

	fill(self->v, 64, 1000, 0);
	fill(self->w, 64, 1, 1);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		__u32 j = cases[k].job;
		__u64 g = dp_cnt(self->sw, 0, ESA_CNT_DROP_TOKEN);
		__u64 jt = dp_cnt(self->sw, j, ESA_CNT_DROP_TOKEN);
		__u64 rx = dp_cnt(self->sw, j, ESA_CNT_RX);

		snapshot(self->sw, self->before);
		EXPECT_EQ(XDP_DROP, send_tok(self, j, cases[k].fan_in, 0, 5, 2,
					     self->v, 64, cases[k].token))
			TH_LOG("%s: verdict", cases[k].what);
		EXPECT_EQ(g + 1, dp_cnt(self->sw, 0, ESA_CNT_DROP_TOKEN))
			TH_LOG("%s: switch-wide count", cases[k].what);
		EXPECT_EQ(jt + 1, dp_cnt(self->sw, j, ESA_CNT_DROP_TOKEN))
			TH_LOG("%s: job count", cases[k].what);
		EXPECT_EQ(rx + 1, dp_cnt(self->sw, j, ESA_CNT_RX))
			TH_LOG("%s: part of RX", cases[k].what);
		EXPECT_TRUE(aggs_unchanged(self->sw, self->before))
			TH_LOG("%s: an aggregator changed", cases[k].what);
	}
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_AGGREGATED));
	/* the members' own sum: none of the 1000s got in */
	ASSERT_EQ(XDP_DROP, send_tok(self, 1, 3, 0, 5, 2, self->w, 64, TOKEN1));
	ASSERT_EQ(XDP_DROP, send_tok(self, 1, 3, 1, 5, 2, self->w, 64, TOKEN1));
	ASSERT_EQ(XDP_REDIRECT, send_tok(self, 1, 3, 2, 5, 2, self->w, 64, TOKEN1));
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(3 * (1 + i), self->o.values[i]);
	/* a job without a token still takes version 1 */
	ASSERT_EQ(XDP_DROP, send_tok(self, 2, 2, 0, 5, 3, self->w, 64, 0));
	EXPECT_EQ(1, dp_cnt(self->sw, 2, ESA_CNT_AGGREGATED));
}

/*
 * The token is checked before anything else of the job: a host that is
 * not a member and has no token learns nothing from which check failed
 * (DROP_TOKEN, not DROP_PORT); with the token, the member check follows.
 */
TEST_F(tok, token_checked_before_member_check)
{
	fill(self->v, 64, 1, 0);
	dp_pkt_worker(&self->p, 1, 3, 0, 5, 2, self->v, 64);
	self->p.saddr = 0x0a4d6363;
	self->p.token = TOKEN1 ^ 0x8000;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_TOKEN));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_DROP_PORT));
	self->p.token = TOKEN1;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_TOKEN));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_DROP_PORT));
}

/*
 * Under atp the PS's RESULT and its pulls reach the workers only with the
 * job's token, and leave with it.
 */
TEST_F(tok, ps_result_and_pull_need_the_token)
{
	fill(self->v, 64, 9, 1);
	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 0));
	ASSERT_EQ(0, token_jobs(self->sw));
	dp_pkt_result(&self->p, 1, 3, 4, 1, self->v, 64);
	self->p.token = TOKEN3;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	self->p.token = 0;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	self->p.flags |= ESA_F_RESEND;
	self->p.token = TOKEN1 + 1;
	dp_build(&self->in, &self->p);
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(3, dp_cnt(self->sw, 1, ESA_CNT_DROP_TOKEN));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
	EXPECT_EQ(0, dp_cnt(self->sw, 1, ESA_CNT_PULLS));
	self->p.flags = ESA_F_RESULT;
	self->p.token = TOKEN1;
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, self->o.h.version);
	EXPECT_EQ(TOKEN1, self->o.token);
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_RESULTS));
	self->p.flags = ESA_F_RESULT | ESA_F_RESEND;
	dp_build(&self->in, &self->p);
	ASSERT_EQ(XDP_REDIRECT, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_PULLS));
}

/*
 * The lengths count the trailer: ESA_MAX_VALUES_TOKEN values fit, one
 * more is malformed; a trailer the lengths leave out (or a frame cut
 * inside it) is truncated.
 */
TEST_F(tok, lengths_count_the_trailer)
{
	fill(self->v, ESA_MAX_VALUES, 1, 0);
	EXPECT_EQ(XDP_DROP, send_tok(self, 1, 3, 0, 5, 2, self->v,
				     ESA_MAX_VALUES_TOKEN, TOKEN1));
	EXPECT_EQ(1, dp_cnt(self->sw, 1, ESA_CNT_AGGREGATED));
	EXPECT_EQ(XDP_DROP, send_tok(self, 1, 3, 1, 5, 3, self->v,
				     ESA_MAX_VALUES_TOKEN + 1, TOKEN1));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_DROP_MALFORMED));
	/* the UDP and IPv4 lengths without the trailer */
	dp_pkt_worker(&self->p, 1, 3, 1, 5, 3, self->v, 64);
	self->p.token = TOKEN1;
	dp_build(&self->in, &self->p);
	self->in.buf[17] -= ESA_TOKEN_LEN;	/* IPv4 total length */
	self->in.buf[39] -= ESA_TOKEN_LEN;	/* UDP length */
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(1, dp_cnt(self->sw, 0, ESA_CNT_DROP_TRUNCATED));
	/* cut inside the trailer */
	dp_build(&self->in, &self->p);
	self->in.len -= 3;
	EXPECT_EQ(XDP_DROP, dp_run(self->sw, &self->in, &self->out));
	EXPECT_EQ(2, dp_cnt(self->sw, 0, ESA_CNT_DROP_TRUNCATED));
	EXPECT_EQ(0, dp_cnt(self->sw, 0, ESA_CNT_DROP_TOKEN));
}

/*
 * An eviction turns the evictor's frame into the victim's partial: the
 * victim's token (or none) goes after the victim's values, whatever the
 * evictor's frame carried; the lengths follow.
 */
TEST_F(tok, eviction_carries_the_victims_token)
{
	static const struct {
		const char *what;
		__u32 victim, evictor;
		__u8 vfan, efan;
		__u64 vtok, etok;
		__u16 vcount, ecount;
	} cases[] = {
		{ "token victim, token evictor", 1, 3, 3, 2, TOKEN1, TOKEN3, 64, 200 },
		{ "token victim, tokenless evictor", 1, 2, 3, 2, TOKEN1, 0, 200, 64 },
		{ "tokenless victim, token evictor", 2, 3, 2, 2, 0, TOKEN3, 100, 30 },
	};
	unsigned int k;
	int i;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		__u32 trailer = cases[k].vtok ? ESA_TOKEN_LEN : 0;
		__u16 n = cases[k].vcount;

		ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ESA, DP_SLOTS, 0));
		ASSERT_EQ(0, token_jobs(self->sw));
		ASSERT_EQ(0, learn_ps(self->sw, cases[k].victim));
		fill(self->v, n, 7, 2);
		fill(self->w, ESA_MAX_VALUES, -3, 1);
		ASSERT_EQ(XDP_DROP, send_tok(self, cases[k].victim, cases[k].vfan,
					     0, 5, 9, self->v, n, cases[k].vtok));
		ASSERT_EQ(XDP_TX, send_tok(self, cases[k].evictor, cases[k].efan,
					   1, 77, 9, self->w, cases[k].ecount,
					   cases[k].etok))
			TH_LOG("%s: verdict", cases[k].what);
		ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
		EXPECT_EQ(ESA_F_PREEMPTED, self->o.h.flags) TH_LOG("%s", cases[k].what);
		EXPECT_EQ(cases[k].victim, self->o.h.job_id);
		EXPECT_EQ(n, self->o.h.value_count);
		EXPECT_EQ(cases[k].vtok ? ESA_WIRE_VERSION_TOKEN : ESA_WIRE_VERSION,
			  self->o.h.version) TH_LOG("%s: version", cases[k].what);
		EXPECT_EQ(cases[k].vtok, self->o.token)
			TH_LOG("%s: token", cases[k].what);
		EXPECT_EQ(62 + 4 * n + trailer, self->out.len)
			TH_LOG("%s: frame length", cases[k].what);
		EXPECT_EQ(8 + ESA_HDR_LEN + 4 * n + trailer, self->o.udp_len);
		EXPECT_EQ(20 + 8 + ESA_HDR_LEN + 4 * n + trailer, self->o.ip_len);
		EXPECT_EQ(DP_PS_ADDR(cases[k].victim), self->o.daddr);
		EXPECT_TRUE(self->o.ip_csum_ok);
		for (i = 0; i < n; i++)
			ASSERT_EQ(7 + 2 * i, self->o.values[i]) TH_LOG("%s", cases[k].what);
		EXPECT_EQ(1, dp_cnt(self->sw, cases[k].victim, ESA_CNT_EVICTIONS));
	}
}

/*
 * A frame the switch sends on unaggregated (a collision under atp) is the
 * member's own: it keeps its token.
 */
TEST_F(tok, collision_keeps_the_token)
{
	ASSERT_EQ(0, dp_reset(self->sw, ESA_POLICY_ATP, DP_SLOTS, 0));
	ASSERT_EQ(0, token_jobs(self->sw));
	fill(self->v, 64, 1, 1);
	ASSERT_EQ(XDP_DROP, send_tok(self, 1, 3, 0, 1, 3, self->v, 64, TOKEN1));
	ASSERT_NE(XDP_DROP, send_tok(self, 3, 2, 1, 8, 3, self->v, 40, TOKEN3));
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(ESA_F_COLLISION, self->o.h.flags);
	EXPECT_EQ(3, self->o.h.job_id);
	EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, self->o.h.version);
	EXPECT_EQ(TOKEN3, self->o.token);
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };

	if (dp_load_or_fail(&g_sw, &o))
		return 1;
	return test_harness_run(argc, argv);
}
