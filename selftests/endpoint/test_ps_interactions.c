// SPDX-License-Identifier: GPL-2.0
/*
 * Where the PS's rules meet (esa_ps_new, esa_ps_input: no socket, every
 * answer handed to the test): merges of PARTIAL, PREEMPTED, COLLISION
 * and COMPLETE pieces with OVERFLOW flags and saturating sums, duplicates
 * that are and are not RESENDs, overlaps, and the result ring across the
 * 32-bit sequence wrap. Each row is a list of pieces with the exact
 * answers each one must produce (none, a RESULT, a pull, to which worker),
 * then the job's counters. test_ps_contract.c checks each rule alone over
 * UDP; a mistake where two meet passes it and fails here.
 *
 * Job 5 has 4 workers; worker w's single-worker pieces carry 10^w, so a
 * sum says which workers are in it.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"

#define JOB		5
#define FAN		4
#define NV		8	/* values per piece */
#define MAX_PIECES	8
#define MAX_OUT		4
#define CACHE		16

struct answer {			/* a datagram the PS sent */
	uint8_t		flags;
	uint32_t	seq, bitmap;
	int32_t		val;	/* every value (not checked for a pull) */
	int		to;	/* the worker it is addressed to */
};

struct piece {
	uint8_t		flags;
	uint32_t	seq, bitmap;
	int32_t		val;
	uint16_t	count;	/* 0: NV */
	uint8_t		fan_in;	/* 0: the job's (FAN) */
	int		n_out;
	struct answer	out[MAX_OUT];
};

struct counts {			/* the job's counters after the row */
	uint64_t merged, duplicates, overlaps, finished, finished_by_ps,
		 result_packets, resend_answers, pulls, overflows, stale,
		 conflicts, bad;
};

struct row {
	enum esa_ps_mode mode;
	bool		result_on_complete;
	struct piece	p[MAX_PIECES];
	struct counts	want;
};

struct sent {
	struct sockaddr_in to;
	struct esa_meta	m;
	int32_t		v[ESA_MAX_VALUES];
};

struct sink {
	unsigned	n;
	bool		bad;	/* more than MAX_OUT, or not parseable */
	struct sent	s[MAX_OUT];
};

static struct sockaddr_in worker_addr(unsigned w)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(41000 + w),
		.sin_addr.s_addr = htonl(0x0a050000u + 10 + w),
	};
	return a;
}

static void sink_tx(void *ctx, const struct sockaddr_in *to,
		    const uint8_t *buf, size_t len)
{
	struct sink *k = ctx;
	struct sent *s;

	if (k->n == MAX_OUT) {
		k->bad = true;
		return;
	}
	s = &k->s[k->n++];
	s->to = *to;
	if (esa_wire_parse(buf, len, &s->m))
		k->bad = true;
	else
		esa_values_from_be(s->v, buf + ESA_HDR_LEN, s->m.value_count);
}

FIXTURE(px) {
	struct esa_ps *ps;
	struct sink sink;
};

FIXTURE_VARIANT(px) {
	const struct row *row;
};

FIXTURE_SETUP(px)
{
	struct esa_ps_config pc = {
		.mode = variant->row->mode, .cache_entries = CACHE,
		.result_on_complete = variant->row->result_on_complete,
	};
	struct esa_ps_job_config jc = { .job_id = JOB, .fan_in = FAN,
					.worker_known = (1u << FAN) - 1 };

	for (unsigned w = 0; w < FAN; w++)
		jc.worker[w] = worker_addr(w);
	ASSERT_EQ(0, esa_ps_new(&pc, sink_tx, &self->sink, &self->ps))
		TH_LOG("%s", esa_last_error());
	ASSERT_EQ(0, esa_ps_add_job(self->ps, &jc));
}

FIXTURE_TEARDOWN(px)
{
	esa_ps_close(self->ps);
}

/* Piece @p as the PS receives it, from its worker (or the switch). */
static void send_piece(struct __test_metadata *_metadata, FIXTURE_DATA(px) *self,
		       const struct piece *p)
{
	uint8_t buf[ESA_MTU];
	int32_t v[ESA_MAX_VALUES];
	unsigned n = p->count ? p->count : NV;
	struct esa_meta m = { .flags = p->flags, .job_id = JOB,
			      .fan_in = p->fan_in ? p->fan_in : FAN,
			      .value_count = n, .seq = p->seq,
			      .agg_index = 3, .bitmap = p->bitmap };
	struct sockaddr_in from = worker_addr(__builtin_ctz(p->bitmap));

	for (unsigned i = 0; i < n; i++)
		v[i] = p->val;
	esa_wire_put(buf, &m);
	esa_values_to_be(buf + ESA_HDR_LEN, v, n);
	self->sink.n = 0;
	ASSERT_EQ(0, esa_ps_input(self->ps, buf, ESA_HDR_LEN + 4 * n, &from));
}

