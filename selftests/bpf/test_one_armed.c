// SPDX-License-Identifier: GPL-2.0
/*
 * One-armed ports under BPF_PROG_TEST_RUN (Documentation/dataplane.rst,
 * "One-armed ports"), module-less flavour: what the XDP program takes on a
 * one-armed port (aggregation traffic to the port's address), what it
 * passes to the server's stack untouched, what it drops as traffic for
 * the other mode (on either kind of port), and how it hands a sum to the
 * fan-out: readdressed from the port's address, its recipients in
 * esa_oa_jobs, the marker in the frame's XDP metadata. The port is lo
 * (ifindex 1, where a test run's frames come in), made one-armed by
 * writing the port table as the loader does; the copies themselves are
 * made by esa_fanout on a real port (selftests/netns/test_one_armed.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"

#define PORT		1		/* lo: a test run's ingress */
#define SW_ADDR		0x0a4d00feu	/* the port's address (host order) */
#define JOB		2
#define FAN		3
/* A one-armed port takes only jobs with a token: JOB has this one. */
#define TOKEN		0x0123456789abcdefULL

static struct esa_switch *g_sw;

/* Port PORT one-armed at SW_ADDR (@on), or per-host with SW_ADDR kept as
 * a one-armed address of the switch (another port's). */
static int set_role(int on)
{
	struct esa_port_role r = { .role = ESA_PORT_ONE_ARMED,
				   .addr = htonl(SW_ADDR) };
	__u32 key = PORT;
	int roles = esa_switch_map_fd(g_sw, "esa_port_roles");
	int addrs = esa_switch_map_fd(g_sw, "esa_oa_addrs");

	if (bpf_map_update_elem(addrs, &r.addr, &key, 0))
		return -errno;
	if (on)
		return bpf_map_update_elem(roles, &key, &r, 0) ? -errno : 0;
	return bpf_map_delete_elem(roles, &key) && errno != ENOENT ? -errno : 0;
}

/* Worker @w's packet of @seq to the switch's address. */
static void to_switch(struct dp_frame *f, int w, __u32 seq, const __s32 *v,
		      __u16 n)
{
	struct dp_pkt p;

	dp_pkt_worker(&p, JOB, FAN, w, seq, seq % 4, v, n);
	p.daddr = SW_ADDR;
	p.token = TOKEN;
	dp_build(f, &p);
}

/* JOB under @policy, with the token @token (0: none). */
static void put_job_token(struct __test_metadata *_metadata, __u32 policy,
			  __u64 token)
{
	struct esa_switch_config cfg = { .policy = policy,
					 .agg_slots = DP_SLOTS };
	struct esa_rules_err err = {};
	struct esa_job_info job;

	ASSERT_EQ(0, dp_reset(g_sw, policy, DP_SLOTS, 0));
	dp_job(&job, JOB, FAN, 1, 0, policy == ESA_POLICY_STATIC ? 8 : 0);
	job.token = token;
	ASSERT_EQ(0, esa_switch_commit(g_sw, &cfg, &job, 0, &err))
		TH_LOG("%s", err.msg ? err.msg : "");
}

static void put_job(struct __test_metadata *_metadata, __u32 policy)
{
	put_job_token(_metadata, policy, TOKEN);
}

FIXTURE(oa) {
	struct dp_frame in, out;
	struct esa_oa_meta meta;
	__u32 meta_len;
	struct dp_out o;
};

/*
 * Run the switch on self->in from PORT; the output frame into self->out
 * and its XDP metadata (if any, a marker) into self->meta. Returns the
 * verdict.
 */
static int run(FIXTURE_DATA(oa) *self)
{
	const struct dp_frame *in = &self->in;
	struct dp_frame *out = &self->out;
	struct esa_oa_meta *meta = &self->meta;
	static __u8 buf[DP_FRAME_MAX + 64];
	struct xdp_md md = { .data_end = in->len, .ingress_ifindex = PORT };
	struct xdp_md md_out = {};
	LIBBPF_OPTS(bpf_test_run_opts, t,
		    .data_in = in->buf, .data_size_in = in->len,
		    .data_out = buf, .data_size_out = sizeof(buf),
		    .ctx_in = &md, .ctx_size_in = sizeof(md),
		    .ctx_out = &md_out, .ctx_size_out = sizeof(md_out),
		    .repeat = 1);

	if (bpf_prog_test_run_opts(esa_switch_prog_fd(g_sw), &t))
		return -errno;
	self->meta_len = md_out.data;
	memset(meta, 0, sizeof(*meta));
	if (md_out.data == sizeof(*meta))
		memcpy(meta, buf, sizeof(*meta));
	out->len = t.data_size_out - md_out.data;
	memcpy(out->buf, buf + md_out.data, out->len);
	return t.retval;
}

/* Build @p into self->in and run the switch on it, as run(). */
static int run_pkt(FIXTURE_DATA(oa) *self, const struct dp_pkt *p)
{
	dp_build(&self->in, p);
	return run(self);
}

FIXTURE_SETUP(oa)
{
	put_job(_metadata, ESA_POLICY_ESA);
	ASSERT_EQ(0, set_role(1));
}

