// SPDX-License-Identifier: GPL-2.0
/*
 * Fixture table of the switch's egress step (esa_egress, the devmap
 * program that turns one multicast frame into a copy per port), under
 * BPF_PROG_TEST_RUN with no veth: for each kind of multicast frame and
 * each port, whether the copy is kept, and if so which flags and addresses
 * it leaves with (Documentation/dataplane.rst "Why multicast by devmap
 * broadcast", wire-protocol.rst "Addressing" and the pull rule).
 *
 * The step runs as bpf/esa_egress_port.bpf.c's plain XDP program (the
 * kernel does not test-run devmap programs; that file says why), compiled
 * from the switch's source and sharing the maps of a switch loaded here, so jobs
 * and learned hosts are set up as test_dataplane does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"
#include "esa_egress_port.skel.h"

/* Ports (ifindex values the egress step compares; no device needed). */
#define PORT_PS1	11		/* job 1's PS */
#define PORT_W1(i)	(20 + (i))	/* job 1's worker i; i = 3 is beyond its fan_in */
#define PORT_J2_W0	30		/* job 2's worker 0 */
#define PORT_PS2	31		/* job 2's PS */
#define PORT_EMPTY	40		/* nobody learned behind it */
#define FAN1		3

static struct esa_switch *g_sw;
static struct esa_egress_port_bpf *g_eg;

static void host_mac(__u8 *mac, __u32 addr)
{
	const __u8 m[6] = { 0x02, 0xcc, addr >> 24, addr >> 16, addr >> 8, addr };

	memcpy(mac, m, 6);
}

static int learn(__u32 addr, __u32 port)
{
	struct esa_neigh n = { .ifindex = port };
	__be32 key = htonl(addr);

	host_mac(n.mac, addr);
	if (bpf_map_update_elem(esa_switch_map_fd(g_sw, "esa_neigh"), &key,
				&n, 0))
		return -1;
	return esa_switch_learned_changed(g_sw);
}

/* Job 1 (fan_in 3) and job 2 (fan_in 2), their hosts learned on ports. */
static int setup_switch(void)
{
	struct esa_job_info job;
	int i, err;

	err = dp_reset(g_sw, ESA_POLICY_ESA, DP_SLOTS, 0);
	dp_job(&job, 1, FAN1, 1, 0, 0);
	err = err ?: esa_switch_job_put(g_sw, &job);
	dp_job(&job, 2, 2, 1, 0, 0);
	err = err ?: esa_switch_job_put(g_sw, &job);
	err = err ?: learn(DP_PS_ADDR(1), PORT_PS1);
	/* dp_job gives every index an address: worker 3 exists, beyond fan_in */
	for (i = 0; i <= FAN1; i++)
		err = err ?: learn(DP_WORKER_ADDR(1, i), PORT_W1(i));
	err = err ?: learn(DP_WORKER_ADDR(2, 0), PORT_J2_W0);
	err = err ?: learn(DP_PS_ADDR(2), PORT_PS2);
	return err;
}

/* The multicast frames the switch hands to the egress step. */
enum kind {
	COMPLETE,	/* esa/static completion: COMPLETE to the PS */
	COMPLETE_OVF,	/* ... whose sum saturated */
	RESULT,		/* the PS's RESULT (atp), passing through */
	RESULT_ECN,
	PULL_W1,	/* RESULT | RESEND asking worker 1 */
	PULL_W02,	/* ... asking workers 0 and 2 */
	UNKNOWN_JOB,
	/*
	 * Not multicast: sent to one port, or flooded, through the same devmap
	 * (the kernel would otherwise run them through the program of a
	 * multicast copy queued to the port before them): left as they are.
	 */
	TO_PS_PARTIAL,	/* a PARTIAL (early, flush) to the PS */
	TO_PS_COLLISION,
	L2_UDP,		/* ordinary UDP, not to ESA_UDP_PORT */
	L2_ARP,		/* shorter than an aggregation header */
	/*
	 * IPv4 fragments whose bytes look like a RESULT: data the ingress
	 * switched (a later part) or never a sum (a first part).
	 */
	FRAG_LATER,
	FRAG_FIRST,
};

static const __s32 vals[8] = { 7, -1, 0x7fffffff, (__s32)0x80000000, 0, 42, -42, 3 };

