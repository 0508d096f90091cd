// SPDX-License-Identifier: GPL-2.0
/*
 * Where a worker's rules meet the 32-bit sequence wrap
 * (esa_endpoint_set_next_seq(), the seam; esa_step_*): three workers and a host-only PS on an
 * in-memory network in virtual time run calls whose packets straddle
 * 2^32 - 1 -> 0, with one RESULT lost on the far side of the wrap (its
 * worker resends, the PS answers the resend) and a pull of the PS for a
 * wrapped sequence. Every sum must be exact, every packet taken once,
 * nothing ignored or stale, and the next call must go on from the
 * wrapped sequence. (All packets of a call leave at one virtual instant,
 * so once the lost result stalls the job every worker's lowest packet
 * times out together: the resends and their duplicate answers are the
 * protocol's, not the wrap's, and are not counted here.) Then a
 * RESULT's OVERFLOW flag on the int32 path, across the wrap too; a window
 * across the wrap on distinct aggregators, whatever agg_span; and a PS
 * whose ring size does not divide 2^32 keeping both sides of the wrap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "steps_job.h"

#define JOB		7
#define FAN		3
#define VPP		16
#define NPKT		24		/* packets per call */
#define FIRST_SEQ	(UINT32_MAX - 9)	/* 10 before the wrap */
#define MAX_Q		1024

/* Host 0 is the PS, host 1 + w worker w. */
static struct sockaddr_in host_addr(int h)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(ESA_UDP_PORT + h),
		.sin_addr.s_addr = htonl(0x0a070001u + h),
	};
	return a;
}

/* Every datagram a worker takes comes from its PS (host 0). */
static const struct sockaddr_in *ps_addr(void)
{
	static struct sockaddr_in a;

	a = host_addr(0);
	return &a;
}

struct dgram {
	int		to;
	size_t		len;
	uint8_t		buf[ESA_MTU];
};

struct net {
	struct dgram	q[MAX_Q];	/* FIFO, delivered without delay */
	unsigned	head, tail;
	/* lose the first RESULT of this sequence to this host */
	uint32_t	lose_seq;
	int		lose_to;
	unsigned	lost;
	unsigned	wrapped_seen;	/* data packets of seq < NPKT */
	unsigned	late_seen;	/* ... of seq >= FIRST_SEQ */
};

static void net_tx(void *ctx, const struct sockaddr_in *to,
		   const uint8_t *buf, size_t len)
{
	struct net *net = ctx;
	int h = (int)(ntohl(to->sin_addr.s_addr) - 0x0a070001u);
	struct esa_meta m;
	struct dgram *d;

	if (!esa_wire_parse(buf, len, &m)) {
		if (h == net->lose_to && m.seq == net->lose_seq &&
		    (m.flags & ESA_F_RESULT) && !net->lost) {
			net->lost++;
			return;
		}
		if (!h && m.seq < NPKT)
			net->wrapped_seen++;
		if (!h && m.seq >= FIRST_SEQ)
			net->late_seen++;
	}
	if (net->tail - net->head == MAX_Q || len > ESA_MTU)
		abort();
	d = &net->q[net->tail++ % MAX_Q];
	d->to = h;
	d->len = len;
	memcpy(d->buf, buf, len);
}

/* Worker w's value i; the check sums over all workers. */
static int32_t value(unsigned w, size_t i)
{
	return (int32_t)((w + 1) * 7919u + i * 31u) % 10000 - 5000;
}

FIXTURE(wrap) {
	struct net		net;
	struct steps_job	job;
	struct esa_ps		*ps;
	struct steps_worker	wk[FAN];
};

FIXTURE_SETUP(wrap)
{
	const struct esa_endpoint_config c = {
		.agg_slots = 64, .window = 4, .values_per_packet = VPP,
		.timeout_us = 1000, .max_resends = 10,
	};

	self->job = (struct steps_job){ .job = JOB, .fan = FAN,
					.addr = host_addr, .tx = net_tx,
					.net = &self->net };
	ASSERT_EQ(0, steps_job_new(&self->job, c, value, &self->ps, self->wk));
	for (unsigned w = 0; w < FAN; w++)
		esa_endpoint_set_next_seq(self->wk[w].ep, FIRST_SEQ);
}

