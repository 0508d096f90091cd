// SPDX-License-Identifier: GPL-2.0
/*
 * Option tables of the endpoint tools (opts.h): getopt_long on a table
 * built from the tool's, values through esa_parse.h, --help from the same
 * table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "esa_endpoint.h"
#include "esa_parse.h"
#include "esa_version.h"
#include "opts.h"

#define MAX_OPTS	64
/* getopt_long's value for table entry i; --help and --version follow. */
#define OPT_BASE	256
#define OPT_HELP	(OPT_BASE + MAX_OPTS)
#define OPT_VERSION	(OPT_HELP + 1)

void cli_version(const char *name)
{
	printf("%s (ESA) %s\n", name, ESA_VERSION);
}

int cli_usage_error(const struct cli_tool *t, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", t->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", t->name);
	return 2;
}

/* Where the help text starts, and the width it is wrapped to. */
#define HELP_COL	29
#define HELP_WIDTH	79

/* "  LEFT  help..." with the help wrapped at word boundaries. */
static void print_help_line(FILE *f, const char *left, const char *help)
{
	int col = fprintf(f, "  %s", left), len;
	const char *w = help, *end;

	while (*w) {
		end = strchrnul(w, ' ');
		len = (int)(end - w);
		if (col >= HELP_COL && col + 1 + len > HELP_WIDTH) {
			fputc('\n', f);
			col = 0;
		}
		col += fprintf(f, "%*s%.*s", col < HELP_COL ? HELP_COL - col : 1, "",
			       len, w);
		w = *end ? end + 1 : end;
	}
	fputc('\n', f);
}

void cli_usage(const struct cli_tool *t, FILE *f)
{
	char left[64];

	fprintf(f, "usage: %s %s\n", t->name, t->synopsis);
	for (size_t i = 0; i < t->nopts; i++) {
		const struct cli_opt *o = &t->opts[i];
		const char *a = o->arg ? o->arg : "";

		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
				 o->short_name, o->name, *a ? " " : "", a);
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 *a ? " " : "", a);
		print_help_line(f, left, o->help);
	}
	print_help_line(f, "-h, --help", "this help");
	print_help_line(f, "-V, --version", "the version of ESA this tool is from");
}

bool cli_given(const struct cli_tool *t, uint64_t seen, const char *name)
{
	for (size_t i = 0; i < t->nopts; i++)
		if (!strcmp(t->opts[i].name, name))
			return seen & (1ull << i);
	return false;
}

/* An integer into a member of 1, 2, 4 or 8 bytes. */
static void store_int(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: *(uint16_t *)p = (uint16_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

/* One option's value into @opts: 0 or -EINVAL (reason recorded). */
static int take_value(const struct cli_opt *o, void *opts, const char *arg)
{
	void *p = (char *)opts + o->off;
	uint64_t u;
	int64_t s;
	int err;

	switch (o->kind) {
	case CLI_FLAG:
		*(bool *)p = true;
		return 0;
	case CLI_UINT:
		err = esa_parse_u64(arg, o->min, o->max, &u);
		if (!err)
			store_int(p, o->size, u);
		return err;
	case CLI_INT:
		err = esa_parse_s64(arg, (int64_t)o->min, (int64_t)o->max, &s);
		if (!err)
			store_int(p, o->size, (uint64_t)s);
		return err;
	case CLI_SIZE:
		return esa_parse_size(arg, o->min, o->max, (uint64_t *)p);
	case CLI_DOUBLE:
		return esa_parse_double(arg, o->dmin, o->dmax, (double *)p);
	case CLI_ADDR:
		return esa_parse_addr(arg, o->port, (struct sockaddr_in *)p);
	case CLI_CALL:
		return o->call(opts, arg);
	}
	return -EINVAL;
}

/* getopt_long's table and short option string from the tool's table. */
static void build_getopt(const struct cli_tool *t, struct option *lo,
			 char *shorts)
{
	size_t i, n = 0;

	for (i = 0; i < t->nopts; i++) {
		const struct cli_opt *o = &t->opts[i];

		lo[i] = (struct option){ o->name, o->kind == CLI_FLAG ?
					 no_argument : required_argument,
					 NULL, OPT_BASE + (int)i };
		if (o->short_name) {
			shorts[n++] = (char)o->short_name;
			if (o->kind != CLI_FLAG)
				shorts[n++] = ':';
		}
	}
	lo[i++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lo[i++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[i] = (struct option){ 0 };
	strcpy(shorts + n, "hV");
}

/* The entry of a short option letter, or of getopt's value. */
static int entry_of(const struct cli_tool *t, int c)
{
	if (c >= OPT_BASE && c < OPT_BASE + (int)t->nopts)
		return c - OPT_BASE;
	for (size_t i = 0; i < t->nopts; i++)
		if (t->opts[i].short_name && t->opts[i].short_name == c)
			return (int)i;
	return -1;
}

/* Every required option given, or a usage error naming the missing. */
static int check_required(const struct cli_tool *t, uint64_t seen)
{
	char missing[256] = "";
	size_t i, len = 0;

	for (i = 0; i < t->nopts; i++)
		if (t->opts[i].required && !(seen & (1ull << i)))
			len += snprintf(missing + len, sizeof(missing) - len,
					"%s--%s", len ? ", " : "",
					t->opts[i].name);
	if (!len)
		return CLI_CONTINUE;
	return cli_usage_error(t, "missing %s", missing);
}

int cli_parse(const struct cli_tool *t, int argc, char **argv, void *opts,
	      uint64_t *seen)
{
	struct option lo[MAX_OPTS + 3];
	char shorts[2 * MAX_OPTS + 3];
	int c, i;

	if (t->nopts > MAX_OPTS)
		return cli_usage_error(t, "internal: more than %d options", MAX_OPTS);
	build_getopt(t, lo, shorts);
	*seen = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == OPT_HELP || c == 'h') {
			cli_usage(t, stdout);
			return 0;
		}
		if (c == OPT_VERSION || c == 'V') {
			cli_version(t->name);
			return 0;
		}
		i = entry_of(t, c);
		if (i < 0) {	/* getopt printed what was wrong */
			fprintf(stderr, "Try '%s --help'.\n", t->name);
			return 2;
		}
		if (take_value(&t->opts[i], opts, optarg))
			return cli_usage_error(t, "--%s: %s", t->opts[i].name,
					       esa_last_error());
		*seen |= 1ull << i;
	}
	if (optind < argc)
		return cli_usage_error(t, "unexpected argument '%s'", argv[optind]);
	return check_required(t, *seen);
}

int cli_env(const struct cli_tool *t, const char *var,
	    int (*call)(void *opts, const char *arg), void *opts)
{
	const char *v = getenv(var);

	if (!v || !*v)
		return CLI_CONTINUE;
	if (call(opts, v))
		return cli_usage_error(t, "%s: %s", var, esa_last_error());
	return CLI_CONTINUE;
}

int cli_parse_switch(const char *arg, struct sockaddr_in *sw)
{
	struct sockaddr_in sa;

	if (esa_parse_addr(arg, ESA_UDP_PORT, &sa) || esa_sw_check(&sa))
		return -EINVAL;
	*sw = sa;
	return 0;
}
