/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the libesa endpoints shared by the worker, the parameter
 * server and the unit tests (selftests/endpoint). Not a public header: the
 * public API is esa.h.
 */
#ifndef _ESA_ENDPOINT_H
#define _ESA_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "esa.h"

/* ------------------------------------------------ errors (esa_endpoint_err.c) */

/* Record a reason for esa_last_error() and return @err (a negative errno). */
int esa_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Put "@fmt: " in front of the recorded reason; returns @err. */
int esa_error_context(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -------------------------------------------- wire (esa_endpoint_wire.c) */

/* The header fields in host order. */
struct esa_meta {
	uint8_t		flags;
	uint8_t		fan_in;
	uint8_t		priority;
	uint16_t	job_id;
	uint16_t	value_count;
	uint32_t	seq;
	uint32_t	agg_index;
	uint32_t	bitmap;
	uint64_t	token;		/* 0: none (version 1), else version 2 */
};

/* Values per packet of a job with @token (0: none). */
unsigned esa_wire_max_values(uint64_t token);
/* Write the 20-byte header into @buf. Returns ESA_HDR_LEN. */
size_t esa_wire_put(uint8_t *buf, const struct esa_meta *m);
/*
 * After the header and m->value_count values in @buf: write the token
 * trailer of a job with a token. Returns the packet's length.
 */
size_t esa_wire_end(uint8_t *buf, const struct esa_meta *m);
/*
 * Check a received UDP payload against the contract (version, known flags,
 * counts, exact length with the trailer of version 2, a non-zero token,
 * job id, fan_in, bitmap within fan_in) and decode its header and token
 * (0 for version 1). 0 or -EBADMSG. Whether the token is the job's is the
 * caller's rule.
 */
int esa_wire_parse(const uint8_t *buf, size_t len, struct esa_meta *m);
/* Byte order of value arrays: network <-> host. */
void esa_values_to_be(uint8_t *dst, const int32_t *src, unsigned n);
void esa_values_from_be(int32_t *dst, const uint8_t *src, unsigned n);

/* ----------------------------------- split and scale (esa_endpoint_chunk.c) */

/* Packets a tensor of @count values needs at @vpp values per packet. */
size_t esa_chunk_count(size_t count, unsigned vpp);
/* First value and value count of packet @idx. */
void esa_chunk_range(size_t idx, size_t count, unsigned vpp, size_t *off,
		     unsigned *n);
/*
 * The aggregator index of the job's packet number @count (see
 * esa_endpoint_config): its sequence counted past the 32-bit wrap, whose
 * low 32 bits are the wire's seq. By seq alone, seq % span, the packets
 * just before and after the wrap would share aggregators whenever span
 * does not divide 2^32 (no function of a 32-bit seq cycles through span
 * slots across the wrap then).
 */
uint32_t esa_agg_index(uint32_t slots, uint32_t offset, uint32_t span,
		       uint64_t count);

/* Largest |fixed-point value| one worker may contribute: INT32_MAX/(2 fan_in). */
int32_t esa_f32_limit(unsigned fan_in);
/*
 * Quantise @n floats at 2^scale_log2 into @out. A value beyond
 * esa_f32_limit(), or not finite, is sent as the marker INT32_MAX, which
 * makes the sum of its position fall outside the legitimate range (see
 * esa_f32_overflowed). Returns the number of such values.
 */
unsigned esa_f32_quantise(const float *in, unsigned n, int scale_log2,
			  unsigned fan_in, int32_t *out);
/* Whether a sum of fan_in contributions must be redone. */
bool esa_f32_overflowed(const int32_t *sum, unsigned n, unsigned fan_in,
			uint8_t flags);
void esa_f32_dequantise(const int32_t *sum, unsigned n, int scale_log2,
			float *out);

/* Saturating int32 add; sets *ovf when it saturated. */
static inline int32_t esa_sat_add(int32_t a, int32_t b, bool *ovf)
{
	int32_t r;

	if (__builtin_add_overflow(a, b, &r)) {
		*ovf = true;
		return a > 0 ? INT32_MAX : INT32_MIN;
	}
	return r;
}

/* ---------------------------------- PS merge rules (esa_endpoint_merge.c) */

enum esa_entry_state {
	ESA_ENTRY_EMPTY = 0,
	ESA_ENTRY_ACTIVE,	/* collecting pieces */
	ESA_ENTRY_DONE,		/* sum final, kept to answer resends */
};

/* One (job, seq) at the PS: the sum and the set C of workers in it. */
struct esa_entry {
	uint32_t	seq;
	uint32_t	bitmap;		/* C */
	uint32_t	agg_index;	/* of the latest piece (releases atp slots) */
	uint16_t	value_count;
	uint8_t		state;
	uint8_t		overflow;	/* a value saturated */
	uint8_t		priority;
	uint8_t		shard;		/* switch server its pieces come from */
	int32_t		sum[ESA_MAX_VALUES];
};

enum esa_merge_verdict {
	ESA_MERGE_ADDED,	/* piece added, sum not final yet */
	ESA_MERGE_FINISHED,	/* this piece made the sum final */
	ESA_MERGE_DUPLICATE,	/* B subset of C (or sum already final) */
	ESA_MERGE_OVERLAP,	/* B and C partly overlap: ignored */
	ESA_MERGE_BAD,		/* size or bitmap inconsistent */
};

/* Start collecting sequence @seq in @e. */
void esa_entry_reset(struct esa_entry *e, uint32_t seq);
/*
 * Apply the PS rules of Documentation/wire-protocol.rst to one piece with
 * header @m and big-endian values @vals; @full is the job's worker mask.
 */
enum esa_merge_verdict esa_entry_merge(struct esa_entry *e, uint32_t full,
				       const struct esa_meta *m,
				       const uint8_t *vals);

/* ------------------------------------ batched UDP (esa_endpoint_sock.c) */

#define ESA_BATCH	64
#define ESA_RX_BUFSZ	2048
/*
 * UDP GSO: one send of up to ESA_GSO_MAX_SEGS datagrams to one address,
 * all ESA_GSO_MAX_BYTES at most (the kernel's UDP_MAX_SEGMENTS and the
 * IPv4 datagram limit); UDP GRO: one receive of up to ESA_GRO_BUFSZ.
 */
#define ESA_GSO_MAX_SEGS	64
#define ESA_GSO_MAX_BYTES	(65535 - 20 - 8)
#define ESA_GRO_BUFSZ		65536
#define ESA_GRO_SLOTS		16

/* Where a queue without a socket delivers each datagram (a simulator). */
typedef void (*esa_tx_fn)(void *ctx, const struct sockaddr_in *to,
			  const uint8_t *buf, size_t len);

/* Control message room for one UDP_SEGMENT or UDP_GRO value. */
union esa_cmsg {
	char		buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr	align;
};

struct esa_txq {
	int		fd;
	bool		gso;		/* the socket sends with UDP_SEGMENT */
	unsigned	n;
	uint64_t	drops;
	uint64_t	batches;
	esa_tx_fn	sink;		/* set: flush hands packets here, no fd */
	void		*sink_ctx;
	size_t		len[ESA_BATCH];
	struct sockaddr_in to[ESA_BATCH];
	/* flush: one message per run of datagrams to one address */
	struct mmsghdr	msg[ESA_BATCH];
	struct iovec	iov[ESA_BATCH];
	union esa_cmsg	ctl[ESA_BATCH];
	uint8_t		buf[ESA_BATCH][ESA_MTU];
};

/*
 * ICMP errors the socket reported (IP_RECVERR, esa_udp_recverr()): what a
 * worker can learn of a path that answers nothing (esa_endpoint_diag.c).
 */
struct esa_icmp_seen {
	uint64_t	port_unreachable;	/* nothing listens on that port */
	uint64_t	host_unreachable;	/* no route, or no ARP answer */
	uint64_t	other;
	struct in_addr	from;			/* the last error's sender */
};

struct esa_rxq {
	int		fd;
	unsigned	slots;		/* messages per recvmmsg */
	size_t		slot_size;	/* bytes per message */
	unsigned	n;		/* messages of the last receive */
	unsigned	cur;		/* esa_rxq_next(): message ... */
	size_t		off;		/* ... and offset in it */
	uint64_t	batches;
	uint8_t		*buf;		/* slots * slot_size */
	struct esa_icmp_seen icmp;
	struct mmsghdr	msg[ESA_BATCH];
	struct iovec	iov[ESA_BATCH];
	struct sockaddr_in from[ESA_BATCH];
	union esa_cmsg	ctl[ESA_BATCH];
	unsigned	seg[ESA_BATCH];	/* GRO: datagram size in message i, 0: one */
};

/*
 * A UDP socket bound to @addr. With @want_gso (every datagram it sends
 * goes to ESA_UDP_PORT, see esa_endpoint_sock.c) it sends with UDP GSO
 * where the kernel has it, with checksums as GSO requires; otherwise
 * without checksum (SO_NO_CHECK). *@gso (may be NULL) says which. Receive
 * buffers are esa_rxq_init()'s business.
 */
int esa_udp_open(const struct sockaddr_in *addr, bool want_gso, bool *gso);
/*
 * Have the kernel report the ICMP errors of @fd's packets (IP_RECVERR; an
 * unconnected UDP socket gets none otherwise): esa_rxq_recv() takes them
 * into q->icmp instead of failing. 0 or -errno.
 */
int esa_udp_recverr(int fd);
void esa_txq_init(struct esa_txq *q, int fd, bool gso);
/* Receive buffers for @fd: 0 or -ENOMEM. esa_rxq_free() releases them. */
int esa_rxq_init(struct esa_rxq *q, int fd);
void esa_rxq_free(struct esa_rxq *q);
/* Buffer of the next packet to @to; flushes first when the queue is full. */
int esa_txq_next(struct esa_txq *q, const struct sockaddr_in *to,
		 uint8_t **buf);
/* Commit the packet esa_txq_next() handed out, @len bytes long. */
void esa_txq_commit(struct esa_txq *q, size_t len);
/*
 * Send everything queued: one sendmmsg, consecutive datagrams to one
 * address of equal size (the last may be shorter) in one GSO message.
 * 0 or -errno (ENOBUFS and unreachable are counted drops).
 */
int esa_txq_flush(struct esa_txq *q);
/*
 * Wait until a packet arrives or @timeout_ns passes (<0: forever), then
 * recvmmsg what is there. Messages received (> 0), 0 on timeout, or
 * -errno; esa_rxq_next() then hands out the datagrams one by one.
 */
int esa_rxq_recv(struct esa_rxq *q, int64_t timeout_ns);
/* The next datagram of the last receive: true and its bytes and source. */
bool esa_rxq_next(struct esa_rxq *q, const uint8_t **buf, size_t *len,
		  const struct sockaddr_in **from);

/* Monotonic clock in ns. */
uint64_t esa_now_ns(void);

/* --------------- where packets go, results come from (esa_endpoint_path.c) */

/* Whether a switch address @sw is configured (sin_family 0: none). */
bool esa_sw_set(const struct sockaddr_in *sw);
/*
 * Check a configured switch address and fill in its port: none (family
 * 0), or an IPv4 host address with port 0 or ESA_UDP_PORT. 0 or -EINVAL.
 */
int esa_sw_check(struct sockaddr_in *sw);
/* Same IPv4 address and port. */
/*
 * The switch servers of a job (esa_endpoint_shard.c): @sw is server 0,
 * @more[k - 1] server k. How many (0: no switch address), server @k,
 * the server @from is (-1: none of them).
 */
unsigned esa_sw_count(const struct sockaddr_in *sw,
		      const struct sockaddr_in *more);
const struct sockaddr_in *esa_sw_nth(const struct sockaddr_in *sw,
				     const struct sockaddr_in *more, unsigned k);
int esa_sw_find(const struct sockaddr_in *sw, const struct sockaddr_in *more,
		const struct sockaddr_in *from);
/* esa_sw_check() each server; no gaps, none twice. */
int esa_sw_list_check(struct sockaddr_in *sw, struct sockaddr_in *more);
/* A worker's global aggregator index space: agg_slots on each server. */
uint32_t esa_worker_index_space(const struct esa_endpoint_config *c);
/* Where the packet of global index @g goes, and its index on the wire. */
const struct sockaddr_in *esa_worker_dest(const struct esa_endpoint_config *c,
					  uint32_t g, uint32_t *wire_index);
/* Whether a RESULT or pull from @from with @wire_index may be the one of
 * global index @g: from its own server, with its local index. */
bool esa_shard_result_ok(const struct esa_endpoint_config *c,
			 const struct sockaddr_in *from, uint32_t g,
			 uint32_t wire_index);

bool esa_same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b);
/*
 * The one peer of a worker of the job @c configures (defaults filled
 * in): the one-armed switch if @c has one, else the PS. Data goes there;
 * results and pulls come from there.
 */
