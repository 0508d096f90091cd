/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aggregator state machine, run with the aggregator's lock held
 * (esa_lock.h). Rules for this file (the verifier's and ours):
 *  - no kfunc or BPF-to-BPF call, no helper but the clock read of
 *    esa_req_now(): everything is __always_inline, and a holder of the
 *    lock waits for nothing, so its waiters' wait stays short;
 *  - every loop is bounded by ESA_MAX_VALUES and by a count read afresh
 *    from map memory, so the count the loop refines is dead after it and
 *    the verifier prunes the states of different loop exits;
 *  - a saturation is recorded in memory, not in a register, for the same
 *    reason.
 * Values in the aggregator are host order, in the scratch buffers big
 * endian as on the wire.
 */
#ifndef _ESA_AGG_H
#define _ESA_AGG_H

#include "esa_flavour.h"
#include "esa_pkt.h"

/* What the locked step decided; esa_switch.bpf.c acts on it unlocked. */
enum esa_act {
	ESA_ACT_CLAIMED,	/* free slot taken (or one an earlier
				 * incarnation of the job held); absorbed */
	ESA_ACT_ADDED,		/* values added; packet absorbed */
	ESA_ACT_DUP,		/* worker already counted; dropped */
	ESA_ACT_COMPLETE,	/* sum in s->pkt: COMPLETE (+ RESULT) out */
	ESA_ACT_FLUSH,		/* resend: partial in s->pkt to the PS */
	ESA_ACT_FLUSH_DUP,	/* as FLUSH, the resender was counted */
	ESA_ACT_COMPLETE_DUP,	/* as COMPLETE, the resender was counted */
	ESA_ACT_PASS_RESEND,	/* resend forwarded unaggregated */
	ESA_ACT_COLLIDE,	/* forwarded unaggregated, COLLISION */
	ESA_ACT_PREEMPT,	/* claimed from a complete slot, no output */
	ESA_ACT_PREEMPT_EVICT,	/* claimed; resident in s->evict, PREEMPTED */
	ESA_ACT_RECLAIM,	/* claimed a stale complete slot, no output */
	ESA_ACT_RECLAIM_EVICT,	/* claimed a stale slot; s->evict, PARTIAL */
	ESA_ACT_RESULT,		/* PS result, slot untouched: multicast */
	ESA_ACT_RESULT_RELEASE,	/* PS result released the held slot */
	ESA_ACT_MISMATCH,	/* value_count differs from the aggregate's */
	ESA_ACT_ASK,		/* esa clash: arbitrate unlocked, retry */
	ESA_ACT_EARLY,		/* the rest of the sum had left: partial in
				 * s->pkt to the PS, slot freed */
	ESA_ACT_EARLY_PASS,	/* as EARLY, the packet alone completes what
				 * had left: on to the PS as it is, no claim */
	ESA_ACT_BUSY,		/* not run: the lock stayed held; dropped */
};

/*
 * The packet as the locked step needs it. The one-byte fields sit
 * together: the module flavour's stack, this struct and its callees'
 * frames together, is near the verifier's 512 bytes.
 */
struct esa_req {
	__u64	now;			/* the last esa_req_now() */
	__u64	timeout_ns;		/* 0: never reclaim */
	/*
	 * Where the step's outputs go, kept here rather than in registers:
	 * the value loops then have every register they need.
	 */
	__u32	slot;			/* the aggregator */
	__be32	ps;			/* the job's PS */
	__u32	job_id;
	__u32	inc;			/* the job's incarnation */
	__u32	seq;
	__u32	bit;			/* sender's bit (data packets) */
	__u32	full;			/* all fan_in bits */
	__u32	count;			/* value_count */
	__u8	policy;			/* enum esa_policy */
	__u8	flags;
	__u8	prio;
	__u8	is_result;
	__u8	track_gone;		/* esa, static: keep gone records */
	/*
	 * The step's own gone record goes at its end (forget_own: its sum
	 * claimed or finished), then the one it noted (note_job, 0: none;
	 * the rest of the note is in the scratch, s->note_*). Ownership
	 * changes, for the occupancy count (ESA_ACCT_CLAIM/RELEASE): the
	 * sender's job took the slot (claimed), the slot the sender's job
	 * held was freed (released), the job that lost the slot to the claim
	 * (lost_job, 0: it was free; its incarnation is s->lost_inc).
	 * Only the fields the step branches on are here: the module
	 * flavour's stack is at the 6.1 verifier's limit, and the verifier
	 * knows a value on the stack where it would know none in a map.
	 */
	__u8	forget_own;
	__u8	claimed;
	__u8	released;
	__u8	arb_valid;		/* a verdict for s->own_* */
	__u8	arb_verdict;		/* enum esa_arb_verdict */
	__u32	note_job;
	__u32	lost_job;
};

/*
 * a->values[i] = a->values[i] + v, saturating at INT32_MIN/INT32_MAX: a
 * 32-bit add, overflowed iff both operands have the sign the sum lacks.
 */
static __always_inline void esa_sat_add(struct esa_agg *a,
					struct esa_scratch *s, __s32 *val,
					__u32 v)
{
	__u32 x = (__u32)*val, sum = x + v;

	if ((__s32)((x ^ sum) & (v ^ sum)) < 0) {
		sum = (__s32)x < 0 ? 0x80000000u : 0x7fffffffu;
		a->overflow = 1;
		s->saturated = 1;
	}
	*val = (__s32)sum;
}

/*
 * What esa_vals() does with each value i of the aggregate; its callers
 * pass a constant, so each call compiles to the one loop it needs.
 */
enum esa_vals_op {
	ESA_VALS_LOAD	= 1 << 0,	/* a->values[i] = s->pkt[i] (claim) */
	ESA_VALS_ADD	= 1 << 1,	/* a->values[i] += s->pkt[i], saturating */
	ESA_VALS_OUT	= 1 << 2,	/* s->pkt[i] = a->values[i] (sum out) */
	ESA_VALS_EVICT	= 1 << 3,	/* s->evict[i] = a->values[i] */
};

static __always_inline void esa_vals(struct esa_agg *a, struct esa_scratch *s,
				     const int op)
{
	__be32 *out = op & ESA_VALS_EVICT ? s->evict : s->pkt;
	__u32 n = READ_ONCE_U16(a->value_count), i;
	__s32 *vals = a->values;

	esa_opaque(vals);
	for (i = 0; i < ESA_MAX_VALUES; i++) {
		if (i >= n)
			break;
		if (op & ESA_VALS_LOAD)
			vals[i] = (__s32)bpf_ntohl(s->pkt[i]);
		if (op & ESA_VALS_ADD)
			esa_sat_add(a, s, &vals[i], bpf_ntohl(s->pkt[i]));
		if (op & (ESA_VALS_OUT | ESA_VALS_EVICT))
			out[i] = bpf_htonl((__u32)vals[i]);
	}
}

/*
 * The clock, read under the lock by the steps that need it (claims,
 * reclaim checks, flushes, evictions), not by an add or a completion:
 * bpf_ktime_get_ns() is a helper call, about 6 % of an add at 363 values
 * (Documentation/performance.rst). A claim after a reclaim check or
 * with an eviction reads it twice, nanoseconds apart.
 */
static __always_inline __u64 esa_req_now(struct esa_req *r)
{
	r->now = esa_now();
	return r->now;
}

/* Microseconds since the resident's claim (0 if claimed after r->now). */
static __always_inline __u32 esa_held_us(const struct esa_agg *a,
					 struct esa_req *r)
{
	__u64 now = esa_req_now(r);
	__u64 us = now > a->claim_ns ? (now - a->claim_ns) / 1000 : 0;

	return us > 0xffffffffu ? 0xffffffffu : (__u32)us;
}

/* The resident partial into s->evict with its identity. */
static __always_inline void esa_evict(struct esa_agg *a,
				      struct esa_scratch *s,
				      struct esa_req *r)
{
	s->evict_held_us = esa_held_us(a, r);
	s->evict_job = a->job_id;
	s->evict_incarnation = a->incarnation;
	s->evict_seq = a->seq;
	s->evict_bitmap = a->bitmap;
	s->evict_count = a->value_count;
	s->evict_priority = a->priority;
	s->evict_overflow = a->overflow;
	esa_vals(a, s, ESA_VALS_EVICT);
}

/* The way holding the gone record of (job, inc, seq), or ESA_GONE_WAYS. */
static __always_inline __u32 esa_gone_find(const struct esa_agg *a,
					   __u32 job, __u32 inc, __u32 seq)
{
	__u32 i;

	for (i = 0; i < ESA_GONE_WAYS; i++)
		if (a->gone_rec[i].job_id == job && a->gone_rec[i].seq == seq &&
		    a->gone_rec[i].incarnation == inc)
			break;
	return i;
}

/* A way without a record, or ESA_GONE_WAYS. */
static __always_inline __u32 esa_gone_free_way(const struct esa_agg *a)
{
	__u32 i;

	for (i = 0; i < ESA_GONE_WAYS; i++)
		if (!a->gone_rec[i].job_id)
			break;
	return i;
}

/* Workers of the packet's sum whose values already left the switch. */
static __always_inline __u32 esa_gone_get(const struct esa_agg *a,
					  const struct esa_req *r)
{
	__u32 i;

	if (!r->track_gone)
		return 0;
	i = esa_gone_find(a, r->job_id, r->inc, r->seq);
	return i < ESA_GONE_WAYS ? a->gone_rec[i].bitmap : 0;
}

/*
 * Workers @bits of (job, inc, seq) left the switch without this
 * aggregator: a note for the end of the step (esa_gone_apply()).
 */
static __always_inline void esa_gone_note(struct esa_req *r,
					  struct esa_scratch *s, __u32 job,
					  __u32 inc, __u32 seq, __u32 bits,
					  __u32 full)
{
	r->note_job = job;
	s->note_inc = inc;
	s->note_seq = seq;
	s->note_bits = bits;
	s->note_full = full;
}

/*
 * The step's record changes: the packet's own record goes if its sum
 * claimed or finished (r->forget_own); a note joins its sum's record, or
 * starts one in a free way, else in the next way in turn. A record whose
 * every worker has left goes: no packet of its sum is to come that could
 * claim.
 */
static __always_inline void esa_gone_apply(struct esa_agg *a,
					   const struct esa_scratch *s,
					   const struct esa_req *r)
{
	struct esa_gone *g;
	__u32 i;

	if (!r->track_gone)
		return;
	if (r->forget_own) {
		i = esa_gone_find(a, r->job_id, r->inc, r->seq);
		if (i < ESA_GONE_WAYS)
			a->gone_rec[i].job_id = 0;
	}
	if (!r->note_job)
		return;
	i = esa_gone_find(a, r->note_job, s->note_inc, s->note_seq);
	if (i >= ESA_GONE_WAYS)
		i = esa_gone_free_way(a);
	if (i >= ESA_GONE_WAYS)
		i = a->gone_next++;
	g = &a->gone_rec[i & (ESA_GONE_WAYS - 1)];
	if (g->job_id != r->note_job || g->seq != s->note_seq ||
	    g->incarnation != s->note_inc) {
		g->job_id = r->note_job;
		g->incarnation = s->note_inc;
		g->seq = s->note_seq;
		g->bitmap = 0;
	}
	g->bitmap |= s->note_bits;
	if (g->bitmap == s->note_full)
		g->job_id = 0;
}

static __always_inline void esa_claim(struct esa_agg *a,
				      struct esa_scratch *s,
				      struct esa_req *r, __u32 gone)
{
	if (a->state != ESA_AGG_FREE) {
		r->lost_job = a->job_id;
		s->lost_inc = a->incarnation;
	}
	r->claimed = 1;
	a->job_id = r->job_id;
	a->incarnation = r->inc;
	a->seq = r->seq;
	a->bitmap = r->bit;
	a->gone = gone;
	a->value_count = r->count;
	a->priority = r->prio;
	a->state = ESA_AGG_PARTIAL;
	a->overflow = 0;
	a->claim_ns = esa_req_now(r);
	esa_vals(a, s, ESA_VALS_LOAD);
}

/* The sender's job gives up the slot (complete, flushed, result passed). */
static __always_inline void esa_free(struct esa_agg *a, struct esa_req *r)
{
	r->released = 1;
	a->job_id = 0;
	a->incarnation = 0;
	a->seq = 0;
	a->bitmap = 0;
	a->gone = 0;
	a->state = ESA_AGG_FREE;
}

/*
 * The packet's sum takes the aggregator (free, stale or preempted) with
 * @gone, its record's workers; a partial resident is evicted into
 * s->evict (@evict) and what of it left is recorded for its later packets.
 */
static __always_inline void esa_take(struct esa_agg *a, struct esa_scratch *s,
				     struct esa_req *r, __u32 gone, int evict)
{
	r->forget_own = 1;
	if (evict) {
		esa_evict(a, s, r);
		esa_gone_note(r, s, a->job_id, a->incarnation, a->seq,
			      a->bitmap | a->gone, 0);
	}
	esa_claim(a, s, r, gone);
}

/* A packet of this (job, seq) on its own aggregator. */
static __always_inline int esa_step_own(struct esa_agg *a,
					struct esa_scratch *s,
					struct esa_req *r)
{
	int resend = r->flags & ESA_F_RESEND;
	__u32 counted, newmap;

	if (a->value_count != r->count)
		return ESA_ACT_MISMATCH;
	if (a->state == ESA_AGG_DONE)
		return resend ? ESA_ACT_PASS_RESEND : ESA_ACT_DUP;
	/* Its values are in this partial, or already at the PS. */
	counted = (a->bitmap | a->gone) & r->bit;
	if (counted && !resend)
		return a->bitmap & r->bit ? ESA_ACT_DUP : ESA_ACT_COLLIDE;
	newmap = a->bitmap | (counted ? 0 : r->bit);
	if (!resend && newmap != r->full && (newmap | a->gone) != r->full) {
		esa_vals(a, s, ESA_VALS_ADD);
		a->bitmap = newmap;
		return ESA_ACT_ADDED;
	}
	/*
	 * The sum leaves the switch: complete, flushed by a resend, or all
	 * its workers are in it or already at the PS.
	 */
	if (counted)
		esa_vals(a, s, ESA_VALS_OUT);
	else
		esa_vals(a, s, ESA_VALS_ADD | ESA_VALS_OUT);
	s->out_bitmap = newmap;
	s->out_overflow = a->overflow;
	s->out_held_us = esa_held_us(a, r);
	if (newmap == r->full && r->policy == ESA_POLICY_ATP && !resend) {
		/* atp: held until the PS's RESULT passes back. */
		a->bitmap = newmap;
		a->state = ESA_AGG_DONE;
		return ESA_ACT_COMPLETE;
	}
	/* A flush leaves workers to come: their packets must not claim. */
	if (resend && (newmap | a->gone) != r->full)
		esa_gone_note(r, s, r->job_id, r->inc, r->seq, newmap | a->gone,
			      r->full);
	esa_free(a, r);
	if (newmap == r->full)
		return counted ? ESA_ACT_COMPLETE_DUP : ESA_ACT_COMPLETE;
	if (!resend)
		return ESA_ACT_EARLY;
	return counted ? ESA_ACT_FLUSH_DUP : ESA_ACT_FLUSH;
}

/* A data packet finding its aggregator free or held by someone else. */
static __always_inline int esa_step_other(struct esa_agg *a,
					  struct esa_scratch *s,
					  struct esa_req *r)
{
	int partial = a->state == ESA_AGG_PARTIAL, verdict;
	__u32 gone;

	if (r->flags & ESA_F_RESEND) {
		/* a resend never claims */
		esa_gone_note(r, s, r->job_id, r->inc, r->seq, r->bit, r->full);
		return ESA_ACT_PASS_RESEND;
	}
	gone = esa_gone_get(a, r);
	if (gone & r->bit)
		return ESA_ACT_COLLIDE;	/* left already: the PS dedupes */
	if ((gone | r->bit) == r->full) {
		/* the last of a sum whose rest left: nothing to claim for */
		r->forget_own = 1;
		return ESA_ACT_EARLY_PASS;
	}
	/*
	 * A partial of an earlier incarnation of this job id is nobody's:
	 * its job was deleted, so it is neither added to nor sent anywhere.
	 */
	if (a->state == ESA_AGG_FREE ||
	    (a->job_id == r->job_id && a->incarnation != r->inc)) {
		esa_take(a, s, r, gone, 0);
		return ESA_ACT_CLAIMED;
	}
	if (r->timeout_ns && esa_req_now(r) > a->claim_ns &&
	    r->now - a->claim_ns > r->timeout_ns) {
		esa_take(a, s, r, gone, partial);
		return partial ? ESA_ACT_RECLAIM_EVICT : ESA_ACT_RECLAIM;
	}
	if (a->job_id == r->job_id || r->policy != ESA_POLICY_ESA) {
		/* another sequence of the same job, or a policy that never
		 * preempts: no question to ask */
		esa_gone_note(r, s, r->job_id, r->inc, r->seq, r->bit, r->full);
		return ESA_ACT_COLLIDE;
	}
	if (r->arb_valid && s->own_job == a->job_id &&
	    s->own_inc == a->incarnation && s->own_seq == a->seq) {
		verdict = r->arb_verdict;
	} else if (!r->arb_valid) {
		s->own_job = a->job_id;
		s->own_inc = a->incarnation;
		s->own_seq = a->seq;
		s->own_bitmap = a->bitmap;
		s->own_prio = a->priority;
		return ESA_ACT_ASK;
	} else {
		/* The resident changed while we asked: be conservative. */
		verdict = ESA_ARB_COLLIDE;
	}
	if (verdict != ESA_ARB_PREEMPT) {
		esa_gone_note(r, s, r->job_id, r->inc, r->seq, r->bit, r->full);
		return ESA_ACT_COLLIDE;
	}
	esa_take(a, s, r, gone, partial);
	return partial ? ESA_ACT_PREEMPT_EVICT : ESA_ACT_PREEMPT;
}

/*
 * A RESULT from the PS: release the slot it held complete (atp). A pull
 * (RESULT | RESEND) carries no sum and releases nothing.
 */
static __always_inline int esa_step_result(struct esa_agg *a,
					   struct esa_req *r)
{
	if (a->state == ESA_AGG_DONE && a->job_id == r->job_id &&
	    a->incarnation == r->inc && a->seq == r->seq &&
	    !(r->flags & ESA_F_RESEND)) {
		esa_free(a, r);
		return ESA_ACT_RESULT_RELEASE;
	}
	return ESA_ACT_RESULT;
}

static __always_inline int esa_step(struct esa_agg *a, struct esa_scratch *s,
				    struct esa_req *r)
{
	int act;

	if (r->is_result)
		return esa_step_result(a, r);
	r->forget_own = 0;
	r->note_job = 0;
	/* an aggregator is owned by (job id, incarnation, seq) */
	if (a->state != ESA_AGG_FREE && a->job_id == r->job_id &&
	    a->incarnation == r->inc && a->seq == r->seq)
		act = esa_step_own(a, s, r);
	else
		act = esa_step_other(a, s, r);
	esa_gone_apply(a, s, r);
	return act;
}

#endif /* _ESA_AGG_H */
