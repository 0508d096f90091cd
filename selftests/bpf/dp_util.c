// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the data plane tests (dp_util.h). */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "dp_util.h"

static const __u8 worker_mac_base[6] = { 0x02, 0xee, 0, 0, 0, 0 };

static __u16 csum16(const void *p, int n)
{
	const __u16 *w = p;
	__u32 s = 0;

	for (; n > 1; n -= 2)
		s += *w++;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

static void mac_of(__u8 *mac, __u32 addr)
{
	memcpy(mac, worker_mac_base, 6);
	mac[2] = addr >> 24;
	mac[3] = addr >> 16;
	mac[4] = addr >> 8;
	mac[5] = addr;
}

void dp_build(struct dp_frame *f, const struct dp_pkt *p)
{
	__u8 *b = f->buf;
	struct esa_hdr h;
	__u16 trailer = p->token ? ESA_TOKEN_LEN : 0;
	__u16 ulen = 8 + ESA_HDR_LEN + 4 * p->count + trailer;
	__u64 t = htobe64(p->token);
	__u32 a;
	int i;

	memset(b, 0, 62);
	mac_of(b, p->daddr);
	mac_of(b + 6, p->saddr);
	b[12] = 0x08;
	b[13] = 0x00;
	b[14] = 0x45;
	*(__u16 *)(b + 16) = htons(20 + ulen);
	b[22] = 64;
	b[23] = 17;
	a = htonl(p->saddr);
	memcpy(b + 26, &a, 4);
	a = htonl(p->daddr);
	memcpy(b + 30, &a, 4);
	*(__u16 *)(b + 24) = csum16(b + 14, 20);
	*(__u16 *)(b + 34) = htons(p->sport);
	*(__u16 *)(b + 36) = htons(ESA_UDP_PORT);
	*(__u16 *)(b + 38) = htons(ulen);
	h.version = p->token ? ESA_WIRE_VERSION_TOKEN : ESA_WIRE_VERSION;
	h.flags = p->flags;
	h.fan_in = p->fan_in;
	h.priority = p->priority;
	h.job_id = htons(p->job_id);
	h.value_count = htons(p->count);
	h.seq = htonl(p->seq);
	h.agg_index = htonl(p->agg_index);
	h.worker_bitmap = htonl(p->bitmap);
	memcpy(b + 42, &h, sizeof(h));
	for (i = 0; i < p->count; i++) {
		a = htonl((__u32)p->values[i]);
		memcpy(b + 62 + 4 * i, &a, 4);
	}
	memcpy(b + 62 + 4 * p->count, &t, trailer);
	f->len = 62 + 4 * p->count + trailer;
}

void dp_pkt_worker(struct dp_pkt *p, __u32 job, __u8 fan_in, int w,
		   __u32 seq, __u32 idx, const __s32 *vals, __u16 count)
{
	memset(p, 0, sizeof(*p));
	p->job_id = job;
	p->fan_in = fan_in;
	p->seq = seq;
	p->agg_index = idx;
	p->bitmap = 1u << w;
	p->count = count;
	p->values = vals;
	p->saddr = DP_WORKER_ADDR(job, w);
	p->sport = DP_WORKER_PORT(job, w);
	p->daddr = DP_PS_ADDR(job);
}

void dp_pkt_result(struct dp_pkt *p, __u32 job, __u8 fan_in, __u32 seq,
		   __u32 idx, const __s32 *vals, __u16 count)
{
	memset(p, 0, sizeof(*p));
	p->job_id = job;
	p->fan_in = fan_in;
	p->seq = seq;
	p->agg_index = idx;
	p->bitmap = ESA_FULL_BITMAP(fan_in);
	p->flags = ESA_F_RESULT;
	p->count = count;
	p->values = vals;
	p->saddr = DP_PS_ADDR(job);
	p->sport = ESA_UDP_PORT;
	p->daddr = DP_WORKER_ADDR(job, 0);
}

/* Ones' complement sum of @n bytes (an odd last byte padded with 0). */
static __u32 sum16(__u32 s, const __u8 *p, __u32 n)
{
	__u16 w;

	for (; n > 1; n -= 2, p += 2) {
		memcpy(&w, p, 2);
		s += w;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, 1);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* The pseudo-header sum (RFC 793/768) of the IPv4 frame @b. */
static __u32 pseudo_sum(const __u8 *b, __u32 l4_len)
{
	__u16 w[2] = { htons(b[23]), htons(l4_len) };

	return sum16(sum16(0, b + 26, 8), (const __u8 *)w, 4);
}

void dp_build_l4(struct dp_frame *f, __u8 proto, __u32 payload, __u8 ihl,
		 enum dp_csum csum, __u32 seed)
{
	__u32 iph = 4 * ihl, hdr = proto == IPPROTO_TCP ? 20 : 8;
	__u32 l4 = hdr + payload, a, i;
	__u8 *b = f->buf, *t = b + 14 + iph;

	memset(b, 0, 14 + iph + hdr);
	mac_of(b, DP_WORKER_ADDR(9, 2));
	mac_of(b + 6, DP_WORKER_ADDR(9, 1));
	b[12] = 0x08;
	b[14] = 0x40 | ihl;
	memset(b + 34, 1, iph - 20);		/* options: NOP */
	*(__u16 *)(b + 16) = htons(iph + l4);
	*(__u16 *)(b + 18) = htons(seed);
	b[20] = 0x40;				/* DF */
	b[22] = 64;
	b[23] = proto;
	a = htonl(DP_WORKER_ADDR(9, 1));
	memcpy(b + 26, &a, 4);
	a = htonl(DP_WORKER_ADDR(9, 2));
	memcpy(b + 30, &a, 4);
	*(__u16 *)(b + 24) = csum16(b + 14, iph);
	*(__u16 *)t = htons(40000 + seed % 1000);
	*(__u16 *)(t + 2) = htons(9000);
	if (proto == IPPROTO_TCP) {
		*(__u32 *)(t + 4) = htonl(seed * 2654435761u);
		t[12] = 5 << 4;
		t[13] = 0x18;			/* PSH ACK */
		*(__u16 *)(t + 14) = htons(64240);
	} else {
		*(__u16 *)(t + 4) = htons(l4);
	}
	for (i = 0; i < payload; i++)
		t[hdr + i] = (__u8)((seed + i) * 167 + (i >> 8));
	f->len = 14 + iph + l4;
	dp_l4_csum_set(f, csum);
}

void dp_l4_csum_set(struct dp_frame *f, enum dp_csum csum)
{
	__u8 *b = f->buf;
	__u32 iph = 4 * (b[14] & 0xf), l4 = ntohs(*(__u16 *)(b + 16)) - iph;
	__u8 *t = b + 14 + iph;
	__u32 s;
	__u16 c;

	*(__u16 *)(b + dp_l4_csum_off(f)) = 0;
	s = pseudo_sum(b, l4);
	c = csum == DP_CSUM_PARTIAL ? (__u16)s :
	    csum == DP_CSUM_FULL ? (__u16)~sum16(s, t, l4) : 0;
	if (csum == DP_CSUM_FULL && !c)
		c = 0xffff;
	*(__u16 *)(b + dp_l4_csum_off(f)) = c;
}

__u32 dp_l4_csum_off(const struct dp_frame *f)
{
	return 14 + 4 * (f->buf[14] & 0xf) + (f->buf[23] == IPPROTO_TCP ? 16 : 6);
}

int dp_l4_csum_ok(const __u8 *b, __u32 len)
{
	__u32 iph = 4 * (b[14] & 0xf), tot = ntohs(*(__u16 *)(b + 16));

	if (len < 14 + tot || tot < iph)
		return 0;
	return sum16(pseudo_sum(b, tot - iph), b + 14 + iph, tot - iph) == 0xffff;
}

int dp_parse(const __u8 *b, __u32 len, struct dp_out *o)
{
	__u32 a;
	int i, n;

	if (len < 62 || b[12] != 0x08 || b[13] != 0 || b[14] != 0x45)
		return -1;
	memcpy(o->dmac, b, 6);
	memcpy(o->smac, b + 6, 6);
	o->ip_len = ntohs(*(__u16 *)(b + 16));
	o->ip_csum_ok = csum16(b + 14, 20) == 0;
	memcpy(&a, b + 26, 4);
	o->saddr = ntohl(a);
	memcpy(&a, b + 30, 4);
	o->daddr = ntohl(a);
	o->sport = ntohs(*(__u16 *)(b + 34));
	o->dport = ntohs(*(__u16 *)(b + 36));
	o->udp_len = ntohs(*(__u16 *)(b + 38));
	o->udp_csum = ntohs(*(__u16 *)(b + 40));
	memcpy(&o->h, b + 42, sizeof(o->h));
	o->h.job_id = ntohs(o->h.job_id);
	o->h.value_count = ntohs(o->h.value_count);
	o->h.seq = ntohl(o->h.seq);
	o->h.agg_index = ntohl(o->h.agg_index);
	o->h.worker_bitmap = ntohl(o->h.worker_bitmap);
	n = o->h.value_count;
	if (n > ESA_MAX_VALUES || len < 62u + 4 * n)
		return -1;
	for (i = 0; i < n; i++) {
		memcpy(&a, b + 62 + 4 * i, 4);
		o->values[i] = (__s32)ntohl(a);
	}
	o->token = 0;
	if (o->h.version == ESA_WIRE_VERSION_TOKEN) {
		if (len < 62u + 4 * n + ESA_TOKEN_LEN)
			return -1;
		memcpy(&o->token, b + 62 + 4 * n, ESA_TOKEN_LEN);
		o->token = be64toh(o->token);
	}
	return 0;
}

int dp_run(struct esa_switch *sw, const struct dp_frame *in,
	   struct dp_frame *out)
{
	return dp_run_on(sw, in, out, 0);
}

int dp_run_on(struct esa_switch *sw, const struct dp_frame *in,
	      struct dp_frame *out, __u32 ifindex)
{
	static struct dp_frame scratch;
	LIBBPF_OPTS(bpf_test_run_opts, t);
	struct xdp_md md = { .data_end = in->len, .ingress_ifindex = ifindex };
	int err;

	if (!out)
		out = &scratch;
	if (ifindex) {
		t.ctx_in = &md;
		t.ctx_size_in = sizeof(md);
	}
	t.data_in = in->buf;
	t.data_size_in = in->len;
	t.data_out = out->buf;
	t.data_size_out = sizeof(out->buf);
	t.repeat = 1;
	err = bpf_prog_test_run_opts(esa_switch_prog_fd(sw), &t);
	if (err)
		return -errno;
	out->len = t.data_size_out;
	return t.retval;
}

void dp_job(struct esa_job_info *job, __u32 j, __u8 fan_in, __u8 prio,
	    __u32 base, __u32 slice)
{
	int i;

	memset(job, 0, sizeof(*job));
	job->job_id = j;
	job->fan_in = fan_in;
	job->priority = prio;
	job->prio_mode = ESA_PRIO_FIXED;
	job->agg_base = base;
	job->agg_slice = slice;
	job->ps_addr = htonl(DP_PS_ADDR(j));
	job->ps_port = htons(ESA_UDP_PORT);
	for (i = 0; i < ESA_MAX_WORKERS; i++) {
		job->worker_addr[i] = htonl(DP_WORKER_ADDR(j, i));
		job->worker_port[i] = htons(DP_WORKER_PORT(j, i));
	}
}

static void clear_hash(int fd, size_t ksz)
{
	__u8 key[64], next[64];

	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, ksz);
		if (bpf_map_delete_elem(fd, key))
			break;
	}
}

