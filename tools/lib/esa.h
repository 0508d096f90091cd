/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * libesa: the host side of ESA in-network aggregation. This is the one public
 * header a training job (or a parameter server) links against; everything
 * else in tools/lib is internal. Documentation/endpoints.rst describes the
 * behaviour; Documentation/wire-protocol.rst is the contract it follows.
 *
 * Error convention: every call that can fail returns a negative errno and
 * leaves a human-readable reason in esa_last_error() (per thread). Nothing
 * is printed by the library.
 */
#ifndef _ESA_H
#define _ESA_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <netinet/in.h>

#include "esa_switch.h"	/* esa_wire.h, ESA_MAX_AGGREGATORS */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The functions of this header are the whole interface of libesa.so: the
 * library is built with hidden visibility and exports only what is marked
 * ESA_API here.
 */
#define ESA_API __attribute__((visibility("default")))

/* Reason for the last failure of an esa_* call in this thread. */
ESA_API const char *esa_last_error(void);

/*
 * Parse "A.B.C.D" or "A.B.C.D:PORT" into @sa; @default_port (host order) is
 * used when no port is given (0: the configs then use ESA_UDP_PORT). A
 * port given is decimal, 1..65535 ("047000" is 47000; "0x10" is refused).
 * 0 or -EINVAL with the reason in esa_last_error(). The tools' one address
 * parser (tools/lib/esa_parse.c, with the number parsers of esa_parse.h).
 */
ESA_API int esa_parse_addr(const char *s, uint16_t default_port,
			   struct sockaddr_in *sa);

/*
 * Parse a job token (Documentation/security.rst): exactly 16 hexadecimal
 * digits, not all zero (0 means "no token"). 0 or -EINVAL with the reason
 * in esa_last_error().
 */
ESA_API int esa_parse_token(const char *s, uint64_t *token);

/* Float32 fixed point: value = round(x * 2^scale_log2). */
#define ESA_F32_SCALE_LOG2_DEFAULT	16
/* Each overflow redo lowers the scale by this many bits ... */
#define ESA_F32_SCALE_STEP		8
/* ... down to this (every finite float fits); a chunk still overflowing
 * holds a non-finite value and the call fails with -ERANGE. */
#define ESA_F32_SCALE_LOG2_MIN		(-120)

/* ---------------------------------------------------------------- worker */

struct esa_endpoint_config {
	uint16_t	job_id;		/* 1..ESA_MAX_JOB_ID */
	uint8_t		worker_id;	/* 0..fan_in-1: the bit in worker_bitmap */
	uint8_t		fan_in;		/* 1..ESA_MAX_WORKERS */
	uint8_t		priority;	/* 0..ESA_MAX_PRIORITY, carried in every packet */
	struct sockaddr_in ps;		/* parameter server; port 0 = ESA_UDP_PORT */
	struct sockaddr_in self;	/* own address to bind; port 0 = ESA_UDP_PORT */
	/*
	 * Aggregator indices. agg_slots is the index space the job was told:
	 * the switch's agg_slots under esa/atp, the job's agg_slice under
	 * static. The job's packet number n (its seq counted on past the
	 * 32-bit wrap: n mod 2^32 = seq) uses index
	 *   (agg_offset + n % agg_span) % agg_slots.
	 * agg_span 0 = min(window, agg_slots). With window <= agg_span two
	 * outstanding packets of the job never share an aggregator, across
	 * the wrap too.
	 */
	uint32_t	agg_slots;
	uint32_t	agg_offset;
	uint32_t	agg_span;
	uint32_t	window;		/* outstanding packets; 0 = 128 */
	uint32_t	values_per_packet; /* 1..ESA_MAX_VALUES; 0 = ESA_MAX_VALUES */
	uint32_t	timeout_us;	/* first resend after; 0 = 10000 */
	/* resends of one packet with no result for any packet meanwhile,
	 * before -ETIMEDOUT; 0 = 100 */
	uint32_t	max_resends;
	int		scale_log2;	/* float32 fixed point; see ESA_F32_* */
	bool		scale_log2_set;	/* false = ESA_F32_SCALE_LOG2_DEFAULT */
	/*
	 * A one-armed switch's address (Documentation/endpoints.rst, "Through
	 * a one-armed switch"); sin_family 0 = none, the switch (if any) sits
	 * on the path to the PS. Port 0 = ESA_UDP_PORT, the only one allowed.
	 * Set: data goes there, results and pulls are taken only from there.
	 */
	struct sockaddr_in sw;
	/*
	 * The job's token (Documentation/security.rst); 0 = none. Set: every
	 * packet carries it (wire version 2, at most ESA_MAX_VALUES_TOKEN
	 * values), every packet taken must carry it.
	 */
	uint64_t	token;
};

