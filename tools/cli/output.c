// SPDX-License-Identifier: GPL-2.0
/*
 * The tools' output layer: JSON or text from the same calls (output.h).
 * JSON is streamed; a small stack remembers whether a comma is due and
 * the nesting depth for -p.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "output.h"

#define MAX_DEPTH 16

static bool json, pretty;
static int depth;
static bool first[MAX_DEPTH];	/* no element yet at this depth */
static bool line_open;		/* text: something printed on this line */

void out_init(bool j, bool p)
{
	json = j;
	pretty = p;
	depth = 0;
	first[0] = true;
}

bool out_is_json(void)
{
	return json;
}

static void json_indent(void)
{
	int i;

	if (!pretty)
		return;
	putchar('\n');
	for (i = 0; i < depth; i++)
		fputs("    ", stdout);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Comma, indentation and "key": before any JSON value. */
static void json_key(const char *key)
{
	if (!first[depth])
		putchar(',');
	first[depth] = false;
	if (depth)
		json_indent();
	if (key) {
		json_str(key);
		fputs(pretty ? ": " : ":", stdout);
	}
}

static void json_open(const char *key, char c)
{
	json_key(key);
	putchar(c);
	if (depth < MAX_DEPTH - 1)
		depth++;
	first[depth] = true;
}

static void json_close(char c)
{
	bool empty = first[depth];

	if (depth)
		depth--;
	if (!empty)
		json_indent();
	putchar(c);
}

void out_open_object(const char *key)
{
	if (json)
		json_open(key, '{');
}

void out_close_object(void)
{
	if (json)
		json_close('}');
}

void out_open_array(const char *key)
{
	if (json)
		json_open(key, '[');
}

void out_close_array(void)
{
	if (json)
		json_close(']');
}

static void text_label(const char *key, const char *label)
{
	const char *l = label ? label : key;

	if (line_open)
		putchar(' ');
	if (l && *l)
		printf("%s ", l);
	line_open = true;
}

void out_str(const char *key, const char *label, const char *val)
{
	if (json) {
		json_key(key);
		json_str(val);
		return;
	}
	text_label(key, label);
	fputs(val, stdout);
}

void out_u64(const char *key, const char *label, uint64_t val)
{
	if (json) {
		json_key(key);
		printf("%llu", (unsigned long long)val);
		return;
	}
	text_label(key, label);
	printf("%llu", (unsigned long long)val);
}

void out_s64(const char *key, const char *label, int64_t val)
{
	if (json)
		json_key(key);
	else
		text_label(key, label);
	printf("%lld", (long long)val);
}

void out_double(const char *key, const char *label, int prec, double val)
{
	if (json)
		json_key(key);
	else
		text_label(key, label);
	/* JSON has no inf or nan; a report never holds them either. */
	printf(prec < 0 ? "%.*g" : "%.*f", prec < 0 ? -prec : prec, val);
}

void out_fields(const struct out_field *f, size_t n, const void *st)
{
	const char *p;
	uint64_t u;
	int v;

	for (size_t i = 0; i < n; i++) {
		p = (const char *)st + f[i].off;
		if (f[i].is_int) {
			memcpy(&v, p, sizeof(v));
			out_s64(f[i].key, NULL, v);
		} else {
			memcpy(&u, p, sizeof(u));
			out_u64(f[i].key, NULL, u);
		}
	}
}

void out_bool(const char *key, const char *label, bool val)
{
	if (json) {
		json_key(key);
		fputs(val ? "true" : "false", stdout);
		return;
	}
	text_label(key, label);
	fputs(val ? "yes" : "no", stdout);
}

void out_nl(void)
{
	if (json || !line_open)
		return;
	putchar('\n');
	line_open = false;
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (json)
		return;
	if (line_open)
		putchar(' ');
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	line_open = true;
}

void out_finish(void)
{
	if (json) {
		putchar('\n');
		first[0] = true;
	} else {
		out_nl();
	}
	fflush(stdout);
}