static void check_answer(struct __test_metadata *_metadata,
			 const struct row *r, const struct sent *s,
			 const struct answer *a, int k)
{
	struct sockaddr_in to = worker_addr(a->to);
	unsigned i;

	EXPECT_EQ(a->flags, s->m.flags) TH_LOG("piece %d", k);
	EXPECT_EQ(a->seq, s->m.seq) TH_LOG("piece %d", k);
	EXPECT_EQ(a->bitmap, s->m.bitmap) TH_LOG("piece %d", k);
	EXPECT_EQ(JOB, s->m.job_id) TH_LOG("piece %d", k);
	EXPECT_EQ(to.sin_addr.s_addr, s->to.sin_addr.s_addr)
		TH_LOG("piece %d: to worker %d", k, a->to);
	/* through the switch every answer goes to its aggregation port */
	EXPECT_EQ(r->mode == ESA_PS_SWITCH ? htons(ESA_UDP_PORT) : to.sin_port,
		  s->to.sin_port) TH_LOG("piece %d", k);
	if (a->flags & ESA_F_RESEND) {
		EXPECT_EQ(1, s->m.value_count) TH_LOG("piece %d: a pull", k);
		return;
	}
	ASSERT_EQ(NV, s->m.value_count) TH_LOG("piece %d", k);
	for (i = 0; i < NV; i++)
		ASSERT_EQ(a->val, s->v[i]) TH_LOG("piece %d value %u", k, i);
}

TEST_F(px, row)
{
	const struct row *r = variant->row;
	const struct counts *w = &r->want;
	struct esa_ps_stats st;

	for (int k = 0; k < MAX_PIECES && r->p[k].bitmap; k++) {
		const struct piece *p = &r->p[k];

		send_piece(_metadata, self, p);
		ASSERT_FALSE(self->sink.bad) TH_LOG("piece %d", k);
		ASSERT_EQ(p->n_out, self->sink.n) TH_LOG("piece %d: answers", k);
		for (int i = 0; i < p->n_out; i++)
			check_answer(_metadata, r, &self->sink.s[i], &p->out[i], k);
	}
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
	EXPECT_EQ(w->merged, st.merged);
	EXPECT_EQ(w->duplicates, st.duplicates);
	EXPECT_EQ(w->overlaps, st.overlaps);
	EXPECT_EQ(w->finished, st.finished);
	EXPECT_EQ(w->finished_by_ps, st.finished_by_ps);
	EXPECT_EQ(w->result_packets, st.result_packets);
	EXPECT_EQ(w->resend_answers, st.resend_answers);
	EXPECT_EQ(w->pulls, st.pulls);
	EXPECT_EQ(w->overflows, st.overflows);
	EXPECT_EQ(w->stale, st.stale);
	EXPECT_EQ(w->conflicts, st.conflicts);
	EXPECT_EQ(w->bad, st.bad);
}

#define RES	ESA_F_RESULT
#define PULL	(ESA_F_RESULT | ESA_F_RESEND)

/*
 * A duplicate that is not a RESEND (a plain collision of a worker the sum
 * holds, before and after it is final) is answered by nothing; only a
 * RESEND is: a pull of the missing workers while the sum is unfinished,
 * the RESULT once it is final.
 */