struct esa_endpoint_stats {
	uint64_t	allreduces;	/* calls that completed */
	uint64_t	packets_sent;	/* data packets, resends included */
	uint64_t	bytes_sent;	/* UDP payload bytes */
	uint64_t	resends;	/* packets sent again with ESA_F_RESEND */
	uint64_t	timeouts;	/* calls failed with -ETIMEDOUT */
	uint64_t	results;	/* RESULT packets taken */
	uint64_t	duplicate_results; /* RESULTs for a packet already done */
	uint64_t	pulls;		/* resend requests from the PS taken */
	uint64_t	ignored;	/* malformed, other job, wrong size, not
					 * RESULT, not from the PS's address and
					 * port (esa_endpoint_path.c) */
	uint64_t	overflow_results; /* RESULTs flagged or detected as overflowed */
	uint64_t	f32_redo_packets; /* float packets redone at a smaller scale */
	int		f32_min_scale_log2; /* smallest scale used by the last f32 call */
	uint64_t	tx_drops;	/* sends refused by the kernel (ENOBUFS) */
	uint64_t	send_batches;	/* sendmmsg calls */
	uint64_t	recv_batches;	/* recvmmsg calls that returned packets */
	uint64_t	bad_token;	/* packets of the job with another token,
					 * or none where one is due (or one
					 * where none is): ignored */
};

struct esa_endpoint;

/* Validate @cfg, bind the socket. 0 and *out, or -errno. */
ESA_API int esa_endpoint_open(const struct esa_endpoint_config *cfg,
			      struct esa_endpoint **out);

/*
 * Sum @count values over the job's workers in place. Every worker of the
 * job must make the same sequence of calls with the same counts.
 * int32: sums saturate at INT32_MIN/INT32_MAX; if any did, the buffer holds
 * the saturated sums and the call returns -EOVERFLOW.
 * float32: fixed point (see Documentation/endpoints.rst). A value that is
 * not finite makes its packet overflow at every scale: every worker's call
 * then fails alike with -ERANGE, the buffer holding the sums of the other
 * packets and the inputs of those.
 * -ETIMEDOUT when a packet was resent max_resends times while no packet
 * of the call got its result.
 */
ESA_API int esa_allreduce_i32(struct esa_endpoint *ep, int32_t *buf,
			      size_t count);
ESA_API int esa_allreduce_f32(struct esa_endpoint *ep, float *buf,
			      size_t count);

ESA_API void esa_endpoint_get_stats(const struct esa_endpoint *ep,
				    struct esa_endpoint_stats *st);
/* The effective configuration (defaults filled in). */
ESA_API void esa_endpoint_get_config(const struct esa_endpoint *ep,
				     struct esa_endpoint_config *cfg);
ESA_API void esa_endpoint_close(struct esa_endpoint *ep);

/*
 * A worker that hears nothing back (no result, no pull) for @quiet_ms
 * while packets wait for their results calls @fn once per such silence,
 * with the likely cause and what to do ("the PS ... is not running", "the
 * switch may not know this worker as ..."), then goes on trying until its
 * max_resends rule gives up; the -ETIMEDOUT reason names the cause too.
 * @fn NULL: no live report (the default).
 */
typedef void (*esa_quiet_fn)(void *arg, const char *why);
ESA_API void esa_endpoint_on_quiet(struct esa_endpoint *ep, unsigned quiet_ms,
				   esa_quiet_fn fn, void *arg);

/*
 * End the call in progress on @ep with -ECANCELED, the reason naming the
 * cause of the silence as esa_endpoint_on_quiet() would: from the @fn of
 * esa_endpoint_on_quiet() (it then returns at once), or from another
 * thread (it returns at its next resend or report, within a few seconds).
 * A call starting later is not affected. Packets already sent may still be
 * summed: the workers of the job then stand at different sequence numbers
 * (some got their results, some did not) and must agree on the next one
 * before any of them calls again (esa_endpoint_set_next_seq()).
 */
ESA_API void esa_endpoint_cancel(struct esa_endpoint *ep);
/* The sequence number the next call's first packet will carry. */
ESA_API uint32_t esa_endpoint_next_seq(const struct esa_endpoint *ep);
/*
 * Start the next call at @seq. Every worker of the job must make the same
 * calls with the same sequences: after a cancelled call, set on every
 * worker one beyond all that any of them used (the largest
 * esa_endpoint_next_seq() of the job's workers).
 */
