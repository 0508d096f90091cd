// SPDX-License-Identifier: GPL-2.0
/*
 * kfunc_probe: call one esa kfunc through a real XDP program
 * (kfunc_probe.bpf.o, run with BPF_PROG_TEST_RUN) and print the result,
 * so shell tests can play contention sequences against the module.
 *
 *   kfunc_probe arbitrate JOB OWNER INDEX   -> "preempt" | "collide" | errno
 *   kfunc_probe account JOB EVENT [AMOUNT] [COUNT]  -> "0" | errno (last call)
 *   kfunc_probe lookup JOB   -> "prio P fan_in F base B quota Q" | errno
 *   kfunc_probe config       -> "policy P slots S timeout T"
 *   kfunc_probe lookup-config JOB -> the two above on one line (an errno
 *                               in place of the job for an unknown one)
 *
 * EVENT is a counter name (rx, aggregated, ..., evictions), claim or
 * release. Errors print as "-ENOENT" etc. Exit 0 when the call ran (any
 * return value), 1 when the program could not be loaded or run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "esa_dp.h"		/* esa_counter_name() */
#include "kfunc_probe.h"

static int parse_event(const char *s, __u32 *ev)
{
	unsigned int i;

	if (!strcmp(s, "claim")) {
		*ev = ESA_ACCT_CLAIM;
		return 0;
	}
	if (!strcmp(s, "release")) {
		*ev = ESA_ACCT_RELEASE;
		return 0;
	}
	for (i = 0; i < __ESA_CNT_MAX; i++) {
		if (!strcmp(s, esa_counter_name(i))) {
			*ev = i;
			return 0;
		}
	}
	*ev = strtoul(s, NULL, 0);	/* raw numbers test unknown events */
	return 0;
}

/* A kfunc's return value, then @end. */
static void print_ret_in(int ret, const char *end)
{
	switch (ret) {
	case -ENOENT:
		printf("-ENOENT%s", end);
		break;
	case -EINVAL:
		printf("-EINVAL%s", end);
		break;
	default:
		printf("%d%s", ret, end);
	}
}

static void print_ret(int ret)
{
	print_ret_in(ret, "\n");
}

/* What the tests check of a job record (its token if any), then @end. */
static void print_job(const struct esa_job_info *info, const char *end)
{
	printf("prio %u fan_in %u base %u quota %u", info->priority,
	       info->fan_in, info->agg_base, info->agg_slice);
	if (info->token)
		printf(" token %016llx", (unsigned long long)info->token);
	fputs(end, stdout);
}

static void print_config(const struct esa_switch_config *cfg)
{
	printf("policy %u slots %u timeout %u\n", cfg->policy,
	       cfg->agg_slots, cfg->agg_timeout_us);
}

static int usage(void)
{
	fputs("usage: kfunc_probe { arbitrate JOB OWNER INDEX | account JOB EVENT [AMOUNT] [COUNT] |\n"
	      "                     lookup JOB | config | lookup-config JOB }\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	char path[4096], *slash;
	struct probe_req q = {};
	struct probe_res r;
	struct bpf_object *obj;
	struct bpf_program *prog;
	unsigned char pkt[64] = {};
	unsigned long count = 1, i;
	__u32 k = 0;
	int fd_req, fd_res, err;
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt,
		    .data_size_in = sizeof(pkt), .repeat = 1);

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "arbitrate") && argc == 5) {
		q.op = PROBE_ARBITRATE;
		q.job_id = strtoul(argv[2], NULL, 0);
		q.arb.owner_job_id = strtoul(argv[3], NULL, 0);
		q.arb.agg_index = strtoul(argv[4], NULL, 0);
	} else if (!strcmp(argv[1], "account") && argc >= 4 && argc <= 6) {
		q.op = PROBE_ACCOUNT;
		q.job_id = strtoul(argv[2], NULL, 0);
		parse_event(argv[3], &q.acct.event);
		if (argc > 4)
			q.acct.amount = strtoul(argv[4], NULL, 0);
		if (argc > 5)
			count = strtoul(argv[5], NULL, 0);
	} else if (!strcmp(argv[1], "lookup") && argc == 3) {
		q.op = PROBE_LOOKUP;
		q.job_id = strtoul(argv[2], NULL, 0);
	} else if (!strcmp(argv[1], "config") && argc == 2) {
		q.op = PROBE_CONFIG;
	} else if (!strcmp(argv[1], "lookup-config") && argc == 3) {
		q.op = PROBE_LOOKUP_CONFIG;
		q.job_id = strtoul(argv[2], NULL, 0);
	} else {
		return usage();
	}

	/* The object sits next to this binary. */
	snprintf(path, sizeof(path), "%s", argv[0]);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path,
		 sizeof(path) - (slash ? slash + 1 - path : 0),
		 "kfunc_probe.bpf.o");
	libbpf_set_print(NULL);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "kfunc_probe: cannot load %s: %s (is the esa module loaded?)\n",
			path, strerror(errno));
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "kfunc_probe");
	fd_req = bpf_object__find_map_fd_by_name(obj, "req");
	fd_res = bpf_object__find_map_fd_by_name(obj, "res");
	if (!prog || fd_req < 0 || fd_res < 0 ||
	    bpf_map_update_elem(fd_req, &k, &q, 0)) {
		fprintf(stderr, "kfunc_probe: bad object %s\n", path);
		return 1;
	}
	for (i = 0; i < count; i++) {
		err = bpf_prog_test_run_opts(bpf_program__fd(prog), &topts);
		if (err || topts.retval != XDP_PASS) {
			fprintf(stderr, "kfunc_probe: test run failed: %s (retval %u)\n",
				strerror(errno), topts.retval);
			return 1;
		}
	}
	if (bpf_map_lookup_elem(fd_res, &k, &r)) {
		fprintf(stderr, "kfunc_probe: reading the result failed\n");
		return 1;
	}
	switch (q.op) {
	case PROBE_ARBITRATE:
		if (r.ret == ESA_ARB_PREEMPT)
			puts("preempt");
		else if (r.ret == ESA_ARB_COLLIDE)
			puts("collide");
		else
			print_ret(r.ret);
		break;
	case PROBE_LOOKUP:
		if (r.ret) {
			print_ret(r.ret);
			break;
		}
		print_job(&r.info, "\n");
		break;
	case PROBE_CONFIG:
		print_config(&r.cfg);
		break;
	case PROBE_LOOKUP_CONFIG:
		if (r.ret)
			print_ret_in(r.ret, " ");
		else
			print_job(&r.info, " ");
		print_config(&r.cfg);
		break;
	default:
		print_ret(r.ret);
	}
	bpf_object__close(obj);
	return 0;
}