static const struct row collision_duplicates = {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.p = {
		{ ESA_F_PARTIAL, 5, 0x3, 11 },
		{ ESA_F_COLLISION, 5, 0x1, 1 },
		{ ESA_F_COLLISION | ESA_F_RESEND, 5, 0x1, 1,
		  .n_out = 1, .out = { { PULL, 5, 0xc, 0, 0 } } },
		{ ESA_F_COLLISION, 5, 0x4, 100 },
		{ ESA_F_COLLISION, 5, 0x8, 1000,
		  .n_out = 1, .out = { { RES, 5, 0xf, 1111, 0 } } },
		{ ESA_F_COLLISION, 5, 0x2, 10 },
		{ ESA_F_RESEND, 5, 0x2, 10,
		  .n_out = 1, .out = { { RES, 5, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 3, .duplicates = 4, .finished = 1,
		  .finished_by_ps = 1, .result_packets = 2,
		  .resend_answers = 1, .pulls = 1 },
};

/* OVERFLOW on the first piece survives the merges into the RESULT. */
static const struct row overflow_first_piece = {
	.mode = ESA_PS_SWITCH,
	.p = {
		{ ESA_F_PARTIAL | ESA_F_OVERFLOW, 9, 0x3, 11 },
		{ ESA_F_PREEMPTED, 9, 0x4, 100 },
		{ ESA_F_COLLISION, 9, 0x8, 1000,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 9, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 3, .finished = 1, .finished_by_ps = 1,
		  .result_packets = 1, .overflows = 1 },
};

/* ... and on a middle piece, whatever the last one carries. */
static const struct row overflow_middle_piece = {
	.mode = ESA_PS_SWITCH,
	.p = {
		{ ESA_F_COLLISION, 2, 0x1, 1 },
		{ ESA_F_PREEMPTED | ESA_F_OVERFLOW, 2, 0x6, 110 },
		{ ESA_F_COLLISION, 2, 0x8, 1000,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 2, 0xf, 1111, 0 } } },
		{ ESA_F_RESEND, 2, 0x8, 1000,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 2, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 3, .duplicates = 1, .finished = 1,
		  .finished_by_ps = 1, .result_packets = 2,
		  .resend_answers = 1, .overflows = 1 },
};

/*
 * Merges saturate at the int32 bounds, never wrap, and flag OVERFLOW
 * (the PS's own saturation, no piece carried the flag).
 */
static const struct row merge_saturates = {
	.mode = ESA_PS_SWITCH,
	.p = {
		{ ESA_F_PARTIAL, 7, 0x3, INT32_MAX - 10 },
		{ ESA_F_COLLISION, 7, 0x4, 100 },
		{ ESA_F_COLLISION, 7, 0x8, -5,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 7, 0xf,
					 INT32_MAX - 5, 0 } } },
		{ ESA_F_PARTIAL, 8, 0x3, INT32_MIN + 10 },
		{ ESA_F_PREEMPTED, 8, 0xc, -100,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 8, 0xf,
					 INT32_MIN, 0 } } },
	},
	.want = { .merged = 5, .finished = 2, .finished_by_ps = 2,
		  .result_packets = 2, .overflows = 2 },
};

/*
 * A COMPLETE is final over a partial merge, a later COMPLETE flagged
 * OVERFLOW is a duplicate that changes nothing, and a resend is answered
 * with the first.
 */