static void build(struct dp_frame *f, enum kind k)
{
	static const __u8 arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0xbb, 0, 0, 0, 7,
		0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1,
	};
	struct dp_pkt p;

	if (k == L2_ARP) {
		memcpy(f->buf, arp, sizeof(arp));
		f->len = sizeof(arp);
		return;
	}
	if (k == TO_PS_PARTIAL || k == TO_PS_COLLISION || k == L2_UDP) {
		dp_pkt_worker(&p, 1, FAN1, 1, 9, 5, vals, 8);
		p.flags = k == TO_PS_PARTIAL ? ESA_F_PARTIAL : ESA_F_COLLISION;
		dp_build(f, &p);
		if (k == L2_UDP)
			f->buf[37] ^= 1;	/* destination port 47001 */
		return;
	}
	if (k == COMPLETE || k == COMPLETE_OVF) {
		/* as esa_out_complete leaves it: from the last worker, to the PS */
		dp_pkt_worker(&p, 1, FAN1, FAN1 - 1, 9, 5, vals, 8);
		p.bitmap = (1u << FAN1) - 1;
		p.flags = ESA_F_COMPLETE | (k == COMPLETE_OVF ? ESA_F_OVERFLOW : 0);
	} else {
		dp_pkt_result(&p, 1, FAN1, 9, 5, vals, 8);
		if (k == RESULT_ECN)
			p.flags |= ESA_F_ECN;
		if (k == PULL_W1 || k == PULL_W02) {
			p.flags |= ESA_F_RESEND;
			p.count = 1;
			p.bitmap = k == PULL_W1 ? 1u << 1 : 1u << 0 | 1u << 2;
		}
		if (k == UNKNOWN_JOB)
			p.job_id = 77;
	}
	dp_build(f, &p);
	if (k == FRAG_LATER || k == FRAG_FIRST) {
		f->buf[20] = k == FRAG_FIRST ? 0x20 : 0;	/* MF */
		f->buf[21] = k == FRAG_FIRST ? 0 : 5;		/* offset */
		return;
	}
	/*
	 * A switch's sum has a UDP checksum (esa_udp_csum_write); a PS
	 * sending with checksum offload leaves a partial one.
	 */
	dp_l4_csum_set(f, k == COMPLETE || k == COMPLETE_OVF ? DP_CSUM_FULL :
			  DP_CSUM_PARTIAL);
}

/* Run the egress step for one port. */
static int run_port(__u32 port, const struct dp_frame *in, struct dp_frame *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, t,
		.data_in = in->buf, .data_size_in = in->len,
		.data_out = out->buf, .data_size_out = sizeof(out->buf),
		.repeat = 1);
	int err;

	g_eg->bss->egress_port = port;
	err = bpf_prog_test_run_opts(bpf_program__fd(g_eg->progs.esa_egress_at_port), &t);
	if (err)
		return -errno;
	out->len = t.data_size_out;
	return t.retval;
}

#define KEEP_AS_IS	(-1)	/* the PS's copy: the frame unchanged */
#define DROPPED		(-2)

struct egress_case {
	const char *what;
	enum kind kind;
	__u32 port;
	int expect;		/* worker index the copy is for, or the above */
	__u8 flags;		/* of a copy for a worker */
};

