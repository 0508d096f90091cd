// SPDX-License-Identifier: GPL-2.0
/*
 * genl_fuzz: random and mutated generic netlink messages against the esa
 * module (Documentation/reliability.rst). Each message is a well-formed
 * request of a random command (job add/change/del/get, config, policy,
 * stats, occupancy; notification and unknown command numbers too), most
 * of them then mutated: attribute types, lengths, values at and beyond
 * their limits, nests broken or flagged wrongly, attributes repeated,
 * inserted or cut off, bytes flipped, header fields changed.
 *
 * Checked, per message: the kernel answers (an ACK or an error); after a
 * rejected message the module state (every job, the config, the policy)
 * is byte for byte what it was before; after an accepted one the job
 * table is still consistent (ids in range, fan-in = workers listed).
 * Checked over the run: the objects in use in the kmalloc slab caches
 * (/sys/kernel/slab/<cache>/objects, after shrinking the caches and an RCU
 * grace period) are back where they were once the module is back in its
 * seed state: a leak of even one object per thousand messages shows.
 * Oopses and WARNs are the VM runner's (scripts/vm-run.sh fails the run).
 *
 * usage: genl_fuzz COUNT [SEED]     (prints TAP; needs the module, root)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include "esa_genl.h"
#include "esa_switch.h"

#define BUFSZ		65536
#define SEED_JOBS	4
#define RESET_EVERY	1000	/* messages between returns to the seed state */

static struct mnl_socket *nl;
static uint16_t family;
static uint32_t seq_no;
static char rxbuf[BUFSZ];

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)random() % n : 0;
}

/* ---- talking to the kernel ----------------------------------------- */

struct reply {
	int error;		/* 0, or the kernel's negative errno */
	int answered;		/* an ACK, an error or a dump's end arrived */
	char *data;		/* replies' payloads (after the genl header) */
	size_t len, cap;
};

static void reply_add(struct reply *r, const struct nlmsghdr *nlh)
{
	size_t n = nlh->nlmsg_len - NLMSG_HDRLEN;

	if (r->len + n + 4 > r->cap) {
		r->cap = (r->len + n + 4) * 2;
		r->data = realloc(r->data, r->cap);
		if (!r->data)
			abort();
	}
	memcpy(r->data + r->len, &n, 4);
	memcpy(r->data + r->len + 4, mnl_nlmsg_get_payload(nlh), n);
	r->len += n + 4;
}

/* Send @len bytes at @msg; collect replies until the ACK, error or DONE. */
static int talk(void *msg, size_t len, struct reply *r)
{
	struct pollfd p = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };
	struct nlmsghdr *nlh = msg;
	uint32_t seq = ++seq_no;
	int n;

	r->error = 0;
	r->answered = 0;
	r->len = 0;
	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(nl, msg, len) < 0)
		return -errno;
	while (!r->answered) {
		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
		n = mnl_socket_recvfrom(nl, rxbuf, sizeof(rxbuf));
		if (n < 0)
			return -errno;
		for (nlh = (struct nlmsghdr *)rxbuf; mnl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_seq != seq)
				continue;	/* a late part of an earlier dump */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				r->error = ((struct nlmsgerr *)
					    mnl_nlmsg_get_payload(nlh))->error;
				r->answered = 1;
			} else if (nlh->nlmsg_type == NLMSG_DONE) {
				r->error = *(int *)mnl_nlmsg_get_payload(nlh);
				r->answered = 1;
			} else {
				reply_add(r, nlh);
			}
		}
	}
	return 0;
}

/* ---- building messages ------------------------------------------------ */

struct msg {
	char b[8192];
	size_t len;
	size_t nest[8];		/* offsets of open nests */
	int depth;
};

static void msg_start(struct msg *m, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->b;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);

	memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g->cmd = cmd;
	g->version = ESA_GENL_VERSION;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->depth = 0;
}