FIXTURE_TEARDOWN(oa)
{
	__u32 key = PORT;

	bpf_map_delete_elem(esa_switch_map_fd(g_sw, "esa_port_roles"), &key);
}

/* Everything that is not aggregation traffic goes to the stack, as it was. */
TEST_F(oa, other_traffic_passes_untouched)
{
	static const __u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06,
	};

	dp_build_l4(&self->in, IPPROTO_UDP, 64, 5, DP_CSUM_FULL, 7);
	EXPECT_EQ(XDP_PASS, run(self));
	EXPECT_EQ(self->in.len, self->out.len);
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	EXPECT_EQ(0, self->meta_len);
	memcpy(self->in.buf, arp, sizeof(arp));
	self->in.len = sizeof(arp);
	EXPECT_EQ(XDP_PASS, run(self));
	EXPECT_EQ(0, self->meta_len);
	/* nothing switched, learned or counted */
	EXPECT_EQ(0, dp_cnt(g_sw, 0, ESA_CNT_FORWARDED));
	EXPECT_EQ(0, dp_cnt(g_sw, 0, ESA_CNT_RX));
}

/* UDP to ESA_UDP_PORT at another address: for the other mode. */
TEST_F(oa, aggregation_to_another_address_is_drop_mode)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };
	struct dp_pkt p;

	dp_pkt_worker(&p, JOB, FAN, 0, 0, 0, v, 4);	/* to the PS */
	p.token = TOKEN;
	EXPECT_EQ(XDP_DROP, run_pkt(self, &p));
	EXPECT_EQ(1, dp_cnt(g_sw, 0, ESA_CNT_DROP_MODE));
	EXPECT_EQ(1, dp_cnt(g_sw, 0, ESA_CNT_RX));
	EXPECT_EQ(0, dp_cnt(g_sw, JOB, ESA_CNT_AGGREGATED));
}

/* The one-armed address on a per-host port: for the other mode too. */
TEST_F(oa, one_armed_address_on_per_host_port_is_drop_mode)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };

	ASSERT_EQ(0, set_role(0));
	to_switch(&self->in, 0, 0, v, 4);
	EXPECT_EQ(XDP_DROP, run(self));
	EXPECT_EQ(1, dp_cnt(g_sw, 0, ESA_CNT_DROP_MODE));
	EXPECT_EQ(0, dp_cnt(g_sw, JOB, ESA_CNT_AGGREGATED));
}

/* Options or a fragment at the port's address: malformed, as per-host. */
TEST_F(oa, options_at_the_address_are_malformed)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };

	to_switch(&self->in, 0, 0, v, 4);
	self->in.buf[20] = 0x20;	/* more fragments */
	EXPECT_EQ(XDP_DROP, run(self));
	EXPECT_EQ(1, dp_cnt(g_sw, 0, ESA_CNT_DROP_MALFORMED));
}

/* A member check holds as on a per-host port: worker 1 claiming bit 0. */
TEST_F(oa, member_checks_hold)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };
	struct dp_pkt p;

	dp_pkt_worker(&p, JOB, FAN, 1, 0, 0, v, 4);
	p.bitmap = 1;
	p.daddr = SW_ADDR;
	p.token = TOKEN;
	EXPECT_EQ(XDP_DROP, run_pkt(self, &p));
	EXPECT_EQ(1, dp_cnt(g_sw, JOB, ESA_CNT_DROP_PORT));
}

/*
 * A sum completed under esa: from the switch's address to the PS as
 * COMPLETE, marked for the PS and every worker, the job's recipients
 * written for esa_fanout.
 */
TEST_F(oa, complete_is_marked_for_ps_and_workers)
{
	__s32 v[FAN][8], sum[8];
	struct esa_oa_members m;
	__u32 key = JOB;
	int w, i, ret;

	for (i = 0; i < 8; i++) {
		sum[i] = 0;
		for (w = 0; w < FAN; w++) {
			v[w][i] = (w + 1) * 1000 - i * 7 - (i & 1 ? 100000 : 0);
			sum[i] += v[w][i];
		}
	}
	for (w = 0; w < FAN; w++) {
		to_switch(&self->in, w, 5, v[w], 8);
		ret = run(self);
		if (w < FAN - 1)
			ASSERT_EQ(XDP_DROP, ret);
	}
	ASSERT_EQ(XDP_PASS, ret);
	ASSERT_EQ(sizeof(self->meta), self->meta_len);
	EXPECT_EQ(ESA_OA_META_MAGIC, self->meta.magic);
	EXPECT_EQ(JOB, self->meta.job_id);
	EXPECT_EQ(1, self->meta.to_ps);
	EXPECT_EQ(ESA_FULL_BITMAP(FAN), self->meta.workers);
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(ESA_F_COMPLETE, self->o.h.flags);
	EXPECT_EQ(SW_ADDR, self->o.saddr);
	EXPECT_EQ(DP_PS_ADDR(JOB), self->o.daddr);
	EXPECT_EQ(ESA_UDP_PORT, self->o.sport);
	EXPECT_EQ(ESA_UDP_PORT, self->o.dport);
	EXPECT_EQ(0, self->o.udp_csum);
	EXPECT_TRUE(self->o.ip_csum_ok);
	EXPECT_EQ(0, memcmp(sum, self->o.values, sizeof(sum)));
	ASSERT_EQ(0, bpf_map_lookup_elem(esa_switch_map_fd(g_sw, "esa_oa_jobs"),
					 &key, &m));
	EXPECT_EQ(JOB, m.job_id);
	EXPECT_EQ(self->meta.incarnation, m.incarnation);
	EXPECT_NE(0, m.incarnation);
	EXPECT_EQ(FAN, m.fan_in);
	EXPECT_EQ(htonl(DP_PS_ADDR(JOB)), m.ps_addr);
	for (w = 0; w < FAN; w++) {
		EXPECT_EQ(htonl(DP_WORKER_ADDR(JOB, w)), m.worker_addr[w]);
		EXPECT_EQ(htons(DP_WORKER_PORT(JOB, w)), m.worker_port[w]);
	}
	EXPECT_EQ(1, dp_cnt(g_sw, JOB, ESA_CNT_RESULTS));
}

