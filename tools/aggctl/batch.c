// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl -batch FILE [-force]: one aggctl command per line, as ip -batch
 * reads them (FILE "-" is standard input). Words are split at blanks;
 * "..." or '...' keep blanks in a word; a word starting with # begins a
 * comment to the end of the line; blank lines are skipped. Each line runs
 * as `aggctl OBJECT COMMAND ...` would, with the options given before
 * -batch: this file only reads lines, the caller's function runs them.
 * The first line that fails stops the batch, named with its line number;
 * with -force every line runs, and the status is the first failure's.
 * aggctl config save writes such files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aggctl.h"

#define BATCH_MAX_ARGS	512

/*
 * Split @line in place into @argv (at most @max words). The word count,
 * or -1 after a message naming @where for an unterminated quote or too
 * many words.
 */
static int split_words(char *line, char **argv, int max, const char *where)
{
	char *in = line, *out, quote;
	int argc = 0;

	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n' || *in == '\r')
			in++;
		if (!*in || *in == '#')
			return argc;
		if (argc == max) {
			fprintf(stderr, "aggctl: %s: more than %d words\n",
				where, max);
			return -1;
		}
		argv[argc++] = out = in;
		quote = 0;
		while (*in && (quote || !strchr(" \t\n\r", *in))) {
			if (!quote && (*in == '"' || *in == '\'')) {
				quote = *in++;
			} else if (quote && *in == quote) {
				quote = 0;
				in++;
			} else {
				*out++ = *in++;
			}
		}
		if (quote) {
			fprintf(stderr, "aggctl: %s: unterminated %c quote\n",
				where, quote);
			return -1;
		}
		if (*in)
			in++;
		*out = '\0';
	}
}

static int option_in_line(const char *where, const char *opt)
{
	fprintf(stderr, "aggctl: %s: \"%s\": options go before -batch, not in its lines\n",
		where, opt);
	return EXIT_USAGE;
}

int batch_run(const char *file, bool force, batch_cmd_fn cmd, void *data)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	char *line = NULL, *argv[BATCH_MAX_ARGS], where[256];
	size_t cap = 0;
	unsigned int lineno = 0;
	int argc, ret, status = EXIT_OK;

	if (!f) {
		fprintf(stderr, "aggctl: -batch %s: %s\n", file, strerror(errno));
		return EXIT_USAGE;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u",
			 f == stdin ? "<stdin>" : file, lineno);
		argc = split_words(line, argv, BATCH_MAX_ARGS, where);
		if (argc == 0)
			continue;
		if (argc < 0)
			ret = EXIT_USAGE;
		else if (argv[0][0] == '-')
			ret = option_in_line(where, argv[0]);
		else
			ret = cmd(argc, argv, data);
		if (!ret)
			continue;
		if (status == EXIT_OK)
			status = ret;
		fprintf(stderr, "aggctl: %s: command failed (exit %d)%s\n",
			where, ret, force ? "" : "; stopping (-force goes on)");
		if (!force)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "aggctl: -batch %s: reading: %s\n", file,
			strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_FAIL;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return status;
}