static const struct egress_case cases[] = {
	{ "complete: PS port keeps the COMPLETE", COMPLETE, PORT_PS1, KEEP_AS_IS, 0 },
	{ "complete: worker 0 gets a RESULT", COMPLETE, PORT_W1(0), 0, ESA_F_RESULT },
	{ "complete: worker 1 gets a RESULT", COMPLETE, PORT_W1(1), 1, ESA_F_RESULT },
	{ "complete: the last worker gets a RESULT", COMPLETE, PORT_W1(2), 2, ESA_F_RESULT },
	{ "complete: an address beyond fan_in gets nothing", COMPLETE, PORT_W1(3), DROPPED, 0 },
	{ "complete: another job's worker gets nothing", COMPLETE, PORT_J2_W0, DROPPED, 0 },
	{ "complete: another job's PS gets nothing", COMPLETE, PORT_PS2, DROPPED, 0 },
	{ "complete: a port with nobody gets nothing", COMPLETE, PORT_EMPTY, DROPPED, 0 },
	{ "overflow: PS keeps it as is", COMPLETE_OVF, PORT_PS1, KEEP_AS_IS, 0 },
	{ "overflow: the flag goes on to the workers", COMPLETE_OVF, PORT_W1(2), 2,
	  ESA_F_RESULT | ESA_F_OVERFLOW },
	{ "PS result: not back to the PS", RESULT, PORT_PS1, DROPPED, 0 },
	{ "PS result: worker 0", RESULT, PORT_W1(0), 0, ESA_F_RESULT },
	{ "PS result: the last worker", RESULT, PORT_W1(2), 2, ESA_F_RESULT },
	{ "PS result: beyond fan_in gets nothing", RESULT, PORT_W1(3), DROPPED, 0 },
	{ "PS result: another job's worker gets nothing", RESULT, PORT_J2_W0, DROPPED, 0 },
	{ "PS result: ECN goes on", RESULT_ECN, PORT_W1(1), 1, ESA_F_RESULT | ESA_F_ECN },
	{ "pull of worker 1: to worker 1", PULL_W1, PORT_W1(1), 1, ESA_F_RESULT | ESA_F_RESEND },
	{ "pull of worker 1: not to worker 0", PULL_W1, PORT_W1(0), DROPPED, 0 },
	{ "pull of worker 1: not to worker 2", PULL_W1, PORT_W1(2), DROPPED, 0 },
	{ "pull of worker 1: not to the PS", PULL_W1, PORT_PS1, DROPPED, 0 },
	{ "pull of workers 0, 2: to worker 0", PULL_W02, PORT_W1(0), 0, ESA_F_RESULT | ESA_F_RESEND },
	{ "pull of workers 0, 2: not to worker 1", PULL_W02, PORT_W1(1), DROPPED, 0 },
	{ "pull of workers 0, 2: to worker 2", PULL_W02, PORT_W1(2), 2, ESA_F_RESULT | ESA_F_RESEND },
	{ "unknown job: PS port drops", UNKNOWN_JOB, PORT_PS1, DROPPED, 0 },
	{ "unknown job: worker port drops", UNKNOWN_JOB, PORT_W1(0), DROPPED, 0 },
	{ "PARTIAL to the PS: leaves as it is", TO_PS_PARTIAL, PORT_PS1, KEEP_AS_IS, 0 },
	{ "COLLISION to the PS: leaves as it is", TO_PS_COLLISION, PORT_PS1, KEEP_AS_IS, 0 },
	{ "ordinary UDP to a worker's port: as it is", L2_UDP, PORT_W1(1), KEEP_AS_IS, 0 },
	{ "ARP flooded to an empty port: as it is", L2_ARP, PORT_EMPTY, KEEP_AS_IS, 0 },
	{ "later fragment like a RESULT: to a worker as it is", FRAG_LATER, PORT_W1(0),
	  KEEP_AS_IS, 0 },
	{ "later fragment like a RESULT: to an empty port as it is", FRAG_LATER,
	  PORT_EMPTY, KEEP_AS_IS, 0 },
	{ "later fragment like a RESULT: to the PS as it is", FRAG_LATER, PORT_PS1,
	  KEEP_AS_IS, 0 },
	{ "first fragment like a RESULT: to a worker as it is", FRAG_FIRST, PORT_W1(1),
	  KEEP_AS_IS, 0 },
	{ "first fragment like a RESULT: to an empty port as it is", FRAG_FIRST,
	  PORT_EMPTY, KEEP_AS_IS, 0 },
};

FIXTURE(egress) {
	struct dp_frame in, out;
	struct dp_out i, o;
};

FIXTURE_SETUP(egress)
{
	ASSERT_EQ(0, setup_switch());
}

FIXTURE_TEARDOWN(egress)
{
}