ESA_API void esa_endpoint_set_next_seq(struct esa_endpoint *ep, uint32_t seq);

/* ------------------------------------------------------ parameter server */

enum esa_ps_mode {
	/* Results go once, to worker 0, through the switch that multicasts. */
	ESA_PS_SWITCH		= 0,
	/* No aggregating switch: the PS unicasts each result to every worker. */
	ESA_PS_HOST_ONLY	= 1,
};

struct esa_ps_config {
	struct sockaddr_in bind;	/* port 0 = ESA_UDP_PORT */
	enum esa_ps_mode mode;
	/*
	 * Send RESULT for sums the switch completed (COMPLETE). Required under
	 * atp (it releases the aggregator); under esa/static the switch has
	 * already multicast the result, so false saves the second copy.
	 */
	bool		result_on_complete;
	uint32_t	cache_entries;	/* per job, >= 2 * window; 0 = 4096 */
	/*
	 * A one-armed switch's address (ESA_PS_SWITCH only); sin_family 0 =
	 * none. Port 0 = ESA_UDP_PORT, the only one allowed. Set: packets
	 * are taken only from there, RESULTs and pulls go there (the switch
	 * copies them to the workers).
	 */
	struct sockaddr_in sw;
};

struct esa_ps_job_config {
	uint16_t	job_id;
	uint8_t		fan_in;
	/* Worker i's address; bit i of worker_known says it is set. Unknown
	 * workers are learned from the source of their own data packets. */
	uint32_t	worker_known;
	struct sockaddr_in worker[ESA_MAX_WORKERS];
	/* The job's token, as its workers' (esa_endpoint_config); 0 = none. */
	uint64_t	token;
};

struct esa_ps_stats {
	uint64_t	rx_packets;	/* aggregation packets of this job */
	uint64_t	rx_complete;
	uint64_t	rx_partial;
	uint64_t	rx_preempted;
	uint64_t	rx_collision;
	uint64_t	rx_resend;
	uint64_t	rx_data;	/* single-worker packets, no switch flag */
	uint64_t	merged;		/* pieces added to a sum */
	uint64_t	duplicates;	/* pieces whose workers were all counted */
	uint64_t	overlaps;	/* pieces partly counted, ignored */
	uint64_t	finished;	/* sequences whose sum became final */
	uint64_t	finished_by_ps;	/* ... of which the PS completed */
	uint64_t	result_packets;	/* RESULT packets sent (unicast: per worker) */
	uint64_t	resend_answers;	/* RESENDs of finished sequences answered */
	uint64_t	pulls;		/* resend requests sent (unicast: per worker) */
	uint64_t	overflows;	/* finished sums with a saturated value */
	uint64_t	stale;		/* older than the result cache holds */
	uint64_t	conflicts;	/* cache entry busy with another sequence */
	uint64_t	bad;		/* size or bitmap inconsistent with the job */
	uint64_t	no_address;	/* result not sent: worker address unknown */
	/*
	 * 1 + the highest sequence any packet of the job carried (0: none).
	 * Sums the switch completed and multicast reach the PS as COMPLETE;
	 * when such a packet is lost on the way the workers still have their
	 * result, so finished can stay below the sequences the job used.
	 */
	uint64_t	seq_high;
	uint64_t	bad_token;	/* packets with another token (or none
					 * where one is due): ignored */
};

struct esa_ps_global_stats {
	uint64_t	rx_packets;	/* datagrams received */
	uint64_t	malformed;	/* failed the wire checks */
	uint64_t	unknown_job;
	uint64_t	unexpected;	/* RESULT packets sent to the PS */
	uint64_t	tx_drops;
	uint64_t	not_switch;	/* with a switch address: datagrams
					 * from elsewhere, ignored */
};

struct esa_ps;

ESA_API int esa_ps_open(const struct esa_ps_config *cfg, struct esa_ps **out);
ESA_API int esa_ps_add_job(struct esa_ps *ps,
			   const struct esa_ps_job_config *job);
/*
 * Wait up to @timeout_ms for packets, process what is there, send the
 * answers. Returns the number of packets processed (0 on timeout), -EINTR if
 * a signal arrived, or another -errno.
 */
ESA_API int esa_ps_poll(struct esa_ps *ps, int timeout_ms);
ESA_API int esa_ps_get_job_stats(const struct esa_ps *ps, uint16_t job_id,
				 struct esa_ps_stats *st);
ESA_API void esa_ps_get_stats(const struct esa_ps *ps,
			      struct esa_ps_global_stats *st);
ESA_API void esa_ps_close(struct esa_ps *ps);

#ifdef __cplusplus
}
#endif
#endif /* _ESA_H */
