/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated switch is the project's data plane itself: the module-less
 * XDP program (bpf/esa_switch.bpf.c) loaded with the virtual clock, each
 * frame run through BPF_PROG_TEST_RUN, its maps the switch state. The
 * devmap egress program that splits the result multicast per port, which
 * BPF_PROG_TEST_RUN does not run, runs as the same step built as a plain
 * XDP program (bpf/esa_egress_port.bpf.c), once per port, each host behind
 * its own port (simsw_port_of()). selftests/esa-sim/sim_vs_veth.sh checks
 * the whole against the live veth switch frame by frame.
 */
#ifndef _ESA_SIM_SWITCH_H
#define _ESA_SIM_SWITCH_H

#include <stdbool.h>
#include <stdint.h>
#include "esa_dp.h"
#include "esa_egress_port.skel.h"

/* Ethernet + IPv4 + UDP + ESA header + values. */
#define SIMSW_HDRS	(14 + 20 + 8)
#define SIMSW_FRAME_MAX	(SIMSW_HDRS + ESA_HDR_LEN + 4 * ESA_MAX_VALUES)

/* Where a frame is going: its host's IPv4 address (host order). */
typedef void (*simsw_emit_fn)(void *ctx, uint32_t dst_ip,
			      const uint8_t *frame, uint32_t len);

struct simsw {
	struct esa_switch	*sw;
	int			prog_fd;
	volatile uint64_t	*clock;		/* esa_clock, mmapped */
	struct esa_egress_port_bpf *egress;	/* the egress step */
	int			egress_fd;
	int			ports_fd;	/* its esa_neigh: the port plan */
	uint32_t		policy;
	uint32_t		slots;
	struct esa_job_info	*jobs;		/* by job id: what we wrote */
	uint64_t		runs;		/* BPF_PROG_TEST_RUN calls */
	uint64_t		unexpected;	/* outputs the sim cannot place */
	uint8_t			out[SIMSW_FRAME_MAX + 256];
};

/* Load a data plane of @capacity aggregators with the virtual clock. */
int simsw_open(struct simsw *s, uint32_t capacity);
void simsw_close(struct simsw *s);
int simsw_config(struct simsw *s, uint32_t policy, uint32_t slots,
		 uint32_t timeout_us);
int simsw_job_put(struct simsw *s, const struct esa_job_info *job);
/*
 * A frame from a host with @ip and @mac: an ARP announcement, so the
 * switch learns where the host is, as it would from any host's first
 * frame (gratuitous ARP). Every host sits behind the test run's one
 * ingress device; for the egress step it sits behind its own port, which
 * the port plan records.
 */
int simsw_announce(struct simsw *s, uint32_t ip, const uint8_t mac[6]);
/*
 * Frame @in reaches the switch at @now_ns: run the program, then place
 * what it sends: unicast (XDP_TX) to the frame's destination address, the
 * result multicast (XDP_REDIRECT of a COMPLETE or RESULT) through the
 * egress step, to the host behind each port that keeps a copy. Returns
 * the XDP verdict or -errno.
 */
int simsw_packet(struct simsw *s, uint64_t now_ns, const uint8_t *in,
		 uint32_t len, simsw_emit_fn emit, void *ectx);
/* The port of the host with IPv4 address @ip (host order): one per host. */
uint32_t simsw_port_of(uint32_t ip);

/* Aggregation frame helpers (addresses host order). */
struct simsw_addr {
	uint32_t	ip;
	uint16_t	port;
	uint8_t		mac[6];
};
uint32_t simsw_frame_build(uint8_t *frame, const struct simsw_addr *src,
			   const struct simsw_addr *dst, const uint8_t *payload,
			   uint32_t plen);
/* The UDP payload and source of an aggregation frame; -1 if malformed. */
int simsw_frame_payload(const uint8_t *frame, uint32_t len,
			const uint8_t **payload, uint32_t *plen,
			uint32_t *src_ip, uint16_t *src_port);
uint32_t simsw_frame_dst(const uint8_t *frame);
/* The simulator's MAC plan: 02:e5 and the host's IPv4 address. */
void simsw_mac_of_ip(uint32_t ip, uint8_t mac[6]);

#endif /* _ESA_SIM_SWITCH_H */