const struct sockaddr_in *esa_worker_peer(const struct esa_endpoint_config *c);
/*
 * Whether a datagram from @from may be a result or a pull of the job @c
 * configures: from esa_worker_peer()'s address and UDP port. A rule of
 * the job, not of the socket, so that an endpoint without one applies it
 * too.
 */
bool esa_result_path_ok(const struct esa_endpoint_config *c,
			const struct sockaddr_in *from);

/* ------------------------ why a worker hears nothing (esa_endpoint_diag.c) */

/* What the worker saw of its job's answers. */
struct esa_diag {
	uint64_t	replies;	/* packets of the job received, ever */
	uint64_t	bad_token;	/* ... with another token (not replies) */
	uint64_t	wait_since;	/* waiting for an answer since (0: not) */
	bool		reported;	/* this silence was reported */
};

/* Packets went out at @now with nothing owed before: a silence starts. */
void esa_diag_wait(struct esa_diag *d, uint64_t now);
/* A packet of the job (result or pull) arrived at @now. */
void esa_diag_reply(struct esa_diag *d, uint64_t now);
/* Nothing came back for @quiet_ns and this silence was not reported. */
bool esa_diag_silent(const struct esa_diag *d, uint64_t now, uint64_t quiet_ns);
/*
 * The likely cause of a silence into @why, strongest evidence first:
 * answers with another token; the PS's host (a one-armed switch's host)
 * refusing the port, no path, a PS port the switch does not take, nothing
 * ever back (the job record, the token, the other workers), results that
 * stopped. Returns what snprintf returns.
 */