/*
 * Under atp: the COMPLETE goes to the PS alone (marked for it, no
 * workers); the PS's RESULT to the switch's address is marked for every
 * worker, its pull for the workers of its bitmap.
 */
TEST_F(oa, atp_complete_result_and_pull)
{
	__s32 v[4] = { 10, -20, 30, -40 }, r[4];
	struct dp_pkt p;
	int w, ret = 0, i;

	put_job(_metadata, ESA_POLICY_ATP);
	ASSERT_EQ(0, set_role(1));
	for (w = 0; w < FAN; w++) {
		to_switch(&self->in, w, 9, v, 4);
		ret = run(self);
	}
	ASSERT_EQ(XDP_PASS, ret);
	EXPECT_EQ(1, self->meta.to_ps);
	EXPECT_EQ(0, self->meta.workers);
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(DP_PS_ADDR(JOB), self->o.daddr);
	EXPECT_EQ(SW_ADDR, self->o.saddr);
	EXPECT_EQ(ESA_F_COMPLETE, self->o.h.flags);

	for (i = 0; i < 4; i++)
		r[i] = v[i] * FAN;
	dp_pkt_result(&p, JOB, FAN, 9, 9 % 4, r, 4);
	p.daddr = SW_ADDR;
	p.token = TOKEN;
	ASSERT_EQ(XDP_PASS, run_pkt(self, &p));
	EXPECT_EQ(0, self->meta.to_ps);
	EXPECT_EQ(ESA_FULL_BITMAP(FAN), self->meta.workers);
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(SW_ADDR, self->o.saddr);
	EXPECT_EQ(ESA_UDP_PORT, self->o.sport);
	EXPECT_EQ(0, memcmp(r, self->o.values, sizeof(r)));

	p.flags = ESA_F_RESULT | ESA_F_RESEND;		/* a pull for worker 1 */
	p.bitmap = 2;
	ASSERT_EQ(XDP_PASS, run_pkt(self, &p));
	EXPECT_EQ(2, self->meta.workers);
	EXPECT_EQ(1, dp_cnt(g_sw, JOB, ESA_CNT_PULLS));
}

/* A RESULT to the switch's address from a host that is not the PS. */
TEST_F(oa, result_from_a_non_ps_is_dropped)
{
	static const __s32 r[4] = { 1, 2, 3, 4 };
	struct dp_pkt p;

	dp_pkt_result(&p, JOB, FAN, 1, 1, r, 4);
	p.saddr = DP_WORKER_ADDR(JOB, 1);
	p.daddr = SW_ADDR;
	p.token = TOKEN;
	EXPECT_EQ(XDP_DROP, run_pkt(self, &p));
	EXPECT_EQ(1, dp_cnt(g_sw, JOB, ESA_CNT_DROP_PORT));
	EXPECT_EQ(0, self->meta_len);
}

/*
 * A job without a token cannot use a one-armed port: its members' frames
 * (version 1, as the job asks) are DROP_TOKEN there, nothing summed.
 */
TEST_F(oa, job_without_token_is_drop_token)
{
	static const __s32 v[4] = { 1, 2, 3, 4 };
	struct dp_pkt p;

	put_job_token(_metadata, ESA_POLICY_ESA, 0);
	ASSERT_EQ(0, set_role(1));
	dp_pkt_worker(&p, JOB, FAN, 0, 0, 0, v, 4);
	p.daddr = SW_ADDR;
	EXPECT_EQ(XDP_DROP, run_pkt(self, &p));
	EXPECT_EQ(1, dp_cnt(g_sw, JOB, ESA_CNT_DROP_TOKEN));
	EXPECT_EQ(0, dp_cnt(g_sw, JOB, ESA_CNT_AGGREGATED));
	EXPECT_EQ(0, self->meta_len);
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };

	if (dp_load_or_fail(&g_sw, &o))
		return 1;
	return test_harness_run(argc, argv);
}
