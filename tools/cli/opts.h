/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Command lines of the endpoint tools (esa-job, esa-ps) from one table per
 * tool: each entry names a long option, where its value goes in the tool's
 * options struct and its range, and its line of --help. cli_parse() builds
 * getopt_long's table from it, parses every value with the one parser of
 * the tools (esa_parse.h), and answers --help and --version itself, so the
 * help, the parser and the checks cannot drift apart.
 */
#ifndef _ESA_CLI_OPTS_H
#define _ESA_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_kind {
	CLI_FLAG,	/* no value: the bool member becomes true */
	CLI_UINT,	/* decimal integer in min..max into a 1..8 byte member */
	CLI_INT,	/* signed decimal integer in (int64_t)min..max, an int */
	CLI_SIZE,	/* bytes with K/M/G, min..max, a uint64_t */
	CLI_DOUBLE,	/* decimal number in dmin..dmax, a double */
	CLI_ADDR,	/* A.B.C.D[:PORT] (port default port), a sockaddr_in */
	CLI_CALL,	/* @call parses it (choices, repeated options) */
};

struct cli_opt {
	const char	*name;		/* the long option, without "--" */
	int		short_name;	/* a one-letter alias, or 0 */
	enum cli_kind	kind;
	size_t		off;		/* the member in the options struct */
	size_t		size;		/* ... and its size */
	uint64_t	min, max;	/* CLI_UINT, CLI_SIZE; CLI_INT as int64_t */
	double		dmin, dmax;	/* CLI_DOUBLE */
	uint16_t	port;		/* CLI_ADDR: the port when none is given */
	bool		required;
	/* CLI_CALL: 0, or -EINVAL with the reason in esa_last_error() */
	int		(*call)(void *opts, const char *arg);
	const char	*arg;		/* the value's name in --help ("N") */
	const char	*help;		/* one line, defaults included */
};

#define CLI_MEMBER(type, m)	.off = offsetof(type, m), \
				.size = sizeof(((type *)0)->m)

struct cli_tool {
	const char	*name;		/* "esa-job" */
	const char	*synopsis;	/* what follows "usage: NAME " */
	const struct cli_opt *opts;
	size_t		nopts;
};

/* cli_parse()'s answer when the tool should go on. */
#define CLI_CONTINUE	(-1)

/*
 * Parse @argv into @opts (already holding the defaults). Returns
 * CLI_CONTINUE, or the exit status: 0 after --help or --version, 2 after
 * a usage error (printed, with the hint to --help). @seen gets bit i for
 * every option of table entry i given (at most 64 entries).
 */
int cli_parse(const struct cli_tool *t, int argc, char **argv, void *opts,
	      uint64_t *seen);
/* Whether the option called @name was given. */
bool cli_given(const struct cli_tool *t, uint64_t seen, const char *name);
/*
 * Environment variable @var, if set and not empty, through @call into
 * @opts: a default that the command line, parsed after, overrides.
 * CLI_CONTINUE, or 2 after a usage error naming @var.
 */
int cli_env(const struct cli_tool *t, const char *var,
	    int (*call)(void *opts, const char *arg), void *opts);
/*
 * A one-armed switch's "A.B.C.D" (":47000" allowed, no other port) into
 * @sw (esa_endpoint_config.sw, esa_ps_config.sw). 0 or -EINVAL.
 */
struct sockaddr_in;
int cli_parse_switch(const char *arg, struct sockaddr_in *sw);
/* Print "NAME: <message>" and the hint to --help; returns 2. */
int cli_usage_error(const struct cli_tool *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_usage(const struct cli_tool *t, FILE *f);
/* "NAME (ESA) VERSION" on stdout: every tool's --version. */
void cli_version(const char *name);

#endif /* _ESA_CLI_OPTS_H */