FIXTURE_TEARDOWN(wrap)
{
	steps_job_close(&self->job, self->ps, self->wk);
}

static bool all_done(FIXTURE_DATA(wrap) *self)
{
	for (unsigned w = 0; w < FAN; w++)
		if (!self->wk[w].err && !esa_step_done(self->wk[w].ep))
			return false;
	return true;
}

static void send_due(FIXTURE_DATA(wrap) *self, struct steps_worker *wk,
		     uint64_t now)
{
	if (!wk->err && !esa_step_done(wk->ep))
		wk->err = esa_step_send(wk->ep, now, &wk->deadline);
}

/* One call of every worker, to the end; 0 or the first error. */
static int run_call(FIXTURE_DATA(wrap) *self)
{
	static const struct sockaddr_in any;
	uint64_t now = 1000;
	unsigned steps = 0;
	int err = 0;

	for (unsigned w = 0; w < FAN; w++) {
		struct steps_worker *wk = &self->wk[w];

		wk->vals.stored = wk->vals.mismatches = 0;
		err = esa_step_begin(wk->ep, (size_t)NPKT * VPP, &wk->io);
		if (err)
			return err;
		send_due(self, wk, now);
	}
	while (!all_done(self) && steps++ < 100000) {
		struct net *net = &self->net;

		if (net->head != net->tail) {
			struct dgram *d = &net->q[net->head++ % MAX_Q];

			if (!d->to) {
				err = esa_ps_input(self->ps, d->buf, d->len, &any);
				if (err)
					return err;
			} else if (d->to <= FAN) {
				struct steps_worker *wk = &self->wk[d->to - 1];

				esa_step_input(wk->ep, d->buf, d->len, ps_addr(), now);
				send_due(self, wk, now);
			}
			continue;
		}
		/* nothing in flight: time runs to the earliest deadline */
		uint64_t t = UINT64_MAX;

		for (unsigned w = 0; w < FAN; w++)
			if (!self->wk[w].err && !esa_step_done(self->wk[w].ep) &&
			    self->wk[w].deadline < t)
				t = self->wk[w].deadline;
		if (t == UINT64_MAX)
			return -EDEADLK;
		now = t > now ? t : now;
		for (unsigned w = 0; w < FAN; w++)
			send_due(self, &self->wk[w], now);
	}
	for (unsigned w = 0; w < FAN; w++) {
		if (self->wk[w].err)
			return self->wk[w].err;
		err = esa_step_end(self->wk[w].ep);
		if (err)
			return err;
	}
	return all_done(self) ? 0 : -ETIMEDOUT;
}

TEST_F(wrap, calls_across_the_wrap)
{
	struct esa_endpoint_stats st[FAN];
	struct esa_ps_stats ps;

	/* worker 1 loses the result of sequence 2 (the 13th packet) */
	self->net.lose_seq = 2;
	self->net.lose_to = 2;
	ASSERT_EQ(0, run_call(self)) TH_LOG("%s", esa_last_error());
	EXPECT_EQ(1, self->net.lost);
	EXPECT_EQ(10 * FAN, self->net.late_seen);
	EXPECT_LE((NPKT - 10) * FAN, self->net.wrapped_seen);
	for (unsigned w = 0; w < FAN; w++) {
		esa_endpoint_get_stats(self->wk[w].ep, &st[w]);
		EXPECT_EQ(0, self->wk[w].vals.mismatches) TH_LOG("worker %u", w);
		EXPECT_EQ((size_t)NPKT * VPP, self->wk[w].vals.stored);
		EXPECT_EQ(NPKT, st[w].results) TH_LOG("worker %u", w);
		EXPECT_EQ(0, st[w].ignored) TH_LOG("worker %u", w);
	}
	EXPECT_LE(1, st[1].resends);
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &ps));
	EXPECT_EQ(NPKT, ps.finished);
	EXPECT_EQ(0, ps.stale);
	EXPECT_EQ(0, ps.conflicts);
	EXPECT_LE(1, ps.resend_answers);	/* the lost result's */

	/* the next call goes on after the wrap: sequences 14..37 */
	self->net.lose_seq = NPKT - 10 + 1;
	self->net.lost = 0;
	self->net.late_seen = self->net.wrapped_seen = 0;
	ASSERT_EQ(0, run_call(self)) TH_LOG("%s", esa_last_error());
	EXPECT_EQ(0, self->net.late_seen);
	for (unsigned w = 0; w < FAN; w++) {
		esa_endpoint_get_stats(self->wk[w].ep, &st[w]);
		EXPECT_EQ(0, self->wk[w].vals.mismatches) TH_LOG("worker %u", w);
		EXPECT_EQ(2 * NPKT, st[w].results) TH_LOG("worker %u", w);
		EXPECT_EQ(2, st[w].allreduces);
	}
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &ps));
	EXPECT_EQ(2 * NPKT, ps.finished);
	EXPECT_EQ(0, ps.stale);
}

