// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized and mutated packets through the data plane (BPF_PROG_TEST_RUN),
 * in segments under each policy (esa, atp, static, esa with reclaim).
 * An independent oracle in this file classifies every frame by the rules
 * of Documentation/wire-protocol.rst (L2 frame, invalid aggregation frame
 * with its drop reason, valid frame of job J on slot S). Invariants checked:
 *  - every run returns a verdict (no crash, no ABORTED, no PASS);
 *  - a frame the oracle calls invalid or L2 changes no aggregator;
 *  - a valid frame of job J changes no aggregator but its own slot S, and
 *    changes S from another job's hands only by J taking it; a PS's
 *    RESULT of (J, seq) changes S only by releasing the sum of (J, seq)
 *    it holds complete (atp);
 *  - gone records (esa, static; none under atp): a slot never holds a
 *    sum whose workers are all in it or gone (it would have left), nor a
 *    worker both in it and gone, nor a record of its own sum; a record
 *    names a job and some but not all of its workers; another job's
 *    record is only ever dropped or replaced, or written for the resident
 *    the frame took the slot from;
 *  - a frame (IPv4 or ARP, untagged or under 802.1Q/802.1ad tags) claiming
 *    an address bound to another port is a spoof: it changes nothing and
 *    counts only DROP_SPOOF, for the job that bound the address; one bound
 *    at first sight binds to the port it is first seen on, never by an
 *    ARP sender with a group MAC; a frame from a group source MAC is a
 *    spoof of no job (switch-wide only);
 *  - UDP to the aggregator in a tagged frame, in a first fragment, or under
 *    more tags than the switch looks through is dropped as malformed; a
 *    later fragment is data (switched, whatever its bytes look like);
 *  - a frame switched at L2 leaves unchanged (an L4 checksum the switch
 *    completes aside);
 *  - counters: forwarded, rx, spoofs and every drop reason equal the
 *    oracle's counts; rx equals the sum of the outcome counters; each
 *    per-job counter sums to the global one.
 * usage: test_fuzz [--kmod AGGCTL] [packets-per-segment [seed]]
 * With --kmod, the module flavour against the loaded module (in the VM):
 * test_fuzz_kmod.sh registers the jobs, and each segment sets the policy,
 * slots and reclaim timeout through AGGCTL instead of the config map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "esa_genl.h"
#include "dp_util.h"
#include "kselftest.h"

#define SLOTS	16
#define NJOBS	3

static const __u8 job_fan[NJOBS + 1] = { 0, 3, 4, 2 };
static const __u16 job_count[NJOBS + 1] = { 0, 64, 100, ESA_MAX_VALUES };
static const __u32 job_base[NJOBS + 1] = { 0, 0, 6, 11 };
static const __u32 job_quota[NJOBS + 1] = { 0, 6, 5, 5 };

struct oracle {
	__u64 fwd, rx;
	__u64 spoof_j[NJOBS + 1];		/* spoofs by the binding job (0: none) */
	__u64 drop_g[__ESA_CNT_MAX];		/* all drops by reason */
	__u64 drop_j[NJOBS + 1][__ESA_CNT_MAX];	/* job-level drops */
	__u64 rx_j[NJOBS + 1];
	__u64 ps_results;			/* valid RESULTs */
	__u64 ps_pulls;				/* valid RESULT | RESEND */
};

enum { K_NONE, K_L2, K_BAD, K_VALID, K_SPOOF };

/*
 * Bound addresses: job 2's worker 0 on the test port (1, where
 * BPF_PROG_TEST_RUN frames come in), job 3's worker 1 on another port (9:
 * every frame claiming it is a spoof), job 1's PS at first sight.
 */
#define TEST_PORT	1
static struct binding {
	__u32 addr;
	__u32 port;		/* 0: first sight */
	__u16 job;
} bindings[] = {
	{ DP_WORKER_ADDR(2, 0), TEST_PORT, 2 },
	{ DP_WORKER_ADDR(3, 1), 9, 3 },
	{ DP_PS_ADDR(1), 0, 1 },
};
#define NBIND (sizeof(bindings) / sizeof(bindings[0]))

struct verdict {
	int kind;
	__u32 job;	/* K_VALID, or a job-level K_BAD */
	__u32 slot;
	unsigned int reason;
};

