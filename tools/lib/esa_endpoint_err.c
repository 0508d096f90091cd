// SPDX-License-Identifier: GPL-2.0
/*
 * Error reporting of libesa: calls return a negative errno and keep a
 * per-thread reason for esa_last_error(); the library itself never prints.
 * Also the address parser the tools share.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esa_endpoint.h"

static __thread char last_error[256];

const char *esa_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

int esa_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

int esa_parse_addr(const char *s, uint16_t default_port, struct sockaddr_in *sa)
{
	char host[INET_ADDRSTRLEN];
	const char *colon;
	size_t len;
	unsigned long port = default_port;

	if (!s || !*s)
		return esa_set_error(-EINVAL, "empty address");
	colon = strchr(s, ':');
	len = colon ? (size_t)(colon - s) : strlen(s);
	if (len == 0 || len >= sizeof(host))
		return esa_set_error(-EINVAL, "bad address '%s'", s);
	memcpy(host, s, len);
	host[len] = '\0';
	if (colon) {
		char *end;

		errno = 0;
		port = strtoul(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || port == 0 || port > 65535)
			return esa_set_error(-EINVAL,
					     "bad port in '%s' (1..65535)", s);
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return esa_set_error(-EINVAL, "bad IPv4 address '%s'", host);
	return 0;
}
