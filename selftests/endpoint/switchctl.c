// SPDX-License-Identifier: GPL-2.0
/*
 * switchctl: the test harness's hand on the module-less XDP switch
 * (bpf/esa_switch.bpf.c via tools/lib/esa_maps.h), one command per call so
 * the shell tests can drive it; state lives in the pin directory.
 *
 *   switchctl DIR load [CAPACITY]
 *   switchctl DIR config esa|atp|static SLOTS AGG_TIMEOUT_US
 *   switchctl DIR job ID FANIN PRIO PS[:PORT] BASE QUOTA W0:PORT,W1:PORT,...
 *   switchctl DIR attach IFNAME...     switchctl DIR detach IFNAME...
 *   switchctl DIR counters JOB         JSON object of the job's counters
 *   switchctl DIR reset                zero every counter
 *   switchctl DIR held JOB SLOTS       aggregators among SLOTS held by JOB
 *   switchctl DIR unload               remove the pins
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "esa.h"
#include "esa_maps.h"

static int die(const char *what, int err)
{
	fprintf(stderr, "switchctl: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "switchctl: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

static int cmd_job(struct esa_switch *sw, int argc, char **argv)
{
	struct esa_job_info j = { 0 };
	struct sockaddr_in sa;
	const char *why = "";
	char *tok, *save;
	unsigned w = 0;
	int err;

	if (argc != 7) {
		fprintf(stderr, "switchctl: job ID FANIN PRIO PS BASE QUOTA WORKERS\n");
		return 2;
	}
	j.job_id = num(argv[0]);
	j.fan_in = num(argv[1]);
	j.priority = num(argv[2]);
	if (esa_parse_addr(argv[3], ESA_UDP_PORT, &sa)) {
		fprintf(stderr, "switchctl: %s\n", esa_last_error());
		return 2;
	}
	j.ps_addr = sa.sin_addr.s_addr;
	j.ps_port = sa.sin_port;
	j.agg_base = num(argv[4]);
	j.agg_quota = num(argv[5]);
	for (tok = strtok_r(argv[6], ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (w >= ESA_MAX_WORKERS || esa_parse_addr(tok, ESA_UDP_PORT, &sa)) {
			fprintf(stderr, "switchctl: bad worker '%s'\n", tok);
			return 2;
		}
		j.worker_addr[w] = sa.sin_addr.s_addr;
		j.worker_port[w] = sa.sin_port;
		w++;
	}
	if (w != j.fan_in) {
		fprintf(stderr, "switchctl: %u workers for fan-in %u\n", w, j.fan_in);
		return 2;
	}
	if (esa_job_validate(&j, &why)) {
		fprintf(stderr, "switchctl: job %u: %s\n", j.job_id, why);
		return 2;
	}
	err = esa_switch_job_put(sw, &j);
	return err ? die("job", err) : 0;
}

int main(int argc, char **argv)
{
	struct esa_switch *sw;
	const char *dir, *cmd;
	int err, rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: switchctl DIR load|config|job|attach|detach|counters|held|unload ...\n");
		return 2;
	}
	dir = argv[1];
	cmd = argv[2];
	argc -= 3;
	argv += 3;
	if (!strcmp(cmd, "load")) {
		struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_MAPS,
					     .agg_capacity = argc ? num(argv[0]) : 0 };

		err = esa_switch_load(&sw, &o);
		if (err)
			return die("load", err);
		err = esa_switch_pin(sw, dir);
		esa_switch_close(sw);
		return err ? die("pin", err) : 0;
	}
	if (!strcmp(cmd, "unload")) {
		err = esa_switch_unpin(dir);
		return err ? die("unpin", err) : 0;
	}
	err = esa_switch_open_pinned(&sw, dir);
	if (err)
		return die(dir, err);
	if (!strcmp(cmd, "config") && argc == 3) {
		struct esa_switch_config c = { .agg_slots = num(argv[1]),
					       .agg_timeout_us = num(argv[2]) };

		if (!strcmp(argv[0], "esa"))
			c.policy = ESA_POLICY_ESA;
		else if (!strcmp(argv[0], "atp"))
			c.policy = ESA_POLICY_ATP;
		else if (!strcmp(argv[0], "static"))
			c.policy = ESA_POLICY_STATIC;
		else {
			fprintf(stderr, "switchctl: unknown policy '%s'\n", argv[0]);
			rc = 2;
			goto out;
		}
		err = esa_switch_set_config(sw, &c);
		if (!err)
			err = esa_switch_agg_clear(sw, c.agg_slots);
		if (err)
			rc = die("config", err);
	} else if (!strcmp(cmd, "job")) {
		rc = cmd_job(sw, argc, argv);
	} else if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach")) {
		for (int i = 0; i < argc; i++) {
			int ifi = if_nametoindex(argv[i]);

			if (!ifi) {
				rc = die(argv[i], errno);
				break;
			}
			err = cmd[0] == 'a' ? esa_switch_attach_port(sw, ifi, 0)
					    : esa_switch_detach_port(sw, ifi);
			if (err) {
				rc = die(argv[i], err);
				break;
			}
		}
	} else if (!strcmp(cmd, "counters") && argc == 1) {
		__u64 c[__ESA_CNT_MAX];

		err = esa_switch_counters(sw, num(argv[0]), c);
		if (err) {
			rc = die("counters", err);
			goto out;
		}
		printf("{");
		for (unsigned i = 0; i < __ESA_CNT_MAX; i++)
			printf("%s\"%s\":%llu", i ? "," : "", esa_counter_name(i),
			       (unsigned long long)c[i]);
		printf("}\n");
	} else if (!strcmp(cmd, "reset") && argc == 0) {
		err = esa_switch_counters_reset(sw);
		if (err)
			rc = die("reset", err);
	} else if (!strcmp(cmd, "held") && argc == 2) {
		unsigned long job = num(argv[0]), slots = num(argv[1]), n = 0;
		struct esa_agg a;

		for (__u32 s = 0; s < slots; s++) {
			err = esa_switch_agg_read(sw, s, &a);
			if (err) {
				rc = die("aggregator", err);
				goto out;
			}
			if (a.job_id == job && a.state != ESA_AGG_FREE)
				n++;
		}
		printf("%lu\n", n);
	} else {
		fprintf(stderr, "switchctl: bad command '%s' or arguments\n", cmd);
		rc = 2;
	}
out:
	esa_switch_close(sw);
	return rc;
}