static void put(struct msg *m, uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);
	size_t total = NLA_ALIGN(NLA_HDRLEN + n);

	if (m->len + total > sizeof(m->b))
		return;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + n;
	memset((char *)a + NLA_HDRLEN, 0, total - NLA_HDRLEN);
	memcpy((char *)a + NLA_HDRLEN, v, n);
	m->len += total;
}

static void put_u8(struct msg *m, uint16_t t, uint8_t v) { put(m, t, &v, 1); }
static void put_u16(struct msg *m, uint16_t t, uint16_t v) { put(m, t, &v, 2); }
static void put_u32(struct msg *m, uint16_t t, uint32_t v) { put(m, t, &v, 4); }

static void nest_start(struct msg *m, uint16_t type)
{
	if (m->depth == 8 || m->len + NLA_HDRLEN > sizeof(m->b))
		return;
	m->nest[m->depth++] = m->len;
	put(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct msg *m)
{
	struct nlattr *a;

	if (!m->depth)
		return;
	a = (struct nlattr *)(m->b + m->nest[--m->depth]);
	a->nla_len = m->len - m->nest[m->depth];
}

static void msg_end(struct msg *m)
{
	while (m->depth)
		nest_end(m);
	((struct nlmsghdr *)m->b)->nlmsg_len = m->len;
}

/* A value near a limit, or anything. */
static uint32_t edgy(uint32_t lo, uint32_t hi)
{
	switch (rnd(8)) {
	case 0: return lo;
	case 1: return hi;
	case 2: return lo - 1;
	case 3: return hi + 1;
	case 4: return 0;
	case 5: return 0xffffffff;
	case 6: return random();
	default: return lo + rnd(hi - lo + 1);
	}
}

static uint32_t job_id(void)
{
	return rnd(4) ? 1 + rnd(2 * SEED_JOBS + 4) : edgy(1, ESA_MAX_JOB_ID);
}

static void put_workers(struct msg *m, unsigned int n)
{
	unsigned int i;

	nest_start(m, ESA_A_JOB_WORKERS);
	for (i = 0; i < n; i++) {
		nest_start(m, ESA_A_WORKERS_WORKER);
		put_u32(m, ESA_A_WORKER_ADDR, htonl(0xc6120000u | rnd(4) << 8 | (10 + i)));
		put_u16(m, ESA_A_WORKER_PORT, htons(rnd(8) ? 47000 + rnd(4) : edgy(1, 65535)));
		nest_end(m);
	}
	nest_end(m);
}

/* The attributes of a job add or change, each present or not. */
static void put_job(struct msg *m, int all)
{
	unsigned int n = rnd(4) ? 1 + rnd(4) : edgy(1, ESA_MAX_WORKERS) & 63;

	put_u32(m, ESA_A_JOB_ID, job_id());
	if (all || rnd(2))
		put_u8(m, ESA_A_JOB_FAN_IN, rnd(6) ? n : edgy(1, ESA_MAX_WORKERS));
	if (all || rnd(2)) {
		put_u32(m, ESA_A_JOB_PS_ADDR, htonl(0xc6120064u + rnd(4)));
		put_u16(m, ESA_A_JOB_PS_PORT, htons(rnd(8) ? 47000 : edgy(1, 65535)));
	}
	if (all || rnd(2))
		put_workers(m, n);
	if (rnd(3) == 0)
		put_u8(m, ESA_A_JOB_PRIORITY, rnd(256));
	else if (rnd(2))
		put(m, ESA_A_JOB_PRIO_AUTO, NULL, 0);
	if (rnd(3) == 0)
		put_u32(m, ESA_A_JOB_QUOTA, rnd(2) ? rnd(64) : edgy(0, ESA_MAX_AGGREGATORS));
}

/* A well-formed request of a random command. */
static void build(struct msg *m)
{
	uint8_t cmd = rnd(20) ? 1 + rnd(ESA_CMD_OCCUPANCY_GET) : rnd(256);
	uint16_t flags = 0;

	if (rnd(10) == 0)
		flags |= NLM_F_DUMP;
	msg_start(m, cmd, flags);
	switch (cmd) {
	case ESA_CMD_JOB_ADD:
		put_job(m, rnd(4) != 0);
		break;
	case ESA_CMD_JOB_CHANGE:
		put_job(m, 0);
		break;
	case ESA_CMD_JOB_DEL:
	case ESA_CMD_JOB_GET:
	case ESA_CMD_STATS_GET:
	case ESA_CMD_OCCUPANCY_GET:
		if (rnd(4))
			put_u32(m, ESA_A_JOB_ID, job_id());
		break;
	case ESA_CMD_CONFIG_SET:
		if (rnd(2))
			put_u32(m, ESA_A_CFG_AGG_SLOTS, rnd(2) ? 64 + rnd(4096) :
				edgy(1, ESA_MAX_AGGREGATORS));
		if (rnd(2))
			put_u32(m, ESA_A_CFG_AGG_TIMEOUT_US,
				edgy(ESA_TIMEOUT_US_MIN, ESA_TIMEOUT_US_MAX));
		if (rnd(2))
			put_u32(m, ESA_A_CFG_AGING_MS,
				edgy(ESA_AGING_MS_MIN, ESA_AGING_MS_MAX));
		break;
	case ESA_CMD_POLICY_SET:
		put_u32(m, ESA_A_POLICY, rnd(4) ? rnd(__ESA_POLICY_MAX) :
			edgy(0, __ESA_POLICY_MAX - 1));
		break;
	default:		/* gets, notifications, unknown: maybe junk */
		if (rnd(2))
			put_u32(m, 1 + rnd(ESA_A_MAX + 4), random());
	}
	msg_end(m);
}

/* Attribute offsets of the message, nested ones included. */
static int attrs(const struct msg *m, size_t *off, int max)
{
	size_t o = NLMSG_HDRLEN + GENL_HDRLEN, end[8];
	int n = 0, d = 0;

	end[0] = m->len;
	while (n < max && d >= 0) {
		const struct nlattr *a;

		if (o + NLA_HDRLEN > end[d]) {
			o = end[d--];
			continue;
		}
		a = (const struct nlattr *)(m->b + o);
		if (a->nla_len < NLA_HDRLEN || o + a->nla_len > end[d])
			break;
		off[n++] = o;
		if ((a->nla_type & NLA_F_NESTED) && d < 7) {
			end[++d] = o + NLA_ALIGN(a->nla_len);
			if (end[d] > end[d - 1])
				end[d] = end[d - 1];
			o += NLA_HDRLEN;
		} else {
			o += NLA_ALIGN(a->nla_len);
		}
	}
	return n;
}

/* One to four edits that leave nlmsg_len true (else no answer comes). */
static void mutate(struct msg *m)
{
	size_t off[64], o;
	struct nlattr *a;
	int k, n;
	char junk[64];

	for (k = 1 + rnd(4); k; k--) {
		n = attrs(m, off, 64);
		o = n ? off[rnd(n)] : 0;
		a = (struct nlattr *)(m->b + o);
		switch (rnd(10)) {
		case 0:		/* another attribute type, maybe unknown */
			if (n)
				a->nla_type = (a->nla_type & NLA_F_NESTED) |
					      rnd(ESA_A_MAX + 6);
			break;
		case 1:		/* flip the nested flag */
			if (n)
				a->nla_type ^= NLA_F_NESTED;
			break;
		case 2:		/* a wrong length */
			if (n)
				a->nla_len = rnd(2) ? rnd(16) : a->nla_len + 1 + rnd(8);
			break;
		case 3:		/* a value byte */
			if (n && a->nla_len > NLA_HDRLEN)
				((uint8_t *)a)[NLA_HDRLEN + rnd(a->nla_len - NLA_HDRLEN)] = random();
			break;
		case 4:		/* cut the message short */
			if (m->len > NLMSG_HDRLEN + GENL_HDRLEN)
				m->len -= 1 + rnd(m->len - NLMSG_HDRLEN - GENL_HDRLEN);
			break;
		case 5:		/* repeat an attribute at the end */
			if (n && a->nla_len >= NLA_HDRLEN &&
			    m->len + NLA_ALIGN(a->nla_len) <= sizeof(m->b)) {
				memmove(m->b + m->len, a, NLA_ALIGN(a->nla_len));
				m->len += NLA_ALIGN(a->nla_len);
			}
			break;
		case 6:		/* a random attribute */
			for (size_t i = 0; i < sizeof(junk); i++)
				junk[i] = random();
			m->depth = 0;
			put(m, rnd(ESA_A_MAX + 6) | (rnd(4) ? 0 : NLA_F_NESTED),
			    junk, rnd(sizeof(junk)));
			break;
		case 7:		/* the genl command or version */
			if (rnd(2))
				m->b[NLMSG_HDRLEN] = rnd(256);
			else
				m->b[NLMSG_HDRLEN + 1] = rnd(256);
			break;
		case 8:		/* any byte after the headers */
			if (m->len > NLMSG_HDRLEN + GENL_HDRLEN)
				m->b[NLMSG_HDRLEN + GENL_HDRLEN +
				     rnd(m->len - NLMSG_HDRLEN - GENL_HDRLEN)] = random();
			break;
		default:	/* header flags: dump, or unusual ones */
			((struct nlmsghdr *)m->b)->nlmsg_flags ^=
				rnd(2) ? NLM_F_DUMP : 1u << rnd(16);
		}
	}
	/* always a request that asks for its ACK, whose length is true */
	((struct nlmsghdr *)m->b)->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	((struct nlmsghdr *)m->b)->nlmsg_len = m->len;
}

/* ---- the module's state ------------------------------------------------ */

static int volatile_attr(uint16_t t)
{
	/* change with time or traffic, not with requests */
	return t == ESA_A_JOB_STATE || t == ESA_A_JOB_EFF_PRIORITY ||
	       t == ESA_A_JOB_ATTAINED || t == ESA_A_JOB_OCCUPANCY;
}

struct state {
	char *b;
	size_t len, cap;
	unsigned int jobs;
	int consistent;		/* ids in range, fan-in = workers */
};

static void state_add(struct state *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2 + 4096;
		s->b = realloc(s->b, s->cap);
		if (!s->b)
			abort();
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

/* One reply's top-level attributes, volatile ones left out. */
static void state_take(struct state *s, const char *p, size_t n, int is_job)
{
	const struct nlattr *a;
	size_t o = GENL_HDRLEN;
	uint32_t id = 0, fan = 0, nw = 0;

	while (o + NLA_HDRLEN <= n) {
		a = (const struct nlattr *)(p + o);
		if (a->nla_len < NLA_HDRLEN || o + a->nla_len > n)
			break;
		if (!volatile_attr(a->nla_type & NLA_TYPE_MASK))
			state_add(s, a, a->nla_len);
		switch (a->nla_type & NLA_TYPE_MASK) {
		case ESA_A_JOB_ID:
			id = *(uint32_t *)(a + 1);
			break;
		case ESA_A_JOB_FAN_IN:
			fan = *(uint8_t *)(a + 1);
			break;
		case ESA_A_JOB_WORKERS: {
			const struct nlattr *w;
			size_t wo = NLA_HDRLEN;

			while (wo + NLA_HDRLEN <= a->nla_len) {
				w = (const struct nlattr *)((const char *)a + wo);
				if (w->nla_len < NLA_HDRLEN)
					break;
				nw++;
				wo += NLA_ALIGN(w->nla_len);
			}
			break;
		}
		}
		o += NLA_ALIGN(a->nla_len);
	}
	if (is_job) {
		s->jobs++;
		if (!id || id > ESA_MAX_JOB_ID || !fan || fan != nw)
			s->consistent = 0;
	}
}

static int get(struct state *s, uint8_t cmd, uint16_t flags, int is_job)
{
	struct reply r = { 0 };
	struct msg m;
	size_t o;
	uint32_t n;
	int err;

	msg_start(&m, cmd, flags);
	msg_end(&m);
	err = talk(m.b, m.len, &r);
	if (!err)
		err = r.error;
	for (o = 0; !err && o + 4 <= r.len; o += 4 + n) {
		memcpy(&n, r.data + o, 4);
		state_take(s, r.data + o + 4, n, is_job);
	}
	free(r.data);
	return err;
}

static int state_read(struct state *s)
{
	s->len = 0;
	s->jobs = 0;
	s->consistent = 1;
	return get(s, ESA_CMD_JOB_GET, NLM_F_DUMP, 1) ?:
	       get(s, ESA_CMD_CONFIG_GET, 0, 0) ?:
	       get(s, ESA_CMD_POLICY_GET, 0, 0);
}

static int state_same(const struct state *a, const struct state *b)
{
	return a->len == b->len && !memcmp(a->b, b->b, a->len);
}

/* ---- the seed state ---------------------------------------------------- */

static int request(struct msg *m)
{
	struct reply r = { 0 };
	int err;

	msg_end(m);
	err = talk(m->b, m->len, &r);
	free(r.data);
	return err ?: r.error;
}

/* The ids of every job, from a dump; how many. */
static int job_ids(uint32_t *ids, int max)
{
	struct reply r = { 0 };
	const struct nlattr *a;
	struct msg m;
	size_t o, ao;
	uint32_t n;
	int k = 0;

	msg_start(&m, ESA_CMD_JOB_GET, NLM_F_DUMP);
	msg_end(&m);
	if (talk(m.b, m.len, &r) || r.error)
		k = -1;
	for (o = 0; k >= 0 && k < max && o + 4 <= r.len; o += 4 + n) {
		memcpy(&n, r.data + o, 4);
		for (ao = GENL_HDRLEN; ao + NLA_HDRLEN <= n; ao += NLA_ALIGN(a->nla_len)) {
			a = (const struct nlattr *)(r.data + o + 4 + ao);
			if (a->nla_len < NLA_HDRLEN)
				break;
			if ((a->nla_type & NLA_TYPE_MASK) == ESA_A_JOB_ID)
				ids[k++] = *(const uint32_t *)(a + 1);
		}
	}
	free(r.data);
	return k;
}

/*
 * The data-plane generation the module had when the run began: a fuzzed
 * CONFIG_SET may change it like any setting, and the seed state puts it
 * back, since no data plane of this run's making owns another.
 */
static uint32_t seed_generation;

/* A u32 attribute @type of CONFIG_GET's reply into *@v. */
static int config_u32(uint16_t type, uint32_t *v)
{
	struct reply r = { 0 };
	const struct nlattr *a;
	struct msg m;
	size_t ao;
	uint32_t n;
	int err;

	msg_start(&m, ESA_CMD_CONFIG_GET, 0);
	msg_end(&m);
	err = talk(m.b, m.len, &r) ?: r.error;
	err = err ?: (r.len < 4 ? -EIO : -ENOENT);
	if (err == -ENOENT) {
		memcpy(&n, r.data, 4);
		for (ao = GENL_HDRLEN; ao + NLA_HDRLEN <= n; ao += NLA_ALIGN(a->nla_len)) {
			a = (const struct nlattr *)(r.data + 4 + ao);
			if (a->nla_len < NLA_HDRLEN)
				break;
			if ((a->nla_type & NLA_TYPE_MASK) == type &&
			    a->nla_len == NLA_HDRLEN + 4) {
				*v = *(const uint32_t *)(a + 1);
				err = 0;
				break;
			}
		}
	}
	free(r.data);
	return err;
}

/* Policy esa, default settings, jobs 1..SEED_JOBS and no other. */
static int seed(void)
{
	uint32_t ids[ESA_MAX_JOB_ID];
	struct msg m;
	unsigned int id, i;
	int err, n, k;

	n = job_ids(ids, ESA_MAX_JOB_ID);
	if (n < 0)
		return -EIO;
	for (k = 0; k < n; k++) {
		msg_start(&m, ESA_CMD_JOB_DEL, 0);
		put_u32(&m, ESA_A_JOB_ID, ids[k]);
		err = request(&m);
		if (err)
			return err;
	}
	msg_start(&m, ESA_CMD_POLICY_SET, 0);
	put_u32(&m, ESA_A_POLICY, ESA_POLICY_ESA);
	err = request(&m);
	msg_start(&m, ESA_CMD_CONFIG_SET, 0);
	put_u32(&m, ESA_A_CFG_AGG_SLOTS, ESA_AGG_SLOTS_DEFAULT);
	put_u32(&m, ESA_A_CFG_AGG_TIMEOUT_US, ESA_TIMEOUT_US_DEFAULT);
	put_u32(&m, ESA_A_CFG_AGING_MS, ESA_AGING_MS_DEFAULT);
	put_u32(&m, ESA_A_CFG_DP_GENERATION, seed_generation);
	err = err ?: request(&m);
	for (id = 1; !err && id <= SEED_JOBS; id++) {
		msg_start(&m, ESA_CMD_JOB_ADD, 0);
		put_u32(&m, ESA_A_JOB_ID, id);
		put_u8(&m, ESA_A_JOB_FAN_IN, id);
		put_u32(&m, ESA_A_JOB_PS_ADDR, htonl(0xc6130064u + id));
		put_u16(&m, ESA_A_JOB_PS_PORT, htons(47000));
		nest_start(&m, ESA_A_JOB_WORKERS);
		for (i = 0; i < id; i++) {
			nest_start(&m, ESA_A_WORKERS_WORKER);
			put_u32(&m, ESA_A_WORKER_ADDR, htonl(0xc6130000u | id << 8 | (10 + i)));
			put_u16(&m, ESA_A_WORKER_PORT, htons(47000 + id));
			nest_end(&m);
		}
		nest_end(&m);
		if (id % 2)
			put(&m, ESA_A_JOB_PRIO_AUTO, NULL, 0);
		else
			put_u8(&m, ESA_A_JOB_PRIORITY, 10 * id);
		err = request(&m);
	}
	return err;
}

/* Why the seed state was not restored after message @i: once each. */
static void seed_diff(long i, int err, const struct state *now,
		      const struct state *want)
{
	size_t o = 0;

	if (err) {
		printf("# after message %ld: seeding failed: %s\n", i, strerror(-err));
		return;
	}
	while (o < now->len && o < want->len && now->b[o] == want->b[o])
		o++;
	printf("# after message %ld: the state read back differs from the seed "
	       "state at byte %zu of %zu (%zu expected), %u jobs (%u expected)\n",
	       i, o, now->len, want->len, now->jobs, want->jobs);
}

/* ---- slab objects in use ------------------------------------------------ */

/*
 * Objects in use per kmalloc cache, after an RCU grace period's worth of
 * waiting (kfree_rcu() of replaced records) and shrinking the caches
 * (objects then counts exactly, CONFIG_SLUB_DEBUG). The total, or -1.
 */
#define MAX_CACHES 64
#define SLAB_NOISE	64	/* objects the rest of the kernel may add */
#define SLAB_REREADS	5
struct slab_count {
	char name[256];
	long long objects;
};

static long long kmalloc_objects(struct slab_count *c, int *nc)
{
	char path[512], line[64];
	struct dirent *d;
	long long sum = 0;
	DIR *dir;
	FILE *f;
	int n = 0;

	sleep(2);
	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return -1;
	while ((d = readdir(dir)) && n < MAX_CACHES) {
		if (strncmp(d->d_name, "kmalloc-", 8))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", d->d_name);
		f = fopen(path, "w");
		if (f) {
			fputs("1", f);
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objects", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f)) {
			snprintf(c[n].name, sizeof(c[n].name), "%s", d->d_name);
			c[n].objects = atoll(line);
			sum += c[n++].objects;
		}
		fclose(f);
	}
	closedir(dir);
	*nc = n;
	return n ? sum : -1;
}

/* The caches that grew from @a to @b, as diagnostics. */
static void slab_growth(const struct slab_count *a, int na,
			const struct slab_count *b, int nb)
{
	for (int i = 0; i < nb; i++)
		for (int k = 0; k < na; k++)
			if (!strcmp(a[k].name, b[i].name) && b[i].objects != a[k].objects)
				printf("#   %s: %+lld\n", b[i].name, b[i].objects - a[k].objects);
}

/* ---- main ---------------------------------------------------------------- */

static int family_id(void)
{
	struct reply r = { 0 };
	struct msg m;
	const struct nlattr *a;
	size_t o;
	uint32_t n;

	msg_start(&m, CTRL_CMD_GETFAMILY, 0);
	((struct nlmsghdr *)m.b)->nlmsg_type = GENL_ID_CTRL;
	m.b[NLMSG_HDRLEN + 1] = 1;
	put(&m, CTRL_ATTR_FAMILY_NAME, ESA_GENL_NAME, sizeof(ESA_GENL_NAME));
	msg_end(&m);
	if (talk(m.b, m.len, &r) || r.error || r.len < 4)
		return -1;
	memcpy(&n, r.data, 4);
	for (o = GENL_HDRLEN; o + NLA_HDRLEN <= n; o += NLA_ALIGN(a->nla_len)) {
		a = (const struct nlattr *)(r.data + 4 + o);
		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			family = *(uint16_t *)(a + 1);
	}
	free(r.data);
	return family ? 0 : -1;
}

static void hexdump(const struct msg *m)
{
	size_t i;

	printf("# message:");
	for (i = 0; i < m->len && i < 160; i++)
		printf("%s%02x", i % 32 ? "" : "\n#  ", (uint8_t)m->b[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 0, i;
	unsigned int seed_v = argc > 2 ? atoi(argv[2]) : 1017;
	long rejected = 0, accepted = 0, unanswered = 0, changed = 0,
	     inconsistent = 0, seed_lost = 0;
	static struct slab_count sc0[MAX_CACHES], sc_mid[MAX_CACHES], sc1[MAX_CACHES],
				 sc_retry[MAX_CACHES];
	int n0 = 0, n_mid = 0, n1 = 0, n_retry = 0;
	long long objs0, objs1, objs_mid = -1;
	struct state before = { 0 }, after = { 0 }, seed_state = { 0 };
	struct reply r = { 0 };
	int one = 1, err;
	time_t t0 = time(NULL);
	struct msg m;

	printf("TAP version 13\n1..5\n");
	if (count < 1) {
		printf("not ok 1 - usage: genl_fuzz COUNT [SEED]\n");
		return 1;
	}
	srandom(seed_v);
	seq_no = time(NULL);
	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		printf("not ok 1 - netlink socket: %s\n", strerror(errno));
		return 1;
	}
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (family_id()) {
		printf("not ok 1 - no esa generic netlink family: is the module loaded?\n");
		return 1;
	}
	err = config_u32(ESA_A_CFG_DP_GENERATION, &seed_generation) ?:
	      seed() ?: state_read(&seed_state);
	if (err) {
		printf("not ok 1 - seed state: %s\n", strerror(-err));
		return 1;
	}
	objs0 = kmalloc_objects(sc0, &n0);
	printf("# seed %u, %ld messages, %u seed jobs, kmalloc objects in use %lld\n",
	       seed_v, count, seed_state.jobs, objs0);
	state_read(&before);
	for (i = 0; i < count; i++) {
		build(&m);
		if (rnd(4))
			mutate(&m);
		err = talk(m.b, m.len, &r);
		if (err) {
			if (unanswered++ < 3) {
				printf("# message %ld: no answer (%s)\n", i, strerror(-err));
				hexdump(&m);
			}
			continue;
		}
		if (state_read(&after)) {
			unanswered++;
			continue;
		}
		if (r.error) {
			rejected++;
			if (!state_same(&before, &after) && changed++ < 3) {
				printf("# message %ld rejected (%s) but the state changed\n",
				       i, strerror(-r.error));
				hexdump(&m);
			}
		} else {
			accepted++;
		}
		if (!after.consistent && inconsistent++ < 3) {
			printf("# message %ld left an inconsistent job table\n", i);
			hexdump(&m);
		}
		if ((i + 1) % RESET_EVERY == 0 || i + 1 == count) {
			err = seed();
			if (err || state_read(&after) || !state_same(&after, &seed_state)) {
				if (seed_lost++ < 3)
					seed_diff(i, err, &after, &seed_state);
			}
			if (i + 1 >= count / 10 && objs_mid < 0)
				objs_mid = kmalloc_objects(sc_mid, &n_mid);
		}
		{
			struct state t = before;	/* after is the new before */

			before = after;
			after = t;
		}
	}
	objs1 = kmalloc_objects(sc1, &n1);
	/*
	 * The count is the whole kernel's: work that an earlier test started
	 * (a namespace's teardown, deferred frees) can hold objects for a
	 * while. A leak stays; so a growth is read again, a few seconds
	 * apart, and the lowest reading counts.
	 */
	for (int again = 0; objs_mid >= 0 && objs1 - objs_mid > SLAB_NOISE &&
			    again < SLAB_REREADS; again++) {
		long long o = kmalloc_objects(sc_retry, &n_retry);

		printf("# kmalloc objects in use read again: %lld\n", o);
		if (o >= 0 && o < objs1) {
			objs1 = o;
			memcpy(sc1, sc_retry, sizeof(sc_retry));
			n1 = n_retry;
		}
	}
	printf("# %ld accepted, %ld rejected in %ld s; kmalloc objects in use: "
	       "start %lld, after %ld%% %lld, end %lld\n", accepted, rejected,
	       (long)(time(NULL) - t0), objs0, 10L, objs_mid, objs1);
	if (objs_mid >= 0 && objs1 != objs_mid)
		slab_growth(sc_mid, n_mid, sc1, n1);
	(void)sc0;
	printf("%sok 1 - %ld messages, every one answered\n",
	       unanswered ? "not " : "", count);
	printf("%sok 2 - state unchanged after each of the %ld rejected messages\n",
	       changed ? "not " : "", rejected);
	printf("%sok 3 - job table consistent after each of the %ld accepted messages\n",
	       inconsistent ? "not " : "", accepted);
	printf("%sok 4 - the seed state restored every %d messages\n",
	       seed_lost ? "not " : "", RESET_EVERY);
	if (objs0 < 0)
		printf("ok 5 - kmalloc objects in use # SKIP no /sys/kernel/slab\n");
	else
		/*
		 * The first tenth warms up (caches, per-CPU lists); the other
		 * nine tenths must not add more than SLAB_NOISE objects: over
		 * 100,000 messages that catches a leak of one object per 1,400
		 * messages; the 2,000 of make check only one per 28.
		 */
		printf("%sok 5 - no kmalloc objects left behind: %+lld over the last %ld messages\n",
		       objs1 - objs_mid > SLAB_NOISE ? "not " : "", objs1 - objs_mid,
		       count - count / 10);
	return unanswered || changed || inconsistent || seed_lost ||
	       (objs0 >= 0 && objs1 - objs_mid > SLAB_NOISE);
}