static __u32 policy;
static const char *aggctl;	/* module flavour: the module's config by aggctl */

static __u16 be16(const __u8 *p) { return p[0] << 8 | p[1]; }
static __u32 be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static int vlan_proto(__u16 proto)
{
	return proto == 0x8100 || proto == 0x88a8;
}

/*
 * The job whose bound address the IPv4 sender of the L3 header at @l3
 * (EtherType @proto: ARP sender, IPv4 source) claims from another port, or
 * 0. A first-sight binding binds, but not to an ARP sender's group MAC.
 */
static __u32 spoof_of(const __u8 *b, __u32 len, __u32 l3, __u16 proto)
{
	const __u8 *mac;
	__u32 addr, i;

	if (proto == 0x0806 && len >= l3 + 18 &&
	    (be16(b + l3) == 1 || be16(b + l3) == 6) &&
	    be16(b + l3 + 2) == 0x0800 && b[l3 + 4] == 6 && b[l3 + 5] == 4) {
		addr = be32(b + l3 + 14);
		mac = b + l3 + 8;
	} else if (proto == 0x0800 && len >= l3 + 20) {
		addr = be32(b + l3 + 12);
		mac = b + 6;
	} else {
		return 0;
	}
	if (!addr || addr == 0xffffffff)
		return 0;
	for (i = 0; i < NBIND; i++) {
		if (bindings[i].addr != addr)
			continue;
		if (mac[0] & 1)
			return bindings[i].port == TEST_PORT ? 0 : bindings[i].job;
		if (!bindings[i].port)
			bindings[i].port = TEST_PORT;
		return bindings[i].port == TEST_PORT ? 0 : bindings[i].job;
	}
	return 0;
}

/*
 * A tagged frame (esa_switch_tagged()): what its tags carry judged as if
 * untagged, UDP to the aggregator dropped.
 */
static struct verdict classify_tagged(const __u8 *b, __u32 len)
{
	struct verdict bad = { .kind = K_BAD, .reason = ESA_CNT_DROP_MALFORMED };
	__u32 off = 12, i, l3, ihl, j;
	__u16 proto;

	for (i = 0; i < 2; i++) {
		if (len < off + 6)
			return (struct verdict){ .kind = K_BAD,
				.reason = ESA_CNT_DROP_TRUNCATED };
		if (!vlan_proto(be16(b + off)))
			break;
		off += 4;
	}
	proto = be16(b + off);
	if (vlan_proto(proto))
		return bad;
	l3 = off + 2;
	if (proto == 0x0800 && len < l3 + 20)
		return (struct verdict){ .kind = K_BAD,
			.reason = ESA_CNT_DROP_TRUNCATED };
	j = spoof_of(b, len, l3, proto);
	if (j)
		return (struct verdict){ .kind = K_SPOOF, .job = j };
	if (proto != 0x0800 || b[l3 + 9] != 17 || (be16(b + l3 + 6) & 0x1fff))
		return (struct verdict){ .kind = K_L2 };
	ihl = (b[l3] & 0xf) * 4;
	if (ihl < 20 || len < l3 + ihl + 8 ||
	    be16(b + l3 + ihl + 2) != ESA_UDP_PORT)
		return (struct verdict){ .kind = K_L2 };
	return bad;
}

/* The rules, written independently of the BPF code. */
static struct verdict classify(const __u8 *b, __u32 len)
{
	struct verdict v = { .kind = K_L2 };
	__u32 ihl, ulen, cnt, j, bm, full, idx, w, flags, allowed, fan;
	int result, tokened;