size_t esa_diag_cause(const struct esa_diag *d, const struct esa_icmp_seen *icmp,
		      const struct esa_endpoint_config *c, char *why, size_t n);
/*
 * The same for packets sent to @sw, one of the servers a job is spread
 * over (esa_worker_dest()): its silence is that server's, not server 0's.
 */
size_t esa_diag_cause_sw(const struct esa_diag *d, const struct esa_icmp_seen *icmp,
			 const struct esa_endpoint_config *c,
			 const struct sockaddr_in *sw, char *why, size_t n);

/* ------------------- the endpoints on a caller's clock and network */

/*
 * Where a call's packet values come from and where its sums go: chunk
 * [off, off + n) of the worker's tensor as int32. store() gets the RESULT's
 * flags and returns true when the sum overflowed (int32: it saturated, the
 * call ends with -EOVERFLOW; float32: the chunk is redone).
 * esa_allreduce_i32/f32 use buffers; a simulator generates and checks.
 * Without load (and store), ctx is an int32 tensor: values go between it
 * and the packets directly, byte-swapped, with no copy in between (the
 * int32 sums carry their OVERFLOW flag).
 */
struct esa_values_io {
	void	(*load)(void *ctx, size_t off, unsigned n, int32_t *vals);
	bool	(*store)(void *ctx, size_t off, unsigned n, const int32_t *sum,
			 uint8_t flags);
	void	*ctx;
};

