// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated switch: the real data plane under BPF_PROG_TEST_RUN with a
 * virtual clock, its multicast split per port by its own egress step
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
#include <bpf/libbpf.h>

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

uint32_t simsw_port_of(uint32_t ip)
{
	return ip;
}

/*
 * The egress step (bpf/esa_egress_port.bpf.c) on the maps of the loaded
 * switch @sw, but for esa_neigh: its own, the port plan, which
 * simsw_announce() fills.
 */
static int egress_load(struct simsw *s)
{
	struct bpf_program *prog;
	struct bpf_map *m;
	int err, fd;

	s->egress = esa_egress_port_bpf__open();
	if (!s->egress)
		return -errno;
	/* the egress step alone: none of the switch's own programs */
	bpf_object__for_each_program(prog, s->egress->obj)
		bpf_program__set_autoload(prog, prog == s->egress->progs.esa_egress_at_port);
	bpf_object__for_each_map(m, s->egress->obj) {
		if (!strcmp(bpf_map__name(m), "esa_neigh"))
			continue;
		fd = esa_switch_map_fd(s->sw, bpf_map__name(m));
		if (fd < 0)
			continue;
		err = bpf_map__reuse_fd(m, fd);
		if (err)
			return err;
	}
	err = esa_egress_port_bpf__load(s->egress);
	if (err)
		return err;
	s->egress_fd = bpf_program__fd(s->egress->progs.esa_egress_at_port);
	s->ports_fd = bpf_map__fd(s->egress->maps.esa_neigh);
	return 0;
}

int simsw_open(struct simsw *s, uint32_t capacity)
{
	struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_MAPS,
				     .agg_capacity = capacity,
				     .virtual_clock = true };
	void *m;
	int err, fd;

	memset(s, 0, sizeof(*s));
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
	err = egress_load(s);
	if (err)
		goto fail;
	return 0;
fail:
	simsw_close(s);
	return err;
}

void simsw_close(struct simsw *s)
{
	esa_egress_port_bpf__destroy(s->egress);
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
	struct esa_neigh n = { 0 };
	uint32_t key = htonl(ip), outlen;
	uint8_t f[60] = { 0 };

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
	if (run(s, f, sizeof(f), &outlen) < 0)
		return -EIO;
	n.ifindex = simsw_port_of(ip);
	memcpy(n.mac, mac, 6);
	return bpf_map_update_elem(s->ports_fd, &key, &n, 0) ? -errno : 0;
}

/* Run the egress step for port @port on @in; the verdict, the copy in @out. */
static int run_egress(struct simsw *s, uint32_t port, const uint8_t *in,
		      uint32_t len, uint8_t *out, uint32_t *outlen)
{
	LIBBPF_OPTS(bpf_test_run_opts, t,
		    .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = SIMSW_FRAME_MAX + 256,
		    .repeat = 1);

	s->egress->bss->egress_port = port;
	s->runs++;
	if (bpf_prog_test_run_opts(s->egress_fd, &t))
		return -errno;
	*outlen = t.data_size_out;
	return (int)t.retval;
}

/* Whether @addr is the PS's or one of the first @i workers' of @job. */
static bool seen_before(const struct esa_job_info *job, unsigned i,
			uint32_t addr)
{
	if (addr == job->ps_addr)
		return true;
	for (unsigned k = 0; k < i; k++)
		if (job->worker_addr[k] == addr)
			return true;
	return false;
}

/*
 * The devmap broadcast of a multicast frame: the data plane's egress step
 * on a copy for each port, kept where it passes. Only the ports of the
 * frame's job's hosts are run, the PS's and then each worker's: on every
 * other port the step drops the copy (its port is nobody's of the job;
 * selftests/bpf/test_egress checks it), so running those would only cost
 * time.
 */
static int egress(struct simsw *s, const uint8_t *frame, uint32_t len,
		  simsw_emit_fn emit, void *ectx)
{
	static uint8_t copy[SIMSW_FRAME_MAX + 256];
	const struct esa_job_info *job;
	uint32_t id, addr, outlen = 0;
	int verdict;

	id = get16(frame + OFF_HDR + 4);
	job = id <= ESA_MAX_JOB_ID ? &s->jobs[id] : NULL;
	if (!job || job->job_id != id) {
		s->unexpected++;
		return 0;
	}
	for (unsigned i = 0; i <= job->fan_in && i <= ESA_MAX_WORKERS; i++) {
		/* index 0 is the PS, i the worker i - 1 */
		addr = i ? job->worker_addr[i - 1] : job->ps_addr;
		if (i && seen_before(job, i - 1, addr))
			continue;
		verdict = run_egress(s, simsw_port_of(ntohl(addr)), frame, len,
				     copy, &outlen);
		if (verdict < 0)
			return verdict;
		if (verdict == XDP_PASS)
			emit(ectx, ntohl(addr), copy, outlen);
	}
	return 0;
}

int simsw_packet(struct simsw *s, uint64_t now_ns, const uint8_t *in,
		 uint32_t len, simsw_emit_fn emit, void *ectx)
{
	uint32_t outlen;
	uint8_t flags;
	int verdict, err;

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
		err = egress(s, s->out, outlen, emit, ectx);
		return err ? err : verdict;
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
