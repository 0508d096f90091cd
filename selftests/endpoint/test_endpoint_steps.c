// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoints on a caller's clock and network (esa_endpoint_new,
 * esa_step_*, esa_ps_new, esa_ps_input; the API tools/esa-sim drives):
 * three workers and a host-only PS joined by an in-memory network with a
 * fixed one-way delay, in virtual time. Checks that the steps give exact
 * sums with values generated and checked through struct esa_values_io,
 * and that the library's resend rules hold in virtual time: a lost packet
 * is resent at the resend timeout floor (timeout_us), a lost result is recovered by the PS's answer to the
 * resend, and a worker with no PS gives up with -ETIMEDOUT after
 * max_resends timeouts backed off from timeout_us (no round trip was
 * measured, and none is waited for).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "steps_job.h"

#define JOB		5
#define FAN		3
#define NVAL		(64 * 40)
#define VPP		64
#define DELAY_NS	5000ull		/* one way, every hop */
#define TIMEOUT_US	2000
#define MAX_PKTS	4096

/* Host 0 is the PS, host 1 + w worker w. */
static struct sockaddr_in host_addr(int h)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(ESA_UDP_PORT + (h ? 100 + h : 0)),
		.sin_addr.s_addr = htonl(0x0a000001u + h),
	};
	return a;
}

static int host_of(const struct sockaddr_in *a)
{
	return (int)(ntohl(a->sin_addr.s_addr) - 0x0a000001u);
}

struct pkt {
	uint64_t	at;		/* arrival time */
	int		from, to;
	size_t		len;
	uint8_t		buf[ESA_MTU];
};

struct net {
	uint64_t	now;
	struct pkt	q[MAX_PKTS];	/* in flight, unordered */
	unsigned	n;
	int		sender;		/* host whose tx callback runs */
	/* loss: drop the k-th datagram a host sends (0: none) */
	int		drop_host;
	unsigned	drop_nth;
	unsigned	sent[1 + FAN];
	unsigned	dropped;
};

static void net_tx(void *ctx, const struct sockaddr_in *to,
		   const uint8_t *buf, size_t len)
{
	struct net *net = ctx;
	struct pkt *p;

	if (net->drop_nth && net->sender == net->drop_host &&
	    ++net->sent[net->sender] == net->drop_nth) {
		net->dropped++;
		return;
	}
	if (net->n == MAX_PKTS || len > ESA_MTU)
		abort();
	p = &net->q[net->n++];
	p->at = net->now + DELAY_NS;
	p->from = net->sender;
	p->to = host_of(to);
	p->len = len;
	memcpy(p->buf, buf, len);
}

/* Worker w's value i, and the sum over all workers. */
static int32_t value(unsigned w, size_t i)
{
	return (int32_t)((w + 1) * 1000003u + i * 7919u) % 100000 - 50000;
}

struct sim {
	struct net		net;
	struct steps_job	job;
	struct esa_ps		*ps;
	struct steps_worker	wk[FAN];
	bool			no_ps;
};

static void worker_send(struct sim *s, struct steps_worker *wk)
{
	if (wk->ended || wk->err)
		return;
	s->net.sender = 1 + wk->vals.w;
	wk->err = esa_step_send(wk->ep, s->net.now, &wk->deadline);
	if (!wk->err && esa_step_done(wk->ep)) {
		wk->err = esa_step_end(wk->ep);
		wk->ended = true;
	}
}

static void sim_init(struct __test_metadata *_metadata, struct sim *s,
		     uint32_t max_resends)
{
	const struct esa_endpoint_config c = {
		.agg_slots = 64, .window = 16, .values_per_packet = VPP,
		.timeout_us = TIMEOUT_US, .max_resends = max_resends,
	};

	s->job = (struct steps_job){ .job = JOB, .fan = FAN, .addr = host_addr,
				     .tx = net_tx, .net = &s->net };
	ASSERT_EQ(0, steps_job_new(&s->job, c, value, &s->ps, s->wk));
	for (unsigned w = 0; w < FAN; w++)
		ASSERT_EQ(0, esa_step_begin(s->wk[w].ep, NVAL, &s->wk[w].io));
}

static void sim_free(struct sim *s)
{
	steps_job_close(&s->job, s->ps, s->wk);
}

