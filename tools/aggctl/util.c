// SPDX-License-Identifier: GPL-2.0
/* aggctl: argument helpers and the common error paths. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggctl.h"
#include "esa_maps.h"

int usage_missing(const char *kw)
{
	fprintf(stderr, "aggctl: \"%s\" needs a value\n", kw);
	return EXIT_USAGE;
}

int usage_bad(const char *what, const char *val)
{
	fprintf(stderr, "aggctl: invalid %s \"%s\"\n", what, val);
	return EXIT_USAGE;
}

int usage_unknown(const char *obj, const char *kw)
{
	fprintf(stderr, "aggctl: %s: unknown argument \"%s\"; try \"aggctl %s help\"\n",
		obj, kw, obj);
	return EXIT_USAGE;
}

/* iproute2's rule: @arg is a non-empty prefix of @kw. */
bool matches(const char *arg, const char *kw)
{
	size_t n = strlen(arg);

	return n && n <= strlen(kw) && !strncmp(arg, kw, n);
}

int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int parse_addr_port(const char *s, uint32_t *addr_be, uint16_t *port_be)
{
	char buf[64], *colon;
	struct in_addr a;
	uint32_t port;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	colon = strrchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	if (parse_u32(colon + 1, 65535, &port))
		return -EINVAL;
	*addr_be = a.s_addr;
	*port_be = htons((uint16_t)port);
	return 0;
}

const char *fmt_addr_port(uint32_t addr_be, uint16_t port_be)
{
	static char buf[4][32];
	static int i;
	struct in_addr a = { .s_addr = addr_be };
	char *b = buf[i++ & 3];

	snprintf(b, sizeof(buf[0]), "%s:%u", inet_ntoa(a), ntohs(port_be));
	return b;
}

bool have_module(struct ctx *c)
{
	return c->genl_err == 0;
}

int no_module(struct ctx *c, const char *what)
{
	if (c->genl_err == -ENOENT)
		fprintf(stderr, "aggctl: %s: the esa kernel module is not loaded (insmod kmod/esa.ko; or attach the module-less switch: aggctl switch attach dev IF)\n",
			what);
	else
		fprintf(stderr, "aggctl: %s: generic netlink unavailable: %s\n",
			what, strerror(-c->genl_err));
	return EXIT_NOMOD;
}

struct esa_switch *pinned_switch(struct ctx *c)
{
	if (!c->sw && !c->sw_err)
		c->sw_err = esa_switch_open_pinned(&c->sw, c->pin_dir);
	return c->sw;
}

int fail(struct ctx *c, const char *what, int err)
{
	genl_perror(&c->g, what, err);
	return EXIT_FAIL;
}
