// SPDX-License-Identifier: GPL-2.0
/* aggctl: argument helpers and the common error paths. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "esa_parse.h"

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

/* The shared parser's reason, after the keyword it concerns. */
static int usage_parse(const char *kw)
{
	fprintf(stderr, "aggctl: %s: %s\n", kw, esa_last_error());
	return EXIT_USAGE;
}

int arg_u32(const char *kw, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out)
{
	return esa_parse_u32(s, min, max, out) ? usage_parse(kw) : EXIT_OK;
}

int arg_job_id(const char *s, uint32_t *id)
{
	return arg_u32("job id", s, 1, ESA_MAX_JOB_ID, id);
}

/* A token drawn from the kernel's random pool; never 0 (that is none). */
static int random_token(uint64_t *token)
{
	ssize_t n;

	do {
		n = getrandom(token, sizeof(*token), 0);
		if (n != (ssize_t)sizeof(*token)) {
			fprintf(stderr, "aggctl: token random: getrandom: %s\n",
				n < 0 ? strerror(errno) : "short read");
			return EXIT_FAIL;
		}
	} while (!*token);
	return EXIT_OK;
}

int arg_token(const char *s, uint64_t *token, bool *random)
{
	*random = !strcmp(s, "random");
	if (*random)
		return random_token(token);
	/* libesa's rule, the one esa-job and esa-ps read tokens by */
	if (esa_parse_token(s, token)) {
		fprintf(stderr, "aggctl: token: %s (or \"random\")\n",
			esa_last_error());
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int arg_addr_port(const char *kw, const char *s, uint32_t *addr_be,
		  uint16_t *port_be)
{
	struct sockaddr_in sa;

	if (esa_parse_addr_port(s, &sa))
		return usage_parse(kw);
	*addr_be = sa.sin_addr.s_addr;
	*port_be = sa.sin_port;
	return EXIT_OK;
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
	return c->backend == BACKEND_MODULE;
}

/* The pin directory exists but this user may not read it (not root). */
static bool dataplane_denied(struct ctx *c)
{
	pinned_switch(c);
	return c->sw_err == -EACCES || c->sw_err == -EPERM;
}

int no_dataplane(struct ctx *c, const char *what)
{
	if (dataplane_denied(c))
		fprintf(stderr, "aggctl: %s: the data plane under %s: %s (reaching it takes root, or CAP_BPF and CAP_NET_ADMIN)\n",
			what, c->pin_dir, strerror(-c->sw_err));
	else
		fprintf(stderr, "aggctl: %s: no data plane pinned under %s (aggctl switch attach dev IF)\n",
			what, c->pin_dir);
	return EXIT_FAIL;
}

int no_module(struct ctx *c, const char *what)
{
	if (dataplane_denied(c))
		return no_dataplane(c, what);
	if (c->genl_err == -ENOENT)
		fprintf(stderr, "aggctl: %s: the esa kernel module is not loaded (make kmod; insmod build/kmod/$(uname -r)/esa.ko; or attach the module-less switch: aggctl switch attach dev IF)\n",
			what);
	else
		fprintf(stderr, "aggctl: %s: generic netlink unavailable: %s\n",
			what, strerror(-c->genl_err));
	return EXIT_NOMOD;
}

int needs_module(struct ctx *c, const char *what, const char *feature)
{
	struct esa_switch *sw = pinned_switch(c);

	if (!sw)
		return no_module(c, what);
	fprintf(stderr, "aggctl: %s: %s needs the esa kernel module (insmod build/kmod/$(uname -r)/esa.ko); the module-less data plane under %s has none\n",
		what, feature, c->pin_dir);
	return EXIT_FAIL;
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