/* Run until every worker ended or failed; the end time. */
static uint64_t sim_run(struct sim *s)
{
	for (unsigned w = 0; w < FAN; w++)
		worker_send(s, &s->wk[w]);
	for (;;) {
		uint64_t t = UINT64_MAX;
		int first = -1, timer = -1;

		for (unsigned i = 0; i < s->net.n; i++)
			if (s->net.q[i].at < t)
				t = s->net.q[i].at, first = (int)i;
		for (unsigned w = 0; w < FAN; w++) {
			struct steps_worker *wk = &s->wk[w];

			if (!wk->ended && !wk->err && wk->deadline < t)
				t = wk->deadline, timer = (int)w, first = -1;
		}
		if (first < 0 && timer < 0)
			return s->net.now;
		s->net.now = t;
		if (timer >= 0) {
			worker_send(s, &s->wk[timer]);
			continue;
		}
		struct pkt p = s->net.q[first];

		s->net.q[first] = s->net.q[--s->net.n];
		if (p.to == 0) {
			struct sockaddr_in from = host_addr(p.from);

			if (s->no_ps)
				continue;
			s->net.sender = 0;
			esa_ps_input(s->ps, p.buf, p.len, &from);
		} else {
			struct steps_worker *wk = &s->wk[p.to - 1];

			if (wk->ended || wk->err)
				continue;
			struct sockaddr_in from = host_addr(p.from);

			esa_step_input(wk->ep, p.buf, p.len, &from,
				       s->net.now);
			worker_send(s, wk);
		}
	}
}

/* Every worker ended its call with every sum present and right. */
static void expect_all_exact(struct __test_metadata *_metadata,
			     const struct sim *s)
{
	for (unsigned w = 0; w < FAN; w++) {
		EXPECT_TRUE(s->wk[w].ended);
		EXPECT_EQ(0, s->wk[w].err);
		EXPECT_EQ(0, s->wk[w].vals.mismatches);
		EXPECT_EQ(NVAL, s->wk[w].vals.stored);
	}
}

TEST(lossless)
{
	static struct sim s;
	struct esa_endpoint_stats st;
	uint64_t end;

	memset(&s, 0, sizeof(s));
	sim_init(_metadata, &s, 0);
	end = sim_run(&s);
	expect_all_exact(_metadata, &s);
	for (unsigned w = 0; w < FAN; w++) {
		esa_endpoint_get_stats(s.wk[w].ep, &st);
		EXPECT_EQ(0, st.resends);
		EXPECT_EQ(1, st.allreduces);
		EXPECT_EQ(NVAL / VPP, st.packets_sent);
	}
	/* 40 packets, a window of 16: 3 round trips of 4 hops' delay. */
	EXPECT_EQ(3 * 2 * DELAY_NS, end);
	sim_free(&s);
}

/*
 * Worker 1's 10th packet is lost. Every worker's window stops at that
 * sequence, so each resends it when the timeout floor (timeout_us, above
 * 2 srtt here) runs out; the PS also pulls worker 1 when the others'
 * resends arrive. The call ends one round trip after the timeout.
 */
TEST(lost_packet_resent_at_timeout)
{
	static struct sim s;
	struct esa_endpoint_stats st;
	uint64_t end;

	memset(&s, 0, sizeof(s));
	s.net.drop_host = 2;
	s.net.drop_nth = 10;
	sim_init(_metadata, &s, 0);
	end = sim_run(&s);
	EXPECT_EQ(1, s.net.dropped);
	expect_all_exact(_metadata, &s);
	esa_endpoint_get_stats(s.wk[1].ep, &st);
	EXPECT_GE(st.resends, 1);
	EXPECT_GE(st.pulls, 1);
	/* sent at 0, resent at TIMEOUT_US, then a round trip or two */
	EXPECT_GE(end, TIMEOUT_US * 1000ull);
	EXPECT_LE(end, TIMEOUT_US * 1000ull + 4 * 2 * DELAY_NS);
	sim_free(&s);
}

/* The PS's 5th answer (a RESULT to worker 0, host-only) is lost. */
TEST(lost_result_recovered)
{
	static struct sim s;
	struct esa_endpoint_stats st;

	memset(&s, 0, sizeof(s));
	s.net.drop_host = 0;
	s.net.drop_nth = 5;
	sim_init(_metadata, &s, 0);
	sim_run(&s);
	EXPECT_EQ(1, s.net.dropped);
	expect_all_exact(_metadata, &s);
	esa_endpoint_get_stats(s.wk[0].ep, &st);
	EXPECT_GE(st.resends, 1);
	EXPECT_EQ(NVAL / VPP, st.results);
	sim_free(&s);
}

/*
 * No PS: the first packet is resent max_resends times, each timeout
 * doubling up to 8x from timeout_us (no round trip is ever measured),
 * then the call fails.
 */
TEST(no_ps_times_out)
{
	static struct sim s;
	uint64_t end, want = 0;

	memset(&s, 0, sizeof(s));
	s.no_ps = true;
	sim_init(_metadata, &s, 4);
	end = sim_run(&s);
	for (unsigned w = 0; w < FAN; w++)
		EXPECT_EQ(-ETIMEDOUT, s.wk[w].err);
	/* no round trip measured: the path's timeout is timeout_us */
	for (unsigned k = 0; k < 4; k++)
		want += (TIMEOUT_US * 1000ull) << (k < 3 ? k : 3);
	want += (TIMEOUT_US * 1000ull) << 3;	/* the 5th deadline: give up */
	EXPECT_EQ(want, end);
	sim_free(&s);
}

TEST_HARNESS_MAIN