int dp_reset(struct esa_switch *sw, __u32 policy, __u32 slots,
	     __u32 timeout_us)
{
	struct esa_switch_config cfg = {
		.policy = policy, .agg_slots = slots,
		.agg_timeout_us = timeout_us,
	};
	int err;

	for (__u32 id = 1; id <= ESA_MAX_JOB_ID; id++)
		esa_switch_job_del(sw, id);	/* -ENOENT where none */
	clear_hash(esa_switch_map_fd(sw, "esa_neigh"), 4);
	clear_hash(esa_switch_map_fd(sw, "esa_learned"), 4);
	clear_hash(esa_switch_map_fd(sw, "esa_fdb"), 8);
	clear_hash(esa_switch_map_fd(sw, "esa_learn_ports"), 4);
	err = esa_switch_learned_changed(sw);
	if (!err)
		err = esa_switch_agg_clear(sw, DP_SLOTS);
	if (!err)
		err = esa_switch_counters_reset(sw);
	if (!err)
		err = esa_switch_set_config(sw, &cfg);
	return err;
}

__u64 dp_cnt(struct esa_switch *sw, __u32 job, unsigned int c)
{
	__u64 v[__ESA_CNT_MAX];

	if (esa_switch_counters(sw, job, v) || c >= __ESA_CNT_MAX)
		return ~0ull;
	return v[c];
}

__s32 dp_occupancy(struct esa_switch *sw, __u32 job)
{
	__s32 n;

	if (bpf_map_lookup_elem(esa_switch_map_fd(sw, "esa_occupancy"), &job,
				&n))
		return INT_MIN;
	return n;
}

int dp_same_resident(const struct esa_agg *a, const struct esa_agg *b)
{
	struct esa_agg x = *a, y = *b;

	memset(x.gone_rec, 0, sizeof(x.gone_rec));
	memset(y.gone_rec, 0, sizeof(y.gone_rec));
	x.gone_next = y.gone_next = 0;
	return !memcmp(&x, &y, sizeof(x));
}