/* The RESEND packets in flight, by sequence, in order; their count. */
static unsigned resent(struct net *net, uint32_t *seqs, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = net->head; i != net->tail && n < max; i++) {
		struct dgram *d = &net->q[i % MAX_Q];
		struct esa_meta m;

		if (!esa_wire_parse(d->buf, d->len, &m) &&
		    (m.flags & ESA_F_RESEND))
			seqs[n++] = m.seq;
	}
	return n;
}

/*
 * Pulls of the PS for wrapped sequences: one for a packet sent and
 * without its result resends it at once; one for a packet not sent yet
 * within two windows (the other workers are ahead) resends the lowest,
 * whose result was lost. Both across the wrap.
 */
TEST_F(wrap, pulls_of_wrapped_sequences)
{
	struct esa_endpoint_stats st;
	uint8_t buf[ESA_MTU];
	struct esa_meta m = { .flags = ESA_F_RESULT | ESA_F_RESEND,
			      .fan_in = FAN, .job_id = JOB, .value_count = 1,
			      .bitmap = 1 };
	struct steps_worker *wk = &self->wk[0];
	uint32_t seqs[4];
	uint64_t deadline;

	esa_endpoint_set_next_seq(wk->ep, UINT32_MAX - 1);
	ASSERT_EQ(0, esa_step_begin(wk->ep, (size_t)NPKT * VPP, &wk->io));
	/* window 4: 2^32 - 2, 2^32 - 1, 0, 1 */
	ASSERT_EQ(0, esa_step_send(wk->ep, 1000, &deadline));
	esa_endpoint_get_stats(wk->ep, &st);
	ASSERT_EQ(4, st.packets_sent);
	self->net.head = self->net.tail;
	m.seq = 1;
	esa_wire_put(buf, &m);
	memset(buf + ESA_HDR_LEN, 0, 4);
	esa_step_input(wk->ep, buf, ESA_HDR_LEN + 4, ps_addr(), 2000);
	ASSERT_EQ(0, esa_step_send(wk->ep, 2000, &deadline));
	ASSERT_EQ(1, resent(&self->net, seqs, 4));
	EXPECT_EQ(1, seqs[0]);
	self->net.head = self->net.tail;
	m.seq = 3;		/* not sent, 5 past the lowest */
	esa_wire_put(buf, &m);
	esa_step_input(wk->ep, buf, ESA_HDR_LEN + 4, ps_addr(), 3000);
	ASSERT_EQ(0, esa_step_send(wk->ep, 3000, &deadline));
	ASSERT_EQ(1, resent(&self->net, seqs, 4));
	EXPECT_EQ(UINT32_MAX - 1, seqs[0]);
	esa_endpoint_get_stats(wk->ep, &st);
	EXPECT_EQ(2, st.pulls);
	EXPECT_EQ(2, st.resends);
	EXPECT_EQ(0, st.ignored);
}

/*
 * The OVERFLOW flag meets the int32 path (values in place, no store
 * callback): the RESULT's sum is written back, and the call, whose
 * packets straddle the wrap, ends with -EOVERFLOW.
 */