/* A worker's copy: RESULT from the PS to worker w, the rest untouched. */
static void check_worker_copy(struct __test_metadata *_metadata,
			      FIXTURE_DATA(egress) *self,
			      const struct egress_case *c)
{
	__u8 mac[6];
	int w = c->expect;

	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o))
		TH_LOG("%s: not an aggregation frame", c->what);
	EXPECT_EQ(self->in.len, self->out.len) TH_LOG("%s: length", c->what);
	EXPECT_EQ(c->flags, self->o.h.flags) TH_LOG("%s: flags", c->what);
	EXPECT_EQ(DP_PS_ADDR(1), self->o.saddr) TH_LOG("%s: source address", c->what);
	EXPECT_EQ(DP_WORKER_ADDR(1, w), self->o.daddr) TH_LOG("%s: destination", c->what);
	EXPECT_EQ(ESA_UDP_PORT, self->o.sport) TH_LOG("%s: source port", c->what);
	EXPECT_EQ(DP_WORKER_PORT(1, w), self->o.dport) TH_LOG("%s: destination port", c->what);
	if (c->kind == COMPLETE || c->kind == COMPLETE_OVF) {
		EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len))
			TH_LOG("%s: the sum's UDP checksum, rewritten", c->what);
	} else {
		EXPECT_EQ(0, self->o.udp_csum)
			TH_LOG("%s: no UDP checksum (the PS's may be partial)", c->what);
	}
	EXPECT_TRUE(self->o.ip_csum_ok) TH_LOG("%s: IPv4 checksum", c->what);
	host_mac(mac, DP_WORKER_ADDR(1, w));
	EXPECT_EQ(0, memcmp(mac, self->o.dmac, 6)) TH_LOG("%s: destination MAC", c->what);
	host_mac(mac, DP_PS_ADDR(1));
	EXPECT_EQ(0, memcmp(mac, self->o.smac, 6)) TH_LOG("%s: source MAC", c->what);
	/* the header fields the egress step must not touch, and the values */
	EXPECT_EQ(self->i.h.job_id, self->o.h.job_id) TH_LOG("%s: job", c->what);
	EXPECT_EQ(self->i.h.seq, self->o.h.seq) TH_LOG("%s: seq", c->what);
	EXPECT_EQ(self->i.h.agg_index, self->o.h.agg_index) TH_LOG("%s: index", c->what);
	EXPECT_EQ(self->i.h.worker_bitmap, self->o.h.worker_bitmap)
		TH_LOG("%s: bitmap", c->what);
	EXPECT_EQ(self->i.h.fan_in, self->o.h.fan_in) TH_LOG("%s: fan_in", c->what);
	EXPECT_EQ(self->i.h.value_count, self->o.h.value_count) TH_LOG("%s: count", c->what);
	EXPECT_EQ(0, memcmp(self->i.values, self->o.values,
			    4 * self->i.h.value_count)) TH_LOG("%s: values", c->what);
}

TEST_F(egress, per_port_table)
{
	unsigned int k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct egress_case *c = &cases[k];
		int verdict;

		build(&self->in, c->kind);
		if (c->expect >= 0)	/* a worker's copy is compared field by field */
			ASSERT_EQ(0, dp_parse(self->in.buf, self->in.len, &self->i));
		verdict = run_port(c->port, &self->in, &self->out);
		if (c->expect == DROPPED) {
			EXPECT_EQ(XDP_DROP, verdict) TH_LOG("%s: verdict", c->what);
			continue;
		}
		EXPECT_EQ(XDP_PASS, verdict) TH_LOG("%s: verdict", c->what);
		if (verdict != XDP_PASS)
			continue;
		if (c->expect == KEEP_AS_IS) {
			EXPECT_EQ(self->in.len, self->out.len) TH_LOG("%s: length", c->what);
			EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len))
				TH_LOG("%s: the frame changed", c->what);
			continue;
		}
		check_worker_copy(_metadata, self, c);
	}
}

/*
 * Every worker of a fan_in-32 job behind its own port gets exactly its
 * copy of a completion: no index skipped, none beyond.
 */
TEST_F(egress, every_worker_of_a_full_job)
{
	struct esa_job_info job;
	struct dp_pkt p;
	int w, kept = 0;

	dp_job(&job, 5, ESA_MAX_WORKERS, 1, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &job));
	for (w = 0; w < ESA_MAX_WORKERS; w++)
		ASSERT_EQ(0, learn(DP_WORKER_ADDR(5, w), 100 + w));
	ASSERT_EQ(0, learn(DP_PS_ADDR(5), 99));
	dp_pkt_worker(&p, 5, ESA_MAX_WORKERS, 0, 1, 0, vals, 8);
	p.bitmap = ~0u;
	p.flags = ESA_F_COMPLETE;
	dp_build(&self->in, &p);
	for (w = 0; w < ESA_MAX_WORKERS; w++) {
		ASSERT_EQ(XDP_PASS, run_port(100 + w, &self->in, &self->out))
			TH_LOG("worker %d", w);
		ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
		EXPECT_EQ(DP_WORKER_ADDR(5, w), self->o.daddr) TH_LOG("worker %d", w);
		EXPECT_EQ(DP_WORKER_PORT(5, w), self->o.dport) TH_LOG("worker %d", w);
		kept++;
	}
	EXPECT_EQ(ESA_MAX_WORKERS, kept);
	EXPECT_EQ(XDP_PASS, run_port(99, &self->in, &self->out));
	EXPECT_EQ(XDP_DROP, run_port(98, &self->in, &self->out));
}