	if (len < 14)
		return (struct verdict){ .kind = K_NONE };
	if (b[6] & 1)		/* a group source MAC: from no station */
		return (struct verdict){ .kind = K_SPOOF };
	if (vlan_proto(be16(b + 12)))
		return classify_tagged(b, len);
	j = spoof_of(b, len, 14, be16(b + 12));
	if (j)
		return (struct verdict){ .kind = K_SPOOF, .job = j };
	if (be16(b + 12) != 0x0800 || len < 34)
		return v;
	/* a later fragment: data, whatever it looks like */
	if (b[23] != 17 || (be16(b + 20) & 0x1fff))
		return v;
	ihl = (b[14] & 0xf) * 4;
	if (ihl < 20)
		return v;
	if (len < 14 + ihl + 8) {
		/* cut inside the UDP header, IPv4 claiming more: truncated */
		if ((__u32)14 + be16(b + 16) > len)
			return (struct verdict){ .kind = K_BAD,
				.reason = ESA_CNT_DROP_TRUNCATED };
		return v;
	}
	if (be16(b + 14 + ihl + 2) != ESA_UDP_PORT)
		return v;
	v.kind = K_BAD;
	v.reason = ESA_CNT_DROP_MALFORMED;
	if (ihl != 20 || (be16(b + 20) & 0x2000))	/* options, a first fragment */
		return v;
	if (len < 62) {
		v.reason = ESA_CNT_DROP_TRUNCATED;
		return v;
	}
	flags = b[43];
	result = !!(flags & ESA_F_RESULT);
	allowed = result ? ESA_F_RESULT | ESA_F_OVERFLOW | ESA_F_ECN |
			   ESA_F_RESEND : ESA_F_RESEND | ESA_F_ECN;
	cnt = be16(b + 48);
	fan = b[44];
	/* version 2 carries an 8-byte token after fewer values */
	tokened = b[42] == 2;
	if ((b[42] != 1 && !tokened) || (flags & ~allowed) || cnt < 1 ||
	    cnt > (tokened ? 361u : ESA_MAX_VALUES) || fan < 1 || fan > 32)
		return v;
	ulen = be16(b + 38);
	if (ulen != 28 + 4 * cnt + (tokened ? 8 : 0) ||
	    be16(b + 16) != 20 + ulen ||
	    len < 34 + ulen) {
		v.reason = ESA_CNT_DROP_TRUNCATED;
		return v;
	}
	j = be16(b + 46);
	if (j < 1 || j > NJOBS) {
		v.reason = ESA_CNT_DROP_UNKNOWN_JOB;
		return v;
	}
	v.job = j;
	/* the jobs here have no token: version 2 is not theirs */
	if (tokened) {
		v.reason = ESA_CNT_DROP_TOKEN;
		return v;
	}
	if (fan != job_fan[j])
		return v;
	full = (1u << fan) - 1;
	bm = be32(b + 58);
	if (result) {
		if (be32(b + 26) != DP_PS_ADDR(j)) {
			v.reason = ESA_CNT_DROP_PORT;
			return v;
		}
		if (!bm || (bm & ~full))
			return v;
	} else {
		if (!bm || (bm & (bm - 1)) || (bm & ~full))
			return v;
		w = __builtin_ctz(bm);
		if (be32(b + 26) != DP_WORKER_ADDR(j, w) ||
		    be16(b + 34) != DP_WORKER_PORT(j, w)) {
			v.reason = ESA_CNT_DROP_PORT;
			return v;
		}
	}
	idx = be32(b + 54);
	if (policy == ESA_POLICY_STATIC) {
		if (idx >= job_quota[j]) {
			v.reason = ESA_CNT_DROP_RANGE;
			return v;
		}
		idx += job_base[j];
	}
	if (idx >= SLOTS) {
		v.reason = ESA_CNT_DROP_RANGE;
		return v;
	}
	/* a fixed count per job: a valid frame never mismatches a slot */
	if (cnt != job_count[j])
		return v;
	v.kind = K_VALID;
	v.slot = idx;
	v.reason = 0;
	return v;
}

static __u32 rnd(__u32 n)
{
	return (__u32)random() % n;
}

/* Insert @n VLAN tags (802.1ad or 802.1Q, any VID, 0 included). */
static void add_tags(struct dp_frame *f, __u32 n)
{
	__u32 i, vid;

	if (f->len + 4 * n > DP_FRAME_MAX)
		return;
	memmove(f->buf + 12 + 4 * n, f->buf + 12, f->len - 12);
	for (i = 0; i < n; i++) {
		__u8 *t = f->buf + 12 + 4 * i;

		vid = rnd(3) ? 0 : rnd(4096);
		t[0] = rnd(2) ? 0x81 : 0x88;
		t[1] = t[0] == 0x81 ? 0x00 : 0xa8;
		t[2] = (rnd(8) << 5) | vid >> 8;
		t[3] = vid;
	}
	f->len += 4 * n;
}

