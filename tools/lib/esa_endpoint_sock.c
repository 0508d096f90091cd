// SPDX-License-Identifier: GPL-2.0
/*
 * Batched UDP for the endpoints (Documentation/endpoints.rst, "Sockets").
 * Packets are queued and leave in one sendmmsg(); consecutive datagrams to
 * one address of one size go as one UDP GSO message, which the kernel cuts
 * into datagrams after a single trip through the socket and IP layers.
 * Arrivals are taken with recvmmsg() after a ppoll() that carries the
 * caller's timeout, with UDP GRO: the kernel hands over runs of datagrams
 * of one flow as one message, and esa_rxq_next() cuts them apart again.
 *
 * GSO needs UDP checksums (the kernel refuses it with SO_NO_CHECK), so
 * only sockets whose datagrams all go to ESA_UDP_PORT use it: the switch
 * takes every such packet and writes checksum 0 into whatever it sends
 * on. Any other datagram may be forwarded at layer 2, and over veth an
 * XDP redirect loses the stack's partial checksum (Documentation/
 * dataplane.rst): those sockets, and all where the kernel has no GSO,
 * send single datagrams with checksum 0 (SO_NO_CHECK), as the contract
 * allows.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <linux/errqueue.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esa_endpoint.h"

#define ESA_SOCK_BUF	(8 << 20)

uint64_t esa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_buf(int fd, int opt, int force_opt)
{
	int sz = ESA_SOCK_BUF;

	/* The FORCE variant passes rmem_max/wmem_max when we are root. */
	if (setsockopt(fd, SOL_SOCKET, force_opt, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, opt, &sz, sizeof(sz));
}

/* UDP GSO if wanted and the kernel has it (4.18), else checksum 0. */
static int set_tx_mode(int fd, bool want_gso, bool *gso)
{
	int zero = 0, one = 1;

	/* A default segment size of 0: only messages that ask are cut. */
	*gso = want_gso &&
	       !setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero));
	if (*gso)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)))
		return esa_set_error(-errno, "SO_NO_CHECK: %s", strerror(errno));
	return 0;
}

int esa_udp_open(const struct sockaddr_in *addr, bool want_gso, bool *gso)
{
	char a[INET_ADDRSTRLEN];
	bool use_gso;
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return esa_set_error(-errno, "socket: %s", strerror(errno));
	err = set_tx_mode(fd, want_gso, &use_gso);
	if (err) {
		close(fd);
		return err;
	}
	set_buf(fd, SO_RCVBUF, SO_RCVBUFFORCE);
	set_buf(fd, SO_SNDBUF, SO_SNDBUFFORCE);
	if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		err = errno;
		close(fd);
		inet_ntop(AF_INET, &addr->sin_addr, a, sizeof(a));
		return esa_set_error(-err, "bind %s:%u: %s", a,
				     ntohs(addr->sin_port), strerror(err));
	}
	if (gso)
		*gso = use_gso;
	return fd;
}

int esa_udp_recverr(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)))
		return esa_set_error(-errno, "IP_RECVERR: %s", strerror(errno));
	return 0;
}

/* Count one queued socket error by what it says. */
static void icmp_count(struct esa_icmp_seen *icmp, const struct msghdr *mh)
{
	const struct sock_extended_err *ee;
	const struct sockaddr_in *off;
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR((struct msghdr *)mh); c;
	     c = CMSG_NXTHDR((struct msghdr *)mh, c)) {
		if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
			continue;
		ee = (const struct sock_extended_err *)CMSG_DATA(c);
		if (ee->ee_errno == ECONNREFUSED)
			icmp->port_unreachable++;
		else if (ee->ee_errno == EHOSTUNREACH || ee->ee_errno == ENETUNREACH)
			icmp->host_unreachable++;
		else
			icmp->other++;
		off = (const struct sockaddr_in *)SO_EE_OFFENDER(ee);
		if (off->sin_family == AF_INET)
			icmp->from = off->sin_addr;
	}
}

/* Take every queued socket error (each keeps POLLERR up until read). */
static void errqueue_drain(struct esa_rxq *q)
{
	char ctl[512], data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr mh;

	for (int i = 0; i < 64; i++) {
		mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = ctl,
				      .msg_controllen = sizeof(ctl) };
		if (recvmsg(q->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
		icmp_count(&q->icmp, &mh);
	}
}

void esa_txq_init(struct esa_txq *q, int fd, bool gso)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->gso = gso;
}

