// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated switch: the real data plane under BPF_PROG_TEST_RUN with a
 * virtual clock, and the multicast's per-port egress step in C
 * (simswitch.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "simswitch.h"

#define OFF_IP		14
#define OFF_UDP		(OFF_IP + 20)
#define OFF_HDR		(OFF_UDP + 8)
#define OFF_VALS	(OFF_HDR + ESA_HDR_LEN)

/*
 * The Internet checksum (RFC 1071) of @len bytes at @p, starting from the
 * partial sum @s: the complement of the folded 16-bit one's complement sum.
 */
static uint16_t inet_csum(const uint8_t *p, uint32_t len, uint32_t s)
{
	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void set_ip_csum(uint8_t *f)
{
	put16(f + OFF_IP + 10, 0);
	put16(f + OFF_IP + 10, inet_csum(f + OFF_IP, 20, 0));
}

/*
 * The UDP checksum of the frame @f of @len bytes, written into it: the
 * pseudo header, the UDP header and the payload; 0 is sent as 0xffff.
 */
static void set_udp_csum(uint8_t *f, uint32_t len)
{
	uint32_t ulen = get16(f + OFF_UDP + 4), s = 0;
	uint16_t c;

	if (OFF_UDP + ulen > len)
		ulen = len - OFF_UDP;
	for (int i = 12; i < 20; i += 2)	/* source, destination */
		s += get16(f + OFF_IP + i);
	s += 17 + ulen;
	put16(f + OFF_UDP + 6, 0);
	c = inet_csum(f + OFF_UDP, ulen, s);
	put16(f + OFF_UDP + 6, c ? c : 0xffff);
}

uint32_t simsw_frame_build(uint8_t *f, const struct simsw_addr *src,
			   const struct simsw_addr *dst, const uint8_t *payload,
			   uint32_t plen)
{
	memcpy(f, dst->mac, 6);
	memcpy(f + 6, src->mac, 6);
	put16(f + 12, 0x0800);
	memset(f + OFF_IP, 0, 20);
	f[OFF_IP] = 0x45;
	put16(f + OFF_IP + 2, 20 + 8 + plen);
	f[OFF_IP + 8] = 64;
	f[OFF_IP + 9] = 17;		/* UDP */
	put32(f + OFF_IP + 12, src->ip);
	put32(f + OFF_IP + 16, dst->ip);
	set_ip_csum(f);
	put16(f + OFF_UDP, src->port);
	put16(f + OFF_UDP + 2, dst->port);
	put16(f + OFF_UDP + 4, 8 + plen);
	put16(f + OFF_UDP + 6, 0);	/* SO_NO_CHECK, as the endpoints */
	memcpy(f + OFF_HDR, payload, plen);
	return OFF_HDR + plen;
}

int simsw_frame_payload(const uint8_t *f, uint32_t len,
			const uint8_t **payload, uint32_t *plen,
			uint32_t *src_ip, uint16_t *src_port)
{
	uint32_t ulen;

	if (len < OFF_HDR || get16(f + 12) != 0x0800 || f[OFF_IP] != 0x45 ||
	    f[OFF_IP + 9] != 17)
		return -1;
	ulen = get16(f + OFF_UDP + 4);
	if (ulen < 8 || OFF_UDP + ulen > len)
		return -1;
	*payload = f + OFF_HDR;
	*plen = ulen - 8;
	*src_ip = get32(f + OFF_IP + 12);
	*src_port = get16(f + OFF_UDP);
	return 0;
}

void simsw_mac_of_ip(uint32_t ip, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0xe5;
	put32(mac + 2, ip);
}

uint32_t simsw_frame_dst(const uint8_t *f)
{
	return get32(f + OFF_IP + 16);
}

int simsw_open(struct simsw *s, uint32_t capacity, simsw_mac_fn mac_of,
	       void *ctx)
{
	struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_MAPS,
				     .agg_capacity = capacity,
				     .virtual_clock = true };
	void *m;
	int err, fd;

	memset(s, 0, sizeof(*s));
	s->mac_of = mac_of;
	s->ctx = ctx;
	s->jobs = calloc(ESA_MAX_JOB_ID + 1, sizeof(*s->jobs));
	if (!s->jobs)
		return -ENOMEM;
	err = esa_switch_load(&s->sw, &o);
	if (err)
		goto fail;
	fd = esa_switch_map_fd(s->sw, "esa_clock");
	m = fd < 0 ? MAP_FAILED : mmap(NULL, sysconf(_SC_PAGESIZE),
				       PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = fd < 0 ? -ENOENT : -errno;
		goto fail;
	}
	s->clock = m;
	s->prog_fd = esa_switch_prog_fd(s->sw);
	return 0;
fail:
	simsw_close(s);
	return err;
}

void simsw_close(struct simsw *s)
{
	if (s->clock)
		munmap((void *)s->clock, sysconf(_SC_PAGESIZE));
	esa_switch_close(s->sw);
	free(s->jobs);
	memset(s, 0, sizeof(*s));
}

int simsw_config(struct simsw *s, uint32_t policy, uint32_t slots,
		 uint32_t timeout_us)
{
	struct esa_switch_config c = {
		.policy = policy, .agg_slots = slots,
		.agg_timeout_us = timeout_us,
	};

	s->policy = policy;
	s->slots = slots;
	return esa_switch_set_config(s->sw, &c);
}

int simsw_job_put(struct simsw *s, const struct esa_job_info *job)
{
	int err = esa_switch_job_put(s->sw, job);

	if (!err)
		s->jobs[job->job_id] = *job;
	return err;
}

/* Run one frame; the verdict, the output in s->out (*outlen bytes). */
static int run(struct simsw *s, const uint8_t *in, uint32_t len,
	       uint32_t *outlen)
{
	LIBBPF_OPTS(bpf_test_run_opts, t,
		    .data_in = in, .data_size_in = len,
		    .data_out = s->out, .data_size_out = sizeof(s->out),
		    .repeat = 1);

	s->runs++;
	if (bpf_prog_test_run_opts(s->prog_fd, &t))
		return -errno;
	*outlen = t.data_size_out;
	return (int)t.retval;
}

int simsw_announce(struct simsw *s, uint32_t ip, const uint8_t mac[6])
{
	uint8_t f[60] = { 0 };
	uint32_t outlen;

	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1);		/* Ethernet */
	put16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, 1);		/* request */
	memcpy(f + 22, mac, 6);
	put32(f + 28, ip);
	put32(f + 38, ip);		/* gratuitous: target = sender */
	return run(s, f, sizeof(f), &outlen) < 0 ? -EIO : 0;
}