/*
 * A worker without a socket (esa_endpoint_worker.c): its packets go to
 * @tx, the caller delivers what it receives with esa_step_input() and
 * keeps the time. The same rules as esa_allreduce_i32() (window, resend
 * timeouts, pulls), in steps:
 *   esa_step_begin()  start a call of @count values (@io stays valid
 *                     until the call ends);
 *   esa_step_send()   at @now, send what is due; *@deadline = when to
 *                     call it again if nothing arrives (UINT64_MAX: only
 *                     on an arrival); -ETIMEDOUT as the call would fail;
 *   esa_step_input()  one datagram arrived at @now from @from (taken only
 *                     from where esa_result_path_ok() allows); call
 *                     esa_step_send() after it;
 *   esa_step_done()   every packet has its result;
 *   esa_step_end()    finish the call: 0, -EOVERFLOW, or -EBUSY if not done.
 */
int esa_endpoint_new(const struct esa_endpoint_config *cfg, esa_tx_fn tx,
		     void *tx_ctx, struct esa_endpoint **out);
int esa_step_begin(struct esa_endpoint *ep, size_t count,
		   const struct esa_values_io *io);
int esa_step_send(struct esa_endpoint *ep, uint64_t now, uint64_t *deadline);
void esa_step_input(struct esa_endpoint *ep, const uint8_t *buf, size_t len,
		    const struct sockaddr_in *from, uint64_t now);
bool esa_step_done(const struct esa_endpoint *ep);
int esa_step_end(struct esa_endpoint *ep);
/* The priority the next packets carry (a control plane's dynamic rule). */
void esa_endpoint_set_priority(struct esa_endpoint *ep, uint8_t priority);

/*
 * A parameter server without a socket (esa_endpoint_ps.c): answers go to
 * @tx; esa_ps_input() takes one datagram from @from and sends the answers.
 * @cfg->bind is not used. 0 or -errno, like esa_ps_poll().
 */
int esa_ps_new(const struct esa_ps_config *cfg, esa_tx_fn tx, void *tx_ctx,
	       struct esa_ps **out);
int esa_ps_input(struct esa_ps *ps, const uint8_t *buf, size_t len,
		 const struct sockaddr_in *from);

#endif /* _ESA_ENDPOINT_H */