int esa_txq_next(struct esa_txq *q, const struct sockaddr_in *to,
		 uint8_t **buf)
{
	int err;

	if (q->n == ESA_BATCH) {
		err = esa_txq_flush(q);
		if (err)
			return err;
	}
	q->to[q->n] = *to;
	*buf = q->buf[q->n];
	return 0;
}

void esa_txq_commit(struct esa_txq *q, size_t len)
{
	q->len[q->n++] = len;
}

static uint64_t addr_key(const struct sockaddr_in *a)
{
	return (uint64_t)ntohl(a->sin_addr.s_addr) << 16 | ntohs(a->sin_port);
}

/*
 * The send order: queued packets grouped by destination (a stable sort,
 * so each destination still gets its packets in queue order), which makes
 * a host-only PS's results to every worker GSO runs too.
 */
static void send_order(const struct esa_txq *q, uint8_t *ord)
{
	for (unsigned i = 0; i < q->n; i++) {
		uint64_t k = addr_key(&q->to[i]);
		unsigned j = i;

		for (; j > 0 && addr_key(&q->to[ord[j - 1]]) > k; j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
}

/*
 * Datagrams ord[i..] that one message can carry: with GSO, those to the
 * first one's address, of its size (the last may be shorter), within the
 * kernel's segment and byte limits.
 */
static unsigned run_length(const struct esa_txq *q, const uint8_t *ord,
			   unsigned i)
{
	const struct sockaddr_in *to = &q->to[ord[i]];
	size_t seg = q->len[ord[i]], bytes = seg;
	unsigned k = i + 1;

	if (!q->gso)
		return 1;
	while (k < q->n && k - i < ESA_GSO_MAX_SEGS) {
		size_t len = q->len[ord[k]];

		if (len > seg || bytes + len > ESA_GSO_MAX_BYTES ||
		    addr_key(&q->to[ord[k]]) != addr_key(to))
			break;
		bytes += len;
		k++;
		if (len < seg)
			break;
	}
	return k - i;
}

/* Messages for ord[from..n): their datagram counts in cnt. */
static unsigned build_msgs(struct esa_txq *q, const uint8_t *ord,
			   unsigned from, uint8_t *cnt)
{
	unsigned m = 0;

	for (unsigned i = from; i < q->n; i += cnt[m++]) {
		struct msghdr *h = &q->msg[m].msg_hdr;
		unsigned c = run_length(q, ord, i);

		memset(h, 0, sizeof(*h));
		h->msg_name = &q->to[ord[i]];
		h->msg_namelen = sizeof(q->to[0]);
		h->msg_iov = &q->iov[i];
		h->msg_iovlen = c;
		cnt[m] = c;
		if (c > 1) {
			struct cmsghdr *cm;
			uint16_t seg = q->len[ord[i]];

			h->msg_control = q->ctl[m].buf;
			h->msg_controllen = CMSG_SPACE(sizeof(seg));
			cm = CMSG_FIRSTHDR(h);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		}
	}
	return m;
}

/* A send error that is like a loss on the wire: resends recover it. */
static bool is_transient(int err)
{
	return err == ENOBUFS || err == EAGAIN || err == ECONNREFUSED ||
	       err == EHOSTUNREACH || err == ENETUNREACH;
}

static void flush_to_sink(struct esa_txq *q)
{
	for (unsigned i = 0; i < q->n; i++)
		q->sink(q->sink_ctx, &q->to[i], q->buf[i], q->len[i]);
	if (q->n)
		q->batches++;
	q->n = 0;
}

int esa_txq_flush(struct esa_txq *q)
{
	uint8_t ord[ESA_BATCH], cnt[ESA_BATCH];
	unsigned done = 0, m;
	int r, err;

	if (q->sink) {
		flush_to_sink(q);
		return 0;
	}
	send_order(q, ord);
	for (unsigned i = 0; i < q->n; i++) {
		q->iov[i].iov_base = q->buf[ord[i]];
		q->iov[i].iov_len = q->len[ord[i]];
	}
	while (done < q->n) {
		m = build_msgs(q, ord, done, cnt);
		r = sendmmsg(q->fd, q->msg, m, 0);
		q->batches++;
		if (r > 0) {
			for (int k = 0; k < r; k++)
				done += cnt[k];
			continue;
		}
		err = errno;
		if (err == EINTR)
			continue;
		if (cnt[0] > 1 && (err == EIO || err == EINVAL ||
				   err == EOPNOTSUPP)) {
			/* The path cannot segment (no checksum offload, a
			 * smaller MTU): single datagrams from now on. */
			q->gso = false;
			continue;
		}
		if (is_transient(err)) {
			q->drops += cnt[0];
			done += cnt[0];
			continue;
		}
		q->n = 0;
		return esa_set_error(-err, "sendmmsg: %s", strerror(err));
	}
	q->n = 0;
	return 0;
}

int esa_rxq_init(struct esa_rxq *q, int fd)
{
	int one = 1;

	memset(q, 0, sizeof(*q));
	q->fd = fd;
	if (!setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one))) {
		q->slots = ESA_GRO_SLOTS;
		q->slot_size = ESA_GRO_BUFSZ;
	} else {
		q->slots = ESA_BATCH;
		q->slot_size = ESA_RX_BUFSZ;
	}
	q->buf = malloc(q->slots * q->slot_size);
	if (!q->buf)
		return esa_set_error(-ENOMEM, "out of memory for receive buffers");
	for (unsigned i = 0; i < q->slots; i++) {
		q->iov[i].iov_base = q->buf + i * q->slot_size;
		q->iov[i].iov_len = q->slot_size;
	}
	return 0;
}