static const struct row complete_over_partial = {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.p = {
		{ ESA_F_PARTIAL, 4, 0x3, 11 },
		{ ESA_F_COMPLETE, 4, 0xf, 1111,
		  .n_out = 1, .out = { { RES, 4, 0xf, 1111, 0 } } },
		{ ESA_F_COMPLETE | ESA_F_OVERFLOW, 4, 0xf, 5 },
		{ ESA_F_RESEND, 4, 0x1, 1,
		  .n_out = 1, .out = { { RES, 4, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 1, .duplicates = 2, .finished = 1,
		  .result_packets = 2, .resend_answers = 1 },
};

/*
 * Without results for COMPLETE sums (esa, static: the switch multicast
 * them) the PS stays silent, and answers a resend with the sum and its
 * OVERFLOW flag.
 */
static const struct row complete_overflow_silent = {
	.mode = ESA_PS_SWITCH, .result_on_complete = false,
	.p = {
		{ ESA_F_COMPLETE | ESA_F_OVERFLOW, 6, 0xf, 5 },
		{ ESA_F_RESEND, 6, 0x4, 100,
		  .n_out = 1, .out = { { RES | ESA_F_OVERFLOW, 6, 0xf, 5, 0 } } },
	},
	.want = { .duplicates = 1, .finished = 1, .result_packets = 1,
		  .resend_answers = 1, .overflows = 1 },
};

/* A piece overlapping the sum in part is ignored; singles complete it. */
static const struct row overlap_ignored = {
	.mode = ESA_PS_SWITCH,
	.p = {
		{ ESA_F_PARTIAL, 3, 0x3, 11 },
		{ ESA_F_PREEMPTED, 3, 0x6, 110 },
		{ ESA_F_COLLISION, 3, 0x4, 100 },
		{ ESA_F_COLLISION, 3, 0x8, 1000,
		  .n_out = 1, .out = { { RES, 3, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 3, .overlaps = 1, .finished = 1,
		  .finished_by_ps = 1, .result_packets = 1 },
};

/*
 * The ring across the sequence wrap (16 entries: 2^32 - 1 and 15 share
 * one): 15 is newer than 2^32 - 1 and replaces its final entry; 2^32 - 1
 * is then older (stale), 31 newer while 15 is unfinished (a conflict).
 */
static const struct row ring_wrap = {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.p = {
		{ ESA_F_COMPLETE, UINT32_MAX, 0xf, 7,
		  .n_out = 1, .out = { { RES, UINT32_MAX, 0xf, 7, 0 } } },
		{ ESA_F_PARTIAL, 15, 0x3, 11 },
		{ ESA_F_COLLISION, UINT32_MAX, 0x4, 100 },
		{ ESA_F_COLLISION, 31, 0x4, 100 },
		{ ESA_F_PREEMPTED, 15, 0xc, 1100,
		  .n_out = 1, .out = { { RES, 15, 0xf, 1111, 0 } } },
		{ ESA_F_RESEND, UINT32_MAX, 0x1, 1 },
	},
	.want = { .merged = 2, .finished = 2, .finished_by_ps = 1,
		  .result_packets = 2, .stale = 2, .conflicts = 1 },
};

/*
 * Host-only: a final sum goes to every worker, a resend's answer to the
 * resender alone (worker 0 too), a pull to each missing worker.
 */
static const struct row host_only_answers = {
	.mode = ESA_PS_HOST_ONLY,
	.p = {
		{ 0, 1, 0x1, 1 },
		{ 0, 1, 0x2, 10 },
		{ 0, 1, 0x4, 100 },
		{ 0, 1, 0x8, 1000, .n_out = 4, .out = {
			{ RES, 1, 0xf, 1111, 0 }, { RES, 1, 0xf, 1111, 1 },
			{ RES, 1, 0xf, 1111, 2 }, { RES, 1, 0xf, 1111, 3 } } },
		{ ESA_F_RESEND, 1, 0x4, 100,
		  .n_out = 1, .out = { { RES, 1, 0xf, 1111, 2 } } },
		{ ESA_F_RESEND, 1, 0x1, 1,
		  .n_out = 1, .out = { { RES, 1, 0xf, 1111, 0 } } },
		{ 0, 2, 0x2, 10 },
		{ ESA_F_RESEND, 2, 0x2, 10, .n_out = 3, .out = {
			{ PULL, 2, 0xd, 0, 0 }, { PULL, 2, 0xd, 0, 2 },
			{ PULL, 2, 0xd, 0, 3 } } },
	},
	.want = { .merged = 5, .duplicates = 3, .finished = 1,
		  .finished_by_ps = 1, .result_packets = 6,
		  .resend_answers = 2, .pulls = 3 },
};

/* Pieces inconsistent with the sum or the job change nothing. */
static const struct row bad_pieces = {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.p = {
		{ ESA_F_PARTIAL, 1, 0x3, 11 },
		{ ESA_F_COLLISION, 1, 0x4, 100, .count = 4 },
		{ ESA_F_COMPLETE, 1, 0x7, 111 },
		{ ESA_F_PREEMPTED, 1, 0xc, 1100,
		  .n_out = 1, .out = { { RES, 1, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 2, .finished = 1, .finished_by_ps = 1,
		  .result_packets = 1, .bad = 2 },
};

/*
 * Pieces whose fan-in is not the job's, between two halves of a sum,
 * even one with a bitmap that looks complete: not merged, and the sum
 * completes with the job's own.
 */
static const struct row fan_in_not_the_jobs = {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.p = {
		{ ESA_F_PARTIAL, 1, 0x3, 11 },
		{ ESA_F_PARTIAL, 1, 0xc, 1100, .fan_in = FAN + 1 },
		{ ESA_F_COMPLETE, 1, 0x7, 111, .fan_in = FAN - 1 },
		{ ESA_F_PARTIAL, 1, 0xc, 1100,
		  .n_out = 1, .out = { { RES, 1, 0xf, 1111, 0 } } },
	},
	.want = { .merged = 2, .finished = 1, .finished_by_ps = 1,
		  .result_packets = 1, .bad = 2 },
};

FIXTURE_VARIANT_ADD(px, collision_duplicates) { .row = &collision_duplicates };
FIXTURE_VARIANT_ADD(px, overflow_first_piece) { .row = &overflow_first_piece };
FIXTURE_VARIANT_ADD(px, overflow_middle_piece) { .row = &overflow_middle_piece };
FIXTURE_VARIANT_ADD(px, merge_saturates) { .row = &merge_saturates };
FIXTURE_VARIANT_ADD(px, complete_over_partial) { .row = &complete_over_partial };
FIXTURE_VARIANT_ADD(px, complete_overflow_silent) {
	.row = &complete_overflow_silent };
FIXTURE_VARIANT_ADD(px, overlap_ignored) { .row = &overlap_ignored };
FIXTURE_VARIANT_ADD(px, ring_wrap) { .row = &ring_wrap };
FIXTURE_VARIANT_ADD(px, host_only_answers) { .row = &host_only_answers };
FIXTURE_VARIANT_ADD(px, bad_pieces) { .row = &bad_pieces };
FIXTURE_VARIANT_ADD(px, fan_in_not_the_jobs) { .row = &fan_in_not_the_jobs };

TEST_HARNESS_MAIN
