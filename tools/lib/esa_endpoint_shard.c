// SPDX-License-Identifier: GPL-2.0
/*
 * A job spread over several switch servers (Documentation/endpoints.rst,
 * "Over several switch servers"). The servers are the configuration's
 * sw (server 0) and sw_more[0..S-2] (servers 1..S-1); which server owns
 * an aggregator index is include/esa_shard.h's rule, its one definition.
 * With one server (or none) every function here gives today's single
 * switch: server 0, the index unchanged.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "esa_endpoint.h"
#include "esa_parse.h"
#include "esa_shard.h"

unsigned esa_sw_count(const struct sockaddr_in *sw,
		      const struct sockaddr_in *more)
{
	unsigned n;

	if (!esa_sw_set(sw))
		return 0;
	for (n = 1; n < ESA_MAX_SHARDS && esa_sw_set(&more[n - 1]); n++)
		;
	return n;
}

const struct sockaddr_in *esa_sw_nth(const struct sockaddr_in *sw,
				     const struct sockaddr_in *more,
				     unsigned k)
{
	return k ? &more[k - 1] : sw;
}

int esa_sw_find(const struct sockaddr_in *sw, const struct sockaddr_in *more,
		const struct sockaddr_in *from)
{
	unsigned n = esa_sw_count(sw, more);

	for (unsigned k = 0; from && k < n; k++)
		if (esa_same_addr(from, esa_sw_nth(sw, more, k)))
			return (int)k;
	return -1;
}

int esa_sw_list_check(struct sockaddr_in *sw, struct sockaddr_in *more)
{
	unsigned n = esa_sw_count(sw, more);
	char a[INET_ADDRSTRLEN];

	/* Server 0 even if not set: a family other than IPv4 is an error. */
	if (esa_sw_check(sw))
		return -EINVAL;
	for (unsigned k = n ? n - 1 : 0; k < ESA_MAX_SHARDS - 1; k++)
		if (more[k].sin_family)
			return esa_set_error(-EINVAL,
					     "switch address %u of the list set after an empty one: the servers are a list without gaps",
					     k + 2);
	for (unsigned k = 1; k < n; k++) {
		struct sockaddr_in *s = &more[k - 1];

		if (esa_sw_check(s))
			return -EINVAL;
		for (unsigned i = 0; i < k; i++)
			if (esa_same_addr(s, esa_sw_nth(sw, more, i)))
				return esa_set_error(-EINVAL,
						     "switch address %s listed twice",
						     inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a)));
	}
	return 0;
}

/* esa_last_error() for entry @k (1-based; 0: the list as a whole) of @list. */
static int list_error(const char *list, unsigned k, const char *entry)
{
	char why[256];

	/* One address: its own error, as before there were lists. */
	if (!strchr(list, ','))
		return -EINVAL;
	snprintf(why, sizeof(why), "%s", esa_last_error());
	if (!k)
		return esa_set_error(-EINVAL, "switch list '%s': %s", list, why);
	return esa_set_error(-EINVAL, "switch list '%s': entry %u '%s': %s",
			     list, k, entry, why);
}

int esa_parse_switches(const char *list, struct sockaddr_in *sw,
		       struct sockaddr_in *more)
{
	struct sockaddr_in got[ESA_MAX_SHARDS];
	char entry[64];
	const char *p = list, *end;
	unsigned n = 0;
	size_t len;

	memset(got, 0, sizeof(got));
	do {
		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (n == ESA_MAX_SHARDS)
			return esa_set_error(-EINVAL,
					     "switch list '%s': more than %u servers",
					     list, ESA_MAX_SHARDS);
		if (!len || len >= sizeof(entry))
			return esa_set_error(-EINVAL,
					     "switch list '%s': entry %u '%.*s' is not an address",
					     list, n + 1, (int)len, p);
		memcpy(entry, p, len);
		entry[len] = 0;
		if (esa_parse_addr(entry, ESA_UDP_PORT, &got[n]) ||
		    esa_sw_check(&got[n]))
			return list_error(list, n + 1, entry);
		n++;
		p = end + 1;
	} while (*end);
	if (esa_sw_list_check(&got[0], &got[1]))
		return list_error(list, 0, NULL);
	*sw = got[0];
	memcpy(more, &got[1], sizeof(got) - sizeof(got[0]));
	return 0;
}

static unsigned worker_shards(const struct esa_endpoint_config *c)
{
	unsigned n = esa_sw_count(&c->sw, c->sw_more);

	return n ? n : 1;
}

uint32_t esa_worker_index_space(const struct esa_endpoint_config *c)
{
	return c->agg_slots * worker_shards(c);
}

const struct sockaddr_in *esa_worker_dest(const struct esa_endpoint_config *c,
					  uint32_t g, uint32_t *wire_index)
{
	unsigned n = worker_shards(c);

	*wire_index = esa_shard_local(g, n);
	if (n == 1)
		return esa_worker_peer(c);
	return esa_sw_nth(&c->sw, c->sw_more, esa_shard_of(g, n));
}

bool esa_shard_result_ok(const struct esa_endpoint_config *c,
			 const struct sockaddr_in *from, uint32_t g,
			 uint32_t wire_index)
{
	unsigned n = worker_shards(c);

	/* One server: the path rule alone, as without sharding. */
	if (n == 1)
		return true;
	return esa_sw_find(&c->sw, c->sw_more, from) == (int)esa_shard_of(g, n) &&
	       wire_index == esa_shard_local(g, n);
}