/* One copy of a multicast frame for worker @i of @job (esa_egress). */
static void egress_worker(struct simsw *s, const struct esa_job_info *job,
			  unsigned i, uint8_t flags, const uint8_t *frame,
			  uint32_t len, simsw_emit_fn emit, void *ectx)
{
	uint8_t copy[SIMSW_FRAME_MAX];
	uint32_t ps = ntohl(job->ps_addr), w = ntohl(job->worker_addr[i]);

	memcpy(copy, frame, len);
	copy[OFF_HDR + 1] = ESA_F_RESULT |
		(flags & (ESA_F_OVERFLOW | ESA_F_ECN | ESA_F_RESEND));
	s->mac_of(s->ctx, w, copy);
	s->mac_of(s->ctx, ps, copy + 6);
	put32(copy + OFF_IP + 12, ps);
	put32(copy + OFF_IP + 16, w);
	put16(copy + OFF_UDP, ESA_UDP_PORT);
	memcpy(copy + OFF_UDP + 2, &job->worker_port[i], 2);
	/*
	 * As esa_egress_port(): a switch's sum (COMPLETE) keeps a valid
	 * checksum through the rewrite, a RESULT the PS sent gets none.
	 */
	if ((flags & ESA_F_COMPLETE) && get16(frame + OFF_UDP + 6))
		set_udp_csum(copy, len);
	else
		put16(copy + OFF_UDP + 6, 0);
	set_ip_csum(copy);
	emit(ectx, w, copy, len);
}

/*
 * esa_egress, one switch port per host: the PS's port keeps a COMPLETE as
 * it is; worker i's port gets a RESULT addressed to worker i (a pull only
 * if worker i is in its bitmap); no other port gets a copy.
 */
void simsw_egress(struct simsw *s, const uint8_t *frame, uint32_t len,
		  simsw_emit_fn emit, void *ectx)
{
	const struct esa_job_info *job;
	uint32_t bitmap, id;
	uint8_t flags;

	if (len < OFF_VALS)
		return;
	flags = frame[OFF_HDR + 1];
	id = get16(frame + OFF_HDR + 4);
	bitmap = get32(frame + OFF_HDR + 16);
	job = id <= ESA_MAX_JOB_ID ? &s->jobs[id] : NULL;
	if (!job || job->job_id != id) {
		s->unexpected++;
		return;
	}
	if (flags & ESA_F_COMPLETE)
		emit(ectx, ntohl(job->ps_addr), frame, len);
	for (unsigned i = 0; i < job->fan_in && i < ESA_MAX_WORKERS; i++) {
		if ((flags & ESA_F_RESEND) && !(bitmap & (1u << i)))
			continue;	/* a pull for other workers */
		egress_worker(s, job, i, flags, frame, len, emit, ectx);
	}
}

int simsw_packet(struct simsw *s, uint64_t now_ns, const uint8_t *in,
		 uint32_t len, simsw_emit_fn emit, void *ectx)
{
	uint32_t outlen;
	uint8_t flags;
	int verdict;

	*s->clock = now_ns;
	verdict = run(s, in, len, &outlen);
	if (verdict < 0 || verdict == XDP_DROP)
		return verdict;
	if (outlen < OFF_VALS) {
		s->unexpected++;
		return verdict;
	}
	flags = s->out[OFF_HDR + 1];
	if (verdict == XDP_REDIRECT &&
	    (flags & (ESA_F_COMPLETE | ESA_F_RESULT))) {
		simsw_egress(s, s->out, outlen, emit, ectx);
		return verdict;
	}
	/*
	 * Every host was announced, so a unicast leaves by XDP_TX (all hosts
	 * sit behind the test run's one ingress device); a redirect is a
	 * flood the simulator did not expect: delivered, but counted.
	 */
	if (verdict != XDP_TX)
		s->unexpected++;
	emit(ectx, simsw_frame_dst(s->out), s->out, outlen);
	return verdict;
}
