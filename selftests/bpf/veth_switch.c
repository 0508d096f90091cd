// SPDX-License-Identifier: GPL-2.0
/*
 * The switch side of the real-veth test: loads the module-less data plane,
 * writes the config and jobs, attaches the program natively to the given
 * ports, prints "ready", and holds everything until stdin closes; then
 * prints the switch-wide counters ("counter NAME VALUE") and detaches.
 *
 * usage: veth_switch [-p esa|atp|static] [-s slots] [-t timeout_us]
 *                    -j ID:FAN_IN:PRIO:PS_IP:W0_IP/W0_PORT,W1_IP/W1_PORT,...
 *                    [-j ...] PORT...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "esa_dp.h"

static int parse_job(char *spec, struct esa_job_info *job)
{
	char *ps, *workers, *w, *save = NULL, *port;
	unsigned int id, fan, prio, n = 0;

	memset(job, 0, sizeof(*job));
	if (sscanf(spec, "%u:%u:%u:", &id, &fan, &prio) != 3)
		return -1;
	ps = strchr(strchr(strchr(spec, ':') + 1, ':') + 1, ':');
	if (!ps)
		return -1;
	ps++;
	workers = strchr(ps, ':');
	if (!workers)
		return -1;
	*workers++ = 0;
	job->job_id = id;
	job->fan_in = fan;
	job->priority = prio;
	job->prio_mode = ESA_PRIO_FIXED;
	job->ps_port = htons(ESA_UDP_PORT);
	if (inet_pton(AF_INET, ps, &job->ps_addr) != 1)
		return -1;
	for (w = strtok_r(workers, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		port = strchr(w, '/');
		if (!port || n >= ESA_MAX_WORKERS)
			return -1;
		*port++ = 0;
		if (inet_pton(AF_INET, w, &job->worker_addr[n]) != 1)
			return -1;
		job->worker_port[n++] = htons(atoi(port));
	}
	return n == fan ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = 256 };
	struct esa_switch_opts o = { .agg_capacity = 4096 };
	struct esa_job_info jobs[8];
	int njobs = 0, i, c, err, ifindex[16], nports = 0;
	__u64 cnt[__ESA_CNT_MAX];
	struct esa_switch *sw;
	struct esa_rules_err why;
	char buf[256];

	while ((c = getopt(argc, argv, "p:s:t:j:")) != -1) {
		switch (c) {
		case 'p':
			cfg.policy = !strcmp(optarg, "atp") ? ESA_POLICY_ATP :
				     !strcmp(optarg, "static") ?
				     ESA_POLICY_STATIC : ESA_POLICY_ESA;
			break;
		case 's':
			cfg.agg_slots = atoi(optarg);
			break;
		case 't':
			cfg.agg_timeout_us = atoi(optarg);
			break;
		case 'j':
			if (njobs >= 8 || parse_job(optarg, &jobs[njobs])) {
				fprintf(stderr, "bad job spec '%s'\n", optarg);
				return 2;
			}
			if (esa_rules_check_job(&jobs[njobs], &why)) {
				fprintf(stderr, "job %s: %s\n", optarg,
					why.msg);
				return 2;
			}
			njobs++;
			break;
		default:
			return 2;
		}
	}
	for (i = optind; i < argc && nports < 16; i++) {
		ifindex[nports] = if_nametoindex(argv[i]);
		if (!ifindex[nports]) {
			fprintf(stderr, "no port %s\n", argv[i]);
			return 2;
		}
		nports++;
	}
	err = esa_switch_load(&sw, &o);
	if (err) {
		fprintf(stderr, "load: %s\n", strerror(-err));
		return 1;
	}
	err = esa_switch_set_config(sw, &cfg);
	for (i = 0; !err && i < njobs; i++)
		err = esa_switch_job_put(sw, &jobs[i]);
	for (i = 0; !err && i < nports; i++)
		err = esa_switch_attach_port(sw, ifindex[i], 0);
	if (err) {
		fprintf(stderr, "setup: %s\n", strerror(-err));
		for (i = 0; i < nports; i++)
			esa_switch_detach_port(sw, ifindex[i]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	if (!esa_switch_counters(sw, 0, cnt))
		for (i = 0; i < __ESA_CNT_MAX; i++)
			printf("counter %s %llu\n", esa_counter_name(i),
			       (unsigned long long)cnt[i]);
	for (i = 0; i < nports; i++)
		esa_switch_detach_port(sw, ifindex[i]);
	esa_switch_close(sw);
	return 0;
}