/*
 * Whether frame @out differs from @in, bytes of the L4 checksum of an
 * untagged whole IPv4 TCP/UDP datagram aside (the switch completes one
 * left partial by a sender's offload, esa_l4_csum_complete()).
 */
static int l2_rewritten(const struct dp_frame *in, const struct dp_frame *out)
{
	const __u8 *b = in->buf;
	__u32 k, csum = 0, ihl;

	if (in->len != out->len)
		return 1;
	if (in->len >= 34 && be16(b + 12) == 0x0800 &&
	    !(be16(b + 20) & 0x3fff) && (b[23] == 6 || b[23] == 17)) {
		ihl = (b[14] & 0xf) * 4;
		csum = 14 + ihl + (b[23] == 6 ? 16 : 6);
	}
	for (k = 0; k < in->len; k++)
		if (in->buf[k] != out->buf[k] && (!csum || k < csum || k > csum + 1))
			return 1;
	return 0;
}

static void gen(struct dp_frame *f)
{
	__s32 vals[ESA_MAX_VALUES];
	__u32 j = 1 + rnd(NJOBS), n, k, i;
	struct dp_pkt p;
	__u32 maxidx = policy == ESA_POLICY_STATIC ? job_quota[j] : SLOTS;

	for (i = 0; i < job_count[j]; i++)
		vals[i] = rnd(10) ? (__s32)rnd(2001) - 1000 :
			  (rnd(2) ? 0x7fffff00 : -0x7fffff00);
	if (rnd(20) == 0)
		dp_pkt_result(&p, j, job_fan[j], rnd(6), rnd(maxidx), vals,
			      job_count[j]);
	else
		dp_pkt_worker(&p, j, job_fan[j], rnd(job_fan[j]), rnd(6),
			      rnd(maxidx), vals, job_count[j]);
	if (p.flags != ESA_F_RESULT) {
		if (rnd(10) == 0)
			p.flags |= ESA_F_RESEND;
		if (rnd(20) == 0)
			p.flags |= ESA_F_ECN;
	} else if (rnd(4) == 0) {	/* a pull, for some of the workers */
		p.flags |= ESA_F_RESEND;
		p.bitmap &= rnd(1u << job_fan[j]) | 1;
	}
	p.priority = rnd(8);
	dp_build(f, &p);
	if (rnd(50) == 0) {		/* ARP or another ethertype */
		f->buf[12] = rnd(2) ? 0x08 : 0x86;
		f->buf[13] = rnd(2) ? 0x06 : 0xdd;
	}
	if (rnd(60) == 0) {		/* an EtherType of no protocol here */
		f->buf[12] = rnd(256);
		f->buf[13] = rnd(256);
	}
	if (rnd(40) == 0)		/* a group source MAC */
		f->buf[6] |= 1;
	if (rnd(16) == 0)		/* a fragment: first (MF) or later */
		f->buf[20] |= rnd(2) ? 0x20 : rnd(0x20) | 0x01;
	if (rnd(12) == 0)		/* 1 to 3 802.1Q / 802.1ad tags */
		add_tags(f, 1 + rnd(3));
	if (rnd(4))
		return;
	/* mutate: one to three random edits */
	for (n = 1 + rnd(3); n; n--) {
		switch (rnd(6)) {
		case 0:
		case 1:
		case 2:		/* a header byte */
			k = 12 + rnd(50);
			f->buf[k] = rnd(4) ? rnd(256) :
				    (__u32)(f->buf[k] ^ (1 << rnd(8)));
			break;
		case 3:		/* truncate */
			if (f->len > 14)
				f->len = 14 + rnd(f->len - 14);
			break;
		case 4:		/* extend with junk */
			k = rnd(64);
			for (i = 0; i < k && f->len < DP_FRAME_MAX; i++)
				f->buf[f->len++] = rnd(256);
			break;
		case 5:		/* a value byte */
			if (f->len > 62)
				f->buf[62 + rnd(f->len - 62)] = rnd(256);
			break;
		}
	}
}

static void snap(struct esa_switch *sw, struct esa_agg *s)
{
	__u32 i;

	for (i = 0; i < SLOTS; i++)
		esa_switch_agg_read(sw, i, &s[i]);
}