void esa_rxq_free(struct esa_rxq *q)
{
	free(q->buf);
	q->buf = NULL;
}

/* The datagram size of a GRO message (0: it is one datagram). */
static unsigned gro_segment(struct msghdr *h)
{
	struct cmsghdr *cm;
	int seg;

	for (cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
			memcpy(&seg, CMSG_DATA(cm), sizeof(seg));
			return seg > 0 ? (unsigned)seg : 0;
		}
	}
	return 0;
}

int esa_rxq_recv(struct esa_rxq *q, int64_t timeout_ns)
{
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	int r;

	q->n = q->cur = 0;
	q->off = 0;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
		tsp = &ts;
	}
	r = ppoll(&pfd, 1, tsp, NULL);
	if (r < 0)
		return esa_set_error(-errno, "ppoll: %s", strerror(errno));
	if (r == 0)
		return 0;
	if (pfd.revents & POLLERR)
		errqueue_drain(q);
	if (!(pfd.revents & POLLIN))
		return 0;
	for (unsigned i = 0; i < q->slots; i++) {
		struct msghdr *h = &q->msg[i].msg_hdr;

		memset(h, 0, sizeof(*h));
		h->msg_name = &q->from[i];
		h->msg_namelen = sizeof(q->from[i]);
		h->msg_iov = &q->iov[i];
		h->msg_iovlen = 1;
		h->msg_control = q->ctl[i].buf;
		h->msg_controllen = sizeof(q->ctl[i].buf);
	}
	r = recvmmsg(q->fd, q->msg, q->slots, MSG_DONTWAIT, NULL);
	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return errno == EINTR ? -EINTR : 0;
		/* A pending ICMP error (IP_RECVERR): taken, not fatal. */
		if (errno == ECONNREFUSED || errno == EHOSTUNREACH ||
		    errno == ENETUNREACH) {
			errqueue_drain(q);
			return 0;
		}
		return esa_set_error(-errno, "recvmmsg: %s", strerror(errno));
	}
	for (int i = 0; i < r; i++)
		q->seg[i] = gro_segment(&q->msg[i].msg_hdr);
	q->n = r;
	q->batches++;
	return r;
}

bool esa_rxq_next(struct esa_rxq *q, const uint8_t **buf, size_t *len,
		  const struct sockaddr_in **from)
{
	size_t total, seg;

	if (q->cur >= q->n)
		return false;
	/* A message is one datagram (an empty one too) or a GRO run of
	 * datagrams of size seg, the last one possibly shorter. */
	total = q->msg[q->cur].msg_len;
	seg = q->seg[q->cur];
	if (!seg || seg > total - q->off)
		seg = total - q->off;
	*buf = q->buf + q->cur * q->slot_size + q->off;
	*len = seg;
	*from = &q->from[q->cur];
	q->off += seg;
	if (q->off >= total) {
		q->cur++;
		q->off = 0;
	}
	return true;
}
