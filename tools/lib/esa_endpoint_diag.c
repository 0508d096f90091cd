// SPDX-License-Identifier: GPL-2.0
/*
 * Why a worker hears nothing (esa_endpoint.h, "diagnosis"): from what it
 * saw (packets of its job back or not, ever or lately, the ICMP errors of
 * its socket) and what it was told (its own address and port, the PS's),
 * the likely cause, in the words of the fix. Pure: no socket, no clock of
 * its own; the worker feeds it and asks after a silence.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "esa_endpoint.h"

void esa_diag_wait(struct esa_diag *d, uint64_t now)
{
	d->wait_since = now;
	d->reported = false;
}

void esa_diag_reply(struct esa_diag *d, uint64_t now)
{
	d->replies++;
	esa_diag_wait(d, now);
}

bool esa_diag_silent(const struct esa_diag *d, uint64_t now, uint64_t quiet_ns)
{
	return !d->reported && d->wait_since && now - d->wait_since >= quiet_ns;
}

static const char *addr_port(const struct sockaddr_in *sa, char *buf, size_t n)
{
	char a[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &sa->sin_addr, a, sizeof(a));
	snprintf(buf, n, "%s:%u", a, ntohs(sa->sin_port));
	return buf;
}

/* What the switch may hold against this worker's token (or its lack). */
static const char *token_hint(const struct esa_endpoint_config *c)
{
	return c->token ? "hold another token for the job" :
			  "expect a token of the job, which this worker lacks (--token, ESA_TOKEN)";
}

/* The causes of a silence through the one-armed switch @swa. */
static size_t sw_cause(const struct esa_diag *d, const struct esa_icmp_seen *icmp,
		       const struct esa_endpoint_config *c,
		       const struct sockaddr_in *swa, char *why, size_t n)
{
	char sw[32], self[32], from[INET_ADDRSTRLEN];

	addr_port(swa, sw, sizeof(sw));
	addr_port(&c->self, self, sizeof(self));
	inet_ntop(AF_INET, &icmp->from, from, sizeof(from));
	if (icmp->port_unreachable && icmp->from.s_addr == swa->sin_addr.s_addr)
		return snprintf(why, n, "the switch %s takes no aggregation packets: its host answers 'port unreachable' (no one-armed port has that address: aggctl switch show)",
				sw);
	if (icmp->host_unreachable)
		return snprintf(why, n, "no path to the switch %s ('host unreachable' from %s): check its address and the route to it",
				sw, from);
	if (!d->replies)
		return snprintf(why, n, "nothing of job %u came back since its first packet: the switch %s may not know this worker as %s, or %s (aggctl job show id %u; aggctl stats job %u counts drop_port, drop_token and drop_unknown_job), or the other workers of the job may not run yet",
				c->job_id, sw, self, token_hint(c), c->job_id,
				c->job_id);
	return snprintf(why, n, "results of job %u stopped coming: another worker of the job stopped sending (its sums wait for it), or the switch %s or the PS went away",
			c->job_id, sw);
}

size_t esa_diag_cause(const struct esa_diag *d, const struct esa_icmp_seen *icmp,
		      const struct esa_endpoint_config *c, char *why, size_t n)
{
	return esa_diag_cause_sw(d, icmp, c, &c->sw, why, n);
}

size_t esa_diag_cause_sw(const struct esa_diag *d, const struct esa_icmp_seen *icmp,
			 const struct esa_endpoint_config *c,
			 const struct sockaddr_in *sw, char *why, size_t n)
{
	char ps[32], self[32], from[INET_ADDRSTRLEN];

	if (d->bad_token && !d->replies)
		return snprintf(why, n, "packets of job %u came back with %s: this worker's token (--token, ESA_TOKEN) is not the job's",
				c->job_id, c->token ? "another token" : "a token");
	if (esa_sw_set(&c->sw))
		return sw_cause(d, icmp, c, sw, why, n);
	addr_port(&c->ps, ps, sizeof(ps));
	addr_port(&c->self, self, sizeof(self));
	inet_ntop(AF_INET, &icmp->from, from, sizeof(from));
	if (icmp->port_unreachable && icmp->from.s_addr == c->ps.sin_addr.s_addr)
		return snprintf(why, n, "the PS %s is not running: its host answers 'port unreachable' (start esa-ps there; the workers wait for it)",
				ps);
	if (icmp->host_unreachable)
		return snprintf(why, n, "no path to the PS %s ('host unreachable' from %s): check its address, the links and the switch ports (aggctl switch show)",
				ps, from);
	if (ntohs(c->ps.sin_port) != ESA_UDP_PORT)
		return snprintf(why, n, "the PS port %u is not %u: a switch passes such packets on without aggregating them, so only a host-only PS bound to %s answers (esa-ps --host-only)",
				ntohs(c->ps.sin_port), ESA_UDP_PORT, ps);
	if (!d->replies)
		return snprintf(why, n, "nothing of job %u came back since its first packet: the switch may not know this worker as %s (a job record with another address or port, or no job %u), or %s (aggctl job show id %u; aggctl stats job %u counts drop_port, drop_token and drop_unknown_job), the other workers of the job may not run yet, or with no switch on the path no PS answers",
				c->job_id, self, c->job_id, token_hint(c),
				c->job_id, c->job_id);
	return snprintf(why, n, "results of job %u stopped coming: another worker of the job stopped sending (its sums wait for it), or the switch or the PS %s went away",
			c->job_id, ps);
}