/*
 * A worker behind the PS's own port: the completion stays a COMPLETE for
 * the PS there (the worker recovers by resending, dataplane.rst), while
 * the PS's RESULT reaches the worker.
 */
TEST_F(egress, worker_on_the_ps_port)
{
	ASSERT_EQ(0, learn(DP_WORKER_ADDR(1, 1), PORT_PS1));
	build(&self->in, COMPLETE);
	ASSERT_EQ(XDP_PASS, run_port(PORT_PS1, &self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	build(&self->in, RESULT);
	ASSERT_EQ(XDP_PASS, run_port(PORT_PS1, &self->in, &self->out));
	ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
	EXPECT_EQ(ESA_F_RESULT, self->o.h.flags);
	EXPECT_EQ(DP_WORKER_ADDR(1, 1), self->o.daddr);
}

/*
 * A job with a token: the copies of its completion and of its PS's RESULT
 * keep version 2 and the trailer (the endpoints check it), and the
 * completion's UDP checksum, which covers the trailer, stays right.
 */
TEST_F(egress, token_trailer_kept)
{
	const __u64 token = 0x0123456789abcdefULL;
	struct esa_job_info job;
	struct dp_pkt p;
	int k;

	dp_job(&job, 1, FAN1, 1, 0, 0);
	job.token = token;
	ASSERT_EQ(0, esa_switch_job_put(g_sw, &job));
	for (k = 0; k < 2; k++) {
		if (k == 0) {
			dp_pkt_worker(&p, 1, FAN1, FAN1 - 1, 9, 5, vals, 8);
			p.bitmap = (1u << FAN1) - 1;
			p.flags = ESA_F_COMPLETE;
		} else {
			dp_pkt_result(&p, 1, FAN1, 9, 5, vals, 8);
		}
		p.token = token;
		dp_build(&self->in, &p);
		dp_l4_csum_set(&self->in, DP_CSUM_FULL);
		ASSERT_EQ(XDP_PASS, run_port(PORT_W1(2), &self->in, &self->out))
			TH_LOG("%s", k ? "result" : "complete");
		ASSERT_EQ(0, dp_parse(self->out.buf, self->out.len, &self->o));
		EXPECT_EQ(self->in.len, self->out.len);
		EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, self->o.h.version);
		EXPECT_EQ(ESA_F_RESULT, self->o.h.flags);
		EXPECT_EQ(DP_WORKER_ADDR(1, 2), self->o.daddr);
		EXPECT_EQ(token, self->o.token);
		EXPECT_EQ(8 + ESA_HDR_LEN + 4 * 8 + ESA_TOKEN_LEN, self->o.udp_len);
		if (k == 0)
			EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len));
	}
}

/* The fixture program shares the switch's maps; the switch's own
 * programs are not loaded from this object a second time. */
static int load_fixture(void)
{
	struct bpf_program *prog;
	struct bpf_map *m;
	int err, fd;

	g_eg = esa_egress_port_bpf__open();
	if (!g_eg)
		return -errno;
	/* the egress step alone: none of the switch's own programs */
	bpf_object__for_each_program(prog, g_eg->obj)
		bpf_program__set_autoload(prog, prog == g_eg->progs.esa_egress_at_port);
	bpf_object__for_each_map(m, g_eg->obj) {
		fd = esa_switch_map_fd(g_sw, bpf_map__name(m));
		if (fd < 0)
			continue;
		err = bpf_map__reuse_fd(m, fd);
		if (err)
			return err;
	}
	return esa_egress_port_bpf__load(g_eg);
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };
	int err;

	err = esa_switch_load(&g_sw, &o);
	if (!err)
		err = load_fixture();
	if (err) {
		printf("TAP version 13\n1..1\n");
		printf("not ok 1 load the data plane and the egress fixture: %s\n",
		       strerror(-err));
		return 1;
	}
	return test_harness_run(argc, argv);
}