TEST_F(wrap, int32_overflow_flag_fails_the_call)
{
	int32_t buf[2 * VPP], sum[VPP];
	struct esa_values_io io = { .ctx = buf };
	struct esa_endpoint_stats st;
	struct steps_worker *wk = &self->wk[0];
	uint8_t pkt[ESA_MTU];
	struct esa_meta m = { .flags = ESA_F_RESULT, .fan_in = FAN,
			      .job_id = JOB, .value_count = VPP,
			      .bitmap = (1u << FAN) - 1 };
	uint64_t deadline;
	unsigned i;

	for (i = 0; i < 2 * VPP; i++)
		buf[i] = (int32_t)i;
	esa_endpoint_set_next_seq(wk->ep, UINT32_MAX);
	ASSERT_EQ(0, esa_step_begin(wk->ep, 2 * VPP, &io));
	ASSERT_EQ(0, esa_step_send(wk->ep, 1000, &deadline));
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned i = 0; i < VPP; i++)
			sum[i] = INT32_MAX - (int32_t)(k * VPP + i);
		m.seq = UINT32_MAX + k;		/* 2^32 - 1, then 0 */
		m.flags = ESA_F_RESULT | (k ? 0 : ESA_F_OVERFLOW);
		esa_wire_put(pkt, &m);
		esa_values_to_be(pkt + ESA_HDR_LEN, sum, VPP);
		esa_step_input(wk->ep, pkt, ESA_HDR_LEN + 4 * VPP, ps_addr(), 2000);
	}
	ASSERT_TRUE(esa_step_done(wk->ep));
	EXPECT_EQ(-EOVERFLOW, esa_step_end(wk->ep));
	for (i = 0; i < 2 * VPP; i++)
		ASSERT_EQ(INT32_MAX - (int32_t)i, buf[i]) TH_LOG("value %u", i);
	esa_endpoint_get_stats(wk->ep, &st);
	EXPECT_EQ(1, st.overflow_results);
	EXPECT_EQ(2, st.results);
}

/* The aggregator indices of what a worker sent (esa_endpoint_new's sink). */
struct slots_seen {
	unsigned	n;
	uint32_t	seq[8], agg[8];
};

static void slots_tx(void *ctx, const struct sockaddr_in *to,
		     const uint8_t *buf, size_t len)
{
	struct slots_seen *s = ctx;
	struct esa_meta m;

	(void)to;
	if (s->n < 8 && !esa_wire_parse(buf, len, &m)) {
		s->seq[s->n] = m.seq;
		s->agg[s->n++] = m.agg_index;
	}
}

/* A worker of window = span = @span at next seq @seq, sending @n packets. */
static void send_window(struct __test_metadata *_metadata,
			struct esa_endpoint *ep, uint32_t seq, unsigned n,
			struct slots_seen *seen)
{
	static int32_t data[8 * VPP];
	static const struct esa_values_io io = { .ctx = data };
	uint64_t dl;

