/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal TAP output for the data plane test programs that are not fixtures. */
#ifndef _DP_TAP_H
#define _DP_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline void tap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
}

/* One result line; @ok false prints "not ok". Returns @ok. */
static inline int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed = 1;
	return ok;
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#endif /* _DP_TAP_H */
