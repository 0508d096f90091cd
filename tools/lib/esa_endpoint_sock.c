// SPDX-License-Identifier: GPL-2.0
/*
 * Batched UDP for the endpoints: packets are queued and leave in one
 * sendmmsg(); arrivals are taken with recvmmsg() after a ppoll() that
 * carries the caller's (microsecond) timeout. Sends use SO_NO_CHECK: the
 * contract has every aggregation packet travel with UDP checksum 0, so the
 * switch forwards stack-originated packets over veth without fix-ups.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
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

int esa_udp_open(const struct sockaddr_in *addr)
{
	int one = 1, fd, err;
	char a[INET_ADDRSTRLEN];

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return esa_set_error(-errno, "socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one))) {
		err = errno;
		close(fd);
		return esa_set_error(-err, "SO_NO_CHECK: %s", strerror(err));
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
	return fd;
}

void esa_txq_init(struct esa_txq *q, int fd)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
}

void esa_rxq_init(struct esa_rxq *q, int fd)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
	for (unsigned i = 0; i < ESA_BATCH; i++) {
		q->iov[i].iov_base = q->buf[i];
		q->iov[i].iov_len = ESA_RX_BUFSZ;
	}
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
	unsigned i = q->n++;

	q->iov[i].iov_base = q->buf[i];
	q->iov[i].iov_len = len;
	memset(&q->msg[i], 0, sizeof(q->msg[i]));
	q->msg[i].msg_hdr.msg_name = &q->to[i];
	q->msg[i].msg_hdr.msg_namelen = sizeof(q->to[i]);
	q->msg[i].msg_hdr.msg_iov = &q->iov[i];
	q->msg[i].msg_hdr.msg_iovlen = 1;
}

int esa_txq_flush(struct esa_txq *q)
{
	unsigned done = 0;
	int r;

	if (q->sink) {
		for (unsigned i = 0; i < q->n; i++)
			q->sink(q->sink_ctx, &q->to[i], q->buf[i],
				q->iov[i].iov_len);
		if (q->n)
			q->batches++;
		q->n = 0;
		return 0;
	}
	while (done < q->n) {
		r = sendmmsg(q->fd, q->msg + done, q->n - done, 0);
		q->batches++;
		if (r > 0) {
			done += r;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == ENOBUFS || errno == EAGAIN ||
		    errno == ECONNREFUSED || errno == EHOSTUNREACH ||
		    errno == ENETUNREACH) {
			/* Like a loss on the wire: resends recover it. */
			q->drops++;
			done++;
			continue;
		}
		r = errno;
		q->n = 0;
		return esa_set_error(-r, "sendmmsg: %s", strerror(r));
	}
	q->n = 0;
	return 0;
}

int esa_rxq_recv(struct esa_rxq *q, int64_t timeout_ns)
{
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	int r;

	q->n = 0;
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
	for (unsigned i = 0; i < ESA_BATCH; i++) {
		memset(&q->msg[i].msg_hdr, 0, sizeof(q->msg[i].msg_hdr));
		q->msg[i].msg_hdr.msg_name = &q->from[i];
		q->msg[i].msg_hdr.msg_namelen = sizeof(q->from[i]);
		q->msg[i].msg_hdr.msg_iov = &q->iov[i];
		q->msg[i].msg_hdr.msg_iovlen = 1;
	}
	r = recvmmsg(q->fd, q->msg, ESA_BATCH, MSG_DONTWAIT, NULL);
	if (r < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return errno == EINTR ? -EINTR : 0;
		return esa_set_error(-errno, "recvmmsg: %s", strerror(errno));
	}
	q->n = r;
	q->batches++;
	return r;
}
