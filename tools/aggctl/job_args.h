/* SPDX-License-Identifier: GPL-2.0 */
/* aggctl: the arguments of job add/change/del, shared with maps.c. */
#ifndef _AGGCTL_JOB_ARGS_H
#define _AGGCTL_JOB_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include "esa_dataplane.h"

/* More than ESA_MAX_WORKERS on purpose: the kernel says what is wrong. */
#define JOB_ARGS_MAX_WORKERS	64
#define JOB_PRIO_NONE		(-1)
#define JOB_PRIO_AUTO		(-2)

struct job_args {
	uint32_t id;
	bool has_id;
	uint32_t ps_addr;		/* network order */
	uint16_t ps_port;		/* network order */
	bool has_ps;
	uint32_t ps_ifindex;		/* "dev IF" after ps; 0: first sight */
	uint32_t waddr[JOB_ARGS_MAX_WORKERS];
	uint16_t wport[JOB_ARGS_MAX_WORKERS];
	uint32_t wifindex[JOB_ARGS_MAX_WORKERS];	/* likewise */
	int nworkers;
	uint32_t fan_in;
	bool has_fan_in;
	int prio;			/* 0..255, JOB_PRIO_NONE or _AUTO */
	uint32_t quota;
	bool has_quota;
	uint64_t token;			/* "token HEX16|random"; job add only */
	bool has_token;
	bool token_random;		/* drawn here: printed once */
};

struct ctx;

/* The jobs of the switch, as records of their members (CMD_JOB_LIST). */
struct job_list {
	struct esa_job_info j[ESA_MAX_JOB_ID];
	unsigned int n;
};

int job_args_parse(int argc, char **argv, struct job_args *a, bool add);

#endif