	seen->n = 0;
	esa_endpoint_set_next_seq(ep, seq);
	ASSERT_EQ(0, esa_step_begin(ep, n * VPP, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(n, seen->n);
}

static struct esa_endpoint *span_worker(struct __test_metadata *_metadata,
					unsigned span, struct slots_seen *seen)
{
	struct esa_endpoint_config c = {
		.job_id = JOB, .worker_id = 0, .fan_in = FAN,
		.ps = host_addr(0), .self = host_addr(1),
		.agg_slots = 100, .agg_span = span, .window = span,
		.values_per_packet = VPP,
	};
	struct esa_endpoint *ep;

	EXPECT_EQ(0, esa_endpoint_new(&c, slots_tx, seen, &ep));
	return ep;
}

/*
 * A window that straddles the wrap uses agg_span distinct aggregators
 * when agg_span does not divide 2^32: seq % 3 gives 2^32 - 1 and 0 the
 * same one.
 */
TEST(window_across_wrap_uses_distinct_aggregators)
{
	static struct slots_seen seen;
	struct esa_endpoint *ep;
	unsigned shared = 0;

	for (unsigned span = 3; span <= 7; span++) {
		ep = span_worker(_metadata, span, &seen);
		ASSERT_NE(NULL, ep);
		send_window(_metadata, ep, UINT32_MAX - 1, span, &seen);
		EXPECT_EQ(0, seen.seq[2]);
		for (unsigned i = 0; i < span; i++) {
			for (unsigned k = 0; k < i; k++) {
				if (seen.agg[k] != seen.agg[i])
					continue;
				TH_LOG("span %u: seq %u and %u share aggregator %u",
				       span, seen.seq[k], seen.seq[i], seen.agg[i]);
				shared++;
			}
		}
		esa_endpoint_close(ep);
	}
	EXPECT_EQ(0, shared);
}

/*
 * Workers that reached a sequence by different calls agree on its
 * aggregator: one crossed the wrap by a call, the other was set there.
 */
TEST(workers_agree_on_aggregators_after_the_wrap)
{
	static struct slots_seen a, b;
	struct esa_endpoint *ea, *eb;

	ea = span_worker(_metadata, 3, &a);
	eb = span_worker(_metadata, 3, &b);
	ASSERT_NE(NULL, ea);
	ASSERT_NE(NULL, eb);
	send_window(_metadata, eb, UINT32_MAX - 1, 3, &b);	/* to seq 1 */
	esa_endpoint_set_next_seq(ea, UINT32_MAX - 1);
	send_window(_metadata, ea, 1, 2, &a);
	send_window(_metadata, eb, 1, 2, &b);
	EXPECT_EQ(a.agg[0], b.agg[0]);
	EXPECT_EQ(a.agg[1], b.agg[1]);
	EXPECT_EQ(2, esa_endpoint_next_seq(ea) - 1);
	esa_endpoint_close(ea);
	esa_endpoint_close(eb);
}

/* What a PS sent (esa_ps_new's sink): RESULTs by seq. */
struct ps_out {
	unsigned	results;
	uint32_t	seq[8];
};

static void ps_out_tx(void *ctx, const struct sockaddr_in *to,
		      const uint8_t *buf, size_t len)
{
	struct ps_out *o = ctx;
	struct esa_meta m;

	(void)to;
	if (o->results < 8 && !esa_wire_parse(buf, len, &m) &&
	    (m.flags & ESA_F_RESULT) && !(m.flags & ESA_F_RESEND))
		o->seq[o->results++] = m.seq;
}

/* Worker @w's data packet of @seq (one value) into the PS. */
static void ps_piece(struct __test_metadata *_metadata, struct esa_ps *ps,
		     unsigned w, uint32_t seq)
{
	struct esa_meta m = {
		.fan_in = 2, .job_id = JOB, .value_count = 1, .seq = seq,
		.bitmap = 1u << w,
	};
	struct sockaddr_in from = host_addr(1 + w);
	uint8_t buf[ESA_HDR_LEN + 4] = { 0 };

	esa_wire_put(buf, &m);
	ASSERT_EQ(0, esa_ps_input(ps, buf, sizeof(buf), &from));
}

/*
 * Sequences 2^32 - 1 and 0 both in flight at a PS whose ring does not
 * divide 2^32 (17 entries: seq % 17 is 0 for both): each gets its own
 * entry and its sum, none is dropped as a conflict.
 */
TEST(ps_ring_across_the_wrap)
{
	struct esa_ps_config cfg = { .mode = ESA_PS_HOST_ONLY,
				     .cache_entries = 17 };
	struct esa_ps_job_config jc = {
		.job_id = JOB, .fan_in = 2, .worker_known = 3,
		.worker = { host_addr(1), host_addr(2) },
	};
	static struct ps_out out;
	struct esa_ps_stats st;
	struct esa_ps *ps;

	ASSERT_EQ(0, esa_ps_new(&cfg, ps_out_tx, &out, &ps));
	ASSERT_EQ(0, esa_ps_add_job(ps, &jc));
	ps_piece(_metadata, ps, 0, UINT32_MAX);
	ps_piece(_metadata, ps, 0, 0);
	ps_piece(_metadata, ps, 1, UINT32_MAX);
	ps_piece(_metadata, ps, 1, 0);
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(0, st.conflicts);
	EXPECT_EQ(2, st.finished);
	ASSERT_EQ(4, out.results);	/* two sums to two workers */
	EXPECT_EQ(UINT32_MAX, out.seq[0]);
	EXPECT_EQ(0, out.seq[3]);
	esa_ps_close(ps);
}

TEST_HARNESS_MAIN