static int same(const struct esa_agg *a, const struct esa_agg *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static __u32 job_full(__u32 j)
{
	return j >= 1 && j <= NJOBS ? (1u << job_fan[j]) - 1 : 0;
}

static const struct esa_gone *rec_of(const struct esa_agg *a, __u32 job,
				     __u32 seq)
{
	int i;

	for (i = 0; i < ESA_GONE_WAYS; i++)
		if (a->gone_rec[i].job_id == job && a->gone_rec[i].seq == seq)
			return &a->gone_rec[i];
	return NULL;
}

/*
 * The gone rules on one slot after a frame of job @j (0: none): what is
 * wrong, or NULL. @before is the slot before the frame.
 */
static const char *gone_violation(const struct esa_agg *before,
				  const struct esa_agg *a, __u32 j)
{
	const struct esa_gone *g, *p;
	__u32 full = job_full(a->job_id);
	int i;

	if (policy == ESA_POLICY_ATP) {
		for (i = 0; i < ESA_GONE_WAYS; i++)
			if (a->gone_rec[i].job_id)
				return "a gone record under atp";
		return a->gone ? "a gone set under atp" : NULL;
	}
	if (a->state == ESA_AGG_PARTIAL) {
		if ((a->bitmap | a->gone) == full)
			return "a partial whose workers are all in or gone";
		if (a->bitmap & a->gone)
			return "a worker both summed and gone";
		if (rec_of(a, a->job_id, a->seq))
			return "a record of the resident's own sum";
	} else if (a->state == ESA_AGG_FREE && a->gone) {
		return "a free slot with a gone set";
	}
	for (i = 0; i < ESA_GONE_WAYS; i++) {
		g = &a->gone_rec[i];
		if (!g->job_id)
			continue;
		full = job_full(g->job_id);
		if (!full || !g->bitmap || (g->bitmap & ~full) ||
		    g->bitmap == full)
			return "a record of no job, no, stray or every worker";
		if (g->job_id == j)
			continue;
		p = rec_of(before, g->job_id, g->seq);
		if (p && p->bitmap == g->bitmap)
			continue;
		/* written for the resident the frame took the slot from */
		if (!p && before->state == ESA_AGG_PARTIAL &&
		    before->job_id == g->job_id && before->seq == g->seq &&
		    a->job_id == j)
			continue;
		return "another job's record written";
	}
	return NULL;
}

static const unsigned int drops[] = {
	ESA_CNT_DROP_MALFORMED, ESA_CNT_DROP_TRUNCATED,
	ESA_CNT_DROP_UNKNOWN_JOB, ESA_CNT_DROP_RANGE, ESA_CNT_DROP_PORT,
	ESA_CNT_DROP_BUSY,	/* none here: one thread, every lock let go */
	ESA_CNT_DROP_TOKEN,
};
static const unsigned int job_cnts[] = {
	ESA_CNT_RX, ESA_CNT_AGGREGATED, ESA_CNT_COMPLETED, ESA_CNT_COLLISIONS,
	ESA_CNT_PREEMPTIONS, ESA_CNT_EVICTIONS, ESA_CNT_RESENDS,
	ESA_CNT_DUPLICATES, ESA_CNT_RESULTS, ESA_CNT_OVERFLOWS, ESA_CNT_PULLS,
	ESA_CNT_STRANDED, ESA_CNT_STRANDED_US, ESA_CNT_EARLY_PARTIALS,
	ESA_CNT_DROP_SPOOF,
};

/*
 * Module flavour: the maps dp_reset() clears (learned tables, aggregators,
 * counters) and the module's policy, slots and reclaim timeout (0 = none:
 * the module's longest, 60 s). The module keeps the jobs; dp_reset()'s
 * last step, the config map, is the maps flavour's only.
 */
static int kmod_reset(struct esa_switch *sw, __u32 pol, __u32 timeout_us)
{
	static const char *const names[] = { "esa", "atp", "static" };
	char cmd[1024];
	int err = dp_reset(sw, pol, SLOTS, timeout_us);

	if (err && err != -EOPNOTSUPP)
		return err;
	snprintf(cmd, sizeof(cmd), "%s policy set %s && %s switch set slots %u timeout %u",
		 aggctl, names[pol], aggctl, SLOTS,
		 timeout_us ? timeout_us : ESA_TIMEOUT_US_MAX);
	return system(cmd) ? -EIO : 0;
}

/* One segment under @pol; returns the number of invariant violations. */
static int segment(struct esa_switch *sw, __u32 pol, __u32 timeout_us,
		   long npkt, const char *name)
{
	static struct esa_agg before[SLOTS], after[SLOTS];
	static struct dp_frame in, out;
	__u64 g[__ESA_CNT_MAX], jc[NJOBS + 1][__ESA_CNT_MAX], sum;
	struct oracle o = {};
	struct esa_job_info job;
	int bad_verdict = 0, touched = 0, foreign = 0, cnt_bad = 0, gone = 0;
	int released = 0, rewritten = 0;
	const char *why;
	unsigned int c, d;
	long n;
	__u32 i, j;

	policy = pol;
	if (aggctl ? kmod_reset(sw, pol, timeout_us) :
		     dp_reset(sw, pol, SLOTS, timeout_us)) {
		ksft_test_result_fail("%s: reset\n", name);
		return 1;
	}
	for (j = 1; !aggctl && j <= NJOBS; j++) {
		dp_job(&job, j, job_fan[j], j, job_base[j], job_quota[j]);
		esa_switch_job_put(sw, &job);
	}
	for (i = 0; i < NBIND; i++) {
		struct esa_neigh bn = { .ifindex = bindings[i].port,
					.bound_job = bindings[i].job };
		__be32 a = htonl(bindings[i].addr);

		if (bindings[i].job == 1)	/* first sight, every segment */
			bn.ifindex = bindings[i].port = 0;
		bpf_map_update_elem(esa_switch_map_fd(sw, "esa_neigh"), &a,
				    &bn, 0);
	}
	esa_switch_learned_changed(sw);
	snap(sw, before);
	for (n = 0; n < npkt; n++) {
		struct verdict v;
		int r;

		gen(&in);
		v = classify(in.buf, in.len);
		r = dp_run(sw, &in, &out);
		if (r != XDP_DROP && r != XDP_TX && r != XDP_REDIRECT) {
			if (bad_verdict++ < 5)
				ksft_print_msg("%s: packet %ld verdict %d\n", name, n, r);
		}
		snap(sw, after);
		switch (v.kind) {
		case K_L2:
			o.fwd++;
			if (r != XDP_DROP && l2_rewritten(&in, &out) &&
			    rewritten++ < 5)
				ksft_print_msg("%s: packet %ld, switched at L2, left rewritten\n",
					       name, n);
			break;
		case K_SPOOF:
			o.spoof_j[v.job]++;
			break;
		case K_BAD:
			o.rx++;
			o.drop_g[v.reason]++;
			if (v.job) {
				o.rx_j[v.job]++;
				if (v.reason != ESA_CNT_DROP_UNKNOWN_JOB)
					o.drop_j[v.job][v.reason]++;
			}
			break;
		case K_VALID:
			o.rx++;
			o.rx_j[v.job]++;
			if ((in.buf[43] & ESA_F_RESULT) &&
			    (in.buf[43] & ESA_F_RESEND))
				o.ps_pulls++;
			else if (in.buf[43] & ESA_F_RESULT)
				o.ps_results++;
			break;
		}
		for (i = 0; i < SLOTS; i++) {
			if (same(&before[i], &after[i]))
				continue;
			if (v.kind != K_VALID || i != v.slot ||
			    ((in.buf[43] & ESA_F_RESULT) &&
			     (in.buf[43] & ESA_F_RESEND))) {	/* a pull */
				if (touched++ < 5)
					ksft_print_msg("%s: packet %ld (kind %d) changed slot %u\n",
						 name, n, v.kind, i);
			} else if (before[i].state != ESA_AGG_FREE &&
				   before[i].job_id != v.job &&
				   after[i].job_id != v.job &&
				   !dp_same_resident(&before[i], &after[i])) {
				if (foreign++ < 5)
					ksft_print_msg("%s: packet %ld changed job %u's slot %u\n",
						 name, n, before[i].job_id, i);
			}
			if (v.kind == K_VALID && i == v.slot &&
			    (in.buf[43] & ESA_F_RESULT) &&
			    !(in.buf[43] & ESA_F_RESEND) &&
			    !dp_same_resident(&before[i], &after[i]) &&
			    !(before[i].state == ESA_AGG_DONE &&
			      before[i].job_id == v.job &&
			      before[i].seq == be32(in.buf + 50) &&
			      after[i].state == ESA_AGG_FREE)) {
				/* a PS's RESULT releases only its own held sum */
				if (released++ < 5)
					ksft_print_msg("%s: packet %ld, RESULT of job %u seq %u changed slot %u (job %u seq %u state %u)\n",
						 name, n, v.job, be32(in.buf + 50), i,
						 before[i].job_id, before[i].seq,
						 before[i].state);
			}
			why = gone_violation(&before[i], &after[i],
					     v.kind == K_VALID ? v.job : 0);
			if (why && gone++ < 5)
				ksft_print_msg("%s: packet %ld, slot %u: %s\n", name, n,
					 i, why);
		}
		memcpy(before, after, sizeof(before));
	}
	ksft_test_result(!bad_verdict, "%s: %ld packets, every run returned a verdict\n",
	       name, npkt);
	ksft_test_result(!touched && !foreign && !released,
	       "%s: no aggregator touched but the packet's own job's slot\n",
	       name);
	ksft_test_result(!gone, "%s: gone records and sets follow their rules\n", name);
	ksft_test_result(!rewritten, "%s: frames switched at L2 leave unchanged\n", name);

	esa_switch_counters(sw, 0, g);
	for (j = 1; j <= NJOBS; j++)
		esa_switch_counters(sw, j, jc[j]);
	if (g[ESA_CNT_FORWARDED] != o.fwd || g[ESA_CNT_RX] != o.rx) {
		cnt_bad++;
		ksft_print_msg("%s: forwarded %llu/%llu rx %llu/%llu\n", name,
			 g[ESA_CNT_FORWARDED], o.fwd, g[ESA_CNT_RX], o.rx);
	}
	sum = 0;
	for (d = 0; d < sizeof(drops) / sizeof(drops[0]); d++) {
		c = drops[d];
		sum += g[c];
		if (g[c] != o.drop_g[c]) {
			cnt_bad++;
			ksft_print_msg("%s: %s %llu, oracle %llu\n", name,
				 esa_counter_name(c), g[c], o.drop_g[c]);
		}
		for (j = 1; j <= NJOBS; j++)
			if (jc[j][c] != o.drop_j[j][c]) {
				cnt_bad++;
				ksft_print_msg("%s: job %u %s %llu, oracle %llu\n", name, j,
					 esa_counter_name(c), jc[j][c],
					 o.drop_j[j][c]);
			}
	}
	for (j = 1; j <= NJOBS; j++) {
		if (jc[j][ESA_CNT_DROP_SPOOF] != o.spoof_j[j]) {
			cnt_bad++;
			ksft_print_msg("%s: job %u drop_spoof %llu, oracle %llu\n", name,
				 j, jc[j][ESA_CNT_DROP_SPOOF], o.spoof_j[j]);
		}
	}
	/* every aggregation frame has exactly one outcome */
	sum += g[ESA_CNT_AGGREGATED] + g[ESA_CNT_DUPLICATES] +
	       g[ESA_CNT_COLLISIONS] + g[ESA_CNT_RESULTS] + g[ESA_CNT_PULLS];
	if (pol != ESA_POLICY_ATP)	/* switch completions multicast too */
		sum -= g[ESA_CNT_COMPLETED];
	/* an early partial's last frame is an AGGREGATED one; none in atp */
	if (g[ESA_CNT_EARLY_PARTIALS] > g[ESA_CNT_AGGREGATED] ||
	    (pol == ESA_POLICY_ATP && g[ESA_CNT_EARLY_PARTIALS])) {
		cnt_bad++;
		ksft_print_msg("%s: early partials %llu, aggregated %llu\n", name,
			 g[ESA_CNT_EARLY_PARTIALS], g[ESA_CNT_AGGREGATED]);
	}
	if (sum != g[ESA_CNT_RX]) {
		cnt_bad++;
		ksft_print_msg("%s: outcomes %llu != rx %llu\n", name, sum,
			 g[ESA_CNT_RX]);
	}
	if (g[ESA_CNT_PULLS] != o.ps_pulls) {
		cnt_bad++;
		ksft_print_msg("%s: pulls %llu, PS pulls %llu\n", name,
			 g[ESA_CNT_PULLS], o.ps_pulls);
	}
	if (pol == ESA_POLICY_ATP && g[ESA_CNT_RESULTS] != o.ps_results) {
		cnt_bad++;
		ksft_print_msg("%s: results %llu, PS results %llu\n", name,
			 g[ESA_CNT_RESULTS], o.ps_results);
	}
	for (d = 0; d < sizeof(job_cnts) / sizeof(job_cnts[0]); d++) {
		c = job_cnts[d];
		/* spoofs of no job (a group source MAC): switch-wide only */
		sum = c == ESA_CNT_DROP_SPOOF ? o.spoof_j[0] : 0;
		for (j = 1; j <= NJOBS; j++)
			sum += jc[j][c];
		if (c == ESA_CNT_RX) {
			for (j = 1; j <= NJOBS; j++)
				if (jc[j][c] != o.rx_j[j]) {
					cnt_bad++;
					ksft_print_msg("%s: job %u rx %llu oracle %llu\n",
						 name, j, jc[j][c], o.rx_j[j]);
				}
			continue;
		}
		if (sum != g[c]) {
			cnt_bad++;
			ksft_print_msg("%s: %s: jobs %llu, global %llu\n", name,
				 esa_counter_name(c), sum, g[c]);
		}
	}
	ksft_print_msg("%s: rx %llu aggregated %llu completed %llu collisions %llu "
		 "preemptions %llu evictions %llu early %llu dups %llu drops %llu\n",
		 name, g[ESA_CNT_RX], g[ESA_CNT_AGGREGATED],
		 g[ESA_CNT_COMPLETED], g[ESA_CNT_COLLISIONS],
		 g[ESA_CNT_PREEMPTIONS], g[ESA_CNT_EVICTIONS],
		 g[ESA_CNT_EARLY_PARTIALS], g[ESA_CNT_DUPLICATES],
		 o.drop_g[ESA_CNT_DROP_MALFORMED] +
		 o.drop_g[ESA_CNT_DROP_TRUNCATED] +
		 o.drop_g[ESA_CNT_DROP_UNKNOWN_JOB] +
		 o.drop_g[ESA_CNT_DROP_RANGE] + o.drop_g[ESA_CNT_DROP_PORT] +
		 o.drop_g[ESA_CNT_DROP_BUSY]);
	ksft_test_result(!cnt_bad, "%s: counters match the oracle and each other\n", name);
	return bad_verdict + touched + foreign + released + gone + cnt_bad +
	       rewritten;
}

int main(int argc, char **argv)
{
	struct esa_switch_opts opts = { .agg_capacity = SLOTS };
	unsigned int seed;
	long npkt;
	struct esa_switch *sw;
	int err;

	if (argc > 2 && !strcmp(argv[1], "--kmod")) {
		aggctl = argv[2];
		opts.flavour = ESA_FLAVOUR_KMOD;
		argc -= 2;
		argv += 2;
	}
	npkt = argc > 1 ? atol(argv[1]) : 30000;
	seed = argc > 2 ? atoi(argv[2]) : 20231;
	ksft_print_header();
	ksft_set_plan(20);
	if (npkt < 1) {
		ksft_test_result_fail("usage: test_fuzz [--kmod AGGCTL] [packets-per-segment [seed]]\n");
		return ksft_exit_fail();
	}
	srandom(seed);
	printf("# seed %u, %ld packets per segment, %s flavour\n", seed, npkt,
	       aggctl ? "module" : "module-less");
	err = esa_switch_load(&sw, &opts);
	if (err) {
		ksft_test_result_fail("load the data plane: %s\n", strerror(-err));
		return ksft_exit_fail();
	}
	segment(sw, ESA_POLICY_ESA, 0, npkt, aggctl ? "kmod esa" : "esa");
	segment(sw, ESA_POLICY_ATP, 0, npkt, aggctl ? "kmod atp" : "atp");
	segment(sw, ESA_POLICY_STATIC, 0, npkt, aggctl ? "kmod static" : "static");
	segment(sw, ESA_POLICY_ESA, 30, npkt, aggctl ? "kmod esa+reclaim" : "esa+reclaim");
	esa_switch_close(sw);
	ksft_finished();
}
