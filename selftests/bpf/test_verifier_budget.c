// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's budget of the data plane: every program of both
 * flavours (the module's only with the module loaded, for its kfuncs)
 * loads as a real switch loads it and takes at most VERIFIER_BUDGET
 * processed instructions (the verifier's "processed N insns", log level
 * BPF_LOG_STATS). Run in the test VM: Debian's 6.1 prunes less than later
 * kernels and is the one close to the limit (Documentation/dataplane.rst,
 * "Verifier notes").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "esa_switch.skel.h"
#include "esa_switch_kmod.skel.h"

/*
 * The kernel refuses a program above 1,000,000; a change that brings any
 * program within 5 % of that fails here first, while there is room to
 * restructure it (on 6.1 the module-less program took 867,494).
 */
#define VERIFIER_BUDGET	950000

/* A small aggregator array: the verifier's work does not depend on it. */
#define CAPACITY	64

#define MAX_PROGS	4	/* programs of an object */

static char logs[MAX_PROGS][4096];	/* one per program of an object */
static int failed, n;

/* The "processed N insns" of a program's stats log, or -1. */
static long processed(const char *log)
{
	const char *p = strstr(log, "processed ");

	return p ? strtol(p + 10, NULL, 10) : -1;
}

/* Each program of @obj (loaded, or not with @err) against the budget. */
static void report(const char *flavour, struct bpf_object *obj, int err)
{
	struct bpf_program *prog;
	int i = 0;

	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		long insns = processed(logs[i++]);

		n++;
		if (err || insns < 0) {
			failed++;
			printf("not ok %d - %s %s: no count (load: %s)\n", n,
			       flavour, name, strerror(err ? -err : ENOENT));
		} else if (insns > VERIFIER_BUDGET) {
			failed++;
			printf("not ok %d - %s %s: %ld processed instructions, above the budget of %d\n",
			       n, flavour, name, insns, VERIFIER_BUDGET);
		} else {
			printf("ok %d - %s %s: %ld processed instructions (budget %d)\n",
			       n, flavour, name, insns, VERIFIER_BUDGET);
		}
	}
}

/* Ask each program of @obj for the verifier's stats into logs[]. */
static int want_stats(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int i = 0, err;

	bpf_object__for_each_program(prog, obj) {
		if (i >= MAX_PROGS)
			return -E2BIG;
		logs[i][0] = 0;
		err = bpf_program__set_log_buf(prog, logs[i], sizeof(logs[i]));
		err = err ?: bpf_program__set_log_level(prog, 4); /* BPF_LOG_STATS */
		if (err)
			return err;
		i++;
	}
	return 0;
}

/* Load @obj (a flavour's skeleton, opened) and hold each program to the budget. */
static void check_flavour(const char *flavour, struct bpf_object *obj)
{
	struct bpf_map *aggs = bpf_object__find_map_by_name(obj, "esa_aggs");
	int err = aggs ? bpf_map__set_max_entries(aggs, CAPACITY) : -ENOENT;

	err = err ?: want_stats(obj);
	err = err ?: bpf_object__load(obj);
	report(flavour, obj, err);
}

static void maps_flavour(void)
{
	struct esa_switch_bpf *s = esa_switch_bpf__open();

	if (!s) {
		printf("not ok %d - module-less flavour: open: %s\n", ++n, strerror(errno));
		failed++;
		return;
	}
	check_flavour("module-less", s->obj);
	esa_switch_bpf__destroy(s);
}

static void kmod_flavour(void)
{
	struct esa_switch_kmod_bpf *s;

	if (access("/sys/module/esa", F_OK)) {
		printf("ok %d - module flavour # SKIP the esa module is not loaded\n", ++n);
		return;
	}
	s = esa_switch_kmod_bpf__open();
	if (!s) {
		printf("not ok %d - module flavour: open: %s\n", ++n, strerror(errno));
		failed++;
		return;
	}
	check_flavour("module", s->obj);
	esa_switch_kmod_bpf__destroy(s);
}

int main(void)
{
	printf("TAP version 13\n");
	libbpf_set_print(NULL);
	maps_flavour();
	kmod_flavour();
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
