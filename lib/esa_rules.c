// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of the switch (include/esa_rules.h): job and settings
 * validation and the static slice layout. Pure C: no kernel, no libc.
 */
#include "esa_rules.h"

static int esa_rules_fail(struct esa_rules_err *err, int ret, const char *msg,
			  enum esa_rules_field field, unsigned int index)
{
	if (err) {
		err->msg = msg;
		err->field = field;
		err->index = index;
	}
	return ret;
}

/*
 * A unicast IPv4 address a job member can have: not 0.0.0.0/8 ("this
 * network"), not multicast (224.0.0.0/4), not the limited broadcast. Read
 * byte by byte: the first byte in memory is the first octet, whatever the
 * host's byte order.
 */
static int esa_rules_unicast(__be32 addr)
{
	const __u8 *b = (const __u8 *)&addr;

	if (b[0] == 0 || (b[0] & 0xf0) == 0xe0)
		return 0;
	return !(b[0] == 0xff && b[1] == 0xff && b[2] == 0xff && b[3] == 0xff);
}

/* A port in network order, read byte by byte like the address above. */
static __u16 esa_rules_port(__be16 port)
{
	const __u8 *b = (const __u8 *)&port;

	return (__u16)(b[0] << 8 | b[1]);
}

static int esa_rules_check_workers(const struct esa_job_info *job,
				   struct esa_rules_err *err)
{
	unsigned int i, j;

	for (i = 0; i < job->fan_in; i++) {
		if (!esa_rules_unicast(job->worker_addr[i]))
			return esa_rules_fail(err, -EINVAL,
					      "worker address is not a unicast IPv4 address",
					      ESA_RULES_F_WORKER_ADDR, i);
		if (!job->worker_port[i])
			return esa_rules_fail(err, -EINVAL, "worker port is 0",
					      ESA_RULES_F_WORKER_PORT, i);
		for (j = 0; j < i; j++)
			if (job->worker_addr[j] == job->worker_addr[i] &&
			    job->worker_port[j] == job->worker_port[i])
				return esa_rules_fail(err, -EINVAL,
						      "duplicate worker address and port",
						      ESA_RULES_F_WORKER, i);
	}
	return 0;
}

int esa_rules_check_job(const struct esa_job_info *job,
			struct esa_rules_err *err)
{
	int ret;

	if (job->job_id < 1 || job->job_id > ESA_MAX_JOB_ID)
		return esa_rules_fail(err, -ERANGE, "job id out of 1..1023",
				      ESA_RULES_F_JOB_ID, 0);
	if (job->fan_in < 1 || job->fan_in > ESA_MAX_WORKERS)
		return esa_rules_fail(err, -ERANGE, "fan-in out of 1..32",
				      ESA_RULES_F_FAN_IN, 0);
	ret = esa_rules_check_workers(job, err);
	if (ret)
		return ret;
	if (!esa_rules_unicast(job->ps_addr))
		return esa_rules_fail(err, -EINVAL,
				      "PS address is not a unicast IPv4 address",
				      ESA_RULES_F_PS_ADDR, 0);
	if (!job->ps_port)
		return esa_rules_fail(err, -EINVAL, "PS port is 0",
				      ESA_RULES_F_PS_PORT, 0);
	if (esa_rules_port(job->ps_port) != ESA_UDP_PORT)
		return esa_rules_fail(err, -EINVAL,
				      "PS port is not 47000: the switch takes only aggregation packets to that port, a PS elsewhere is bypassed",
				      ESA_RULES_F_PS_PORT, 0);
	if (job->prio_mode != ESA_PRIO_FIXED &&
	    job->prio_mode != ESA_PRIO_DYNAMIC)
		return esa_rules_fail(err, -EINVAL, "unknown priority mode",
				      ESA_RULES_F_PRIORITY, 0);
	if (job->quota > ESA_MAX_AGGREGATORS)
		return esa_rules_fail(err, -ERANGE,
				      "quota above ESA_MAX_AGGREGATORS ("
				      ESA_RULES_STR(ESA_MAX_AGGREGATORS) ")",
				      ESA_RULES_F_QUOTA, 0);
	if ((__u64)job->agg_base + job->agg_slice > ESA_MAX_AGGREGATORS)
		return esa_rules_fail(err, -ERANGE,
				      "static slice beyond the aggregator array",
				      ESA_RULES_F_SLICE, 0);
	return 0;
}

int esa_rules_check_config(const struct esa_switch_config *cfg,
			   struct esa_rules_err *err)
{
	if (cfg->policy >= __ESA_POLICY_MAX)
		return esa_rules_fail(err, -EINVAL,
				      "unknown policy (esa, atp or static)",
				      ESA_RULES_F_POLICY, 0);
	if (cfg->agg_slots < 1 || cfg->agg_slots > ESA_MAX_AGGREGATORS)
		return esa_rules_fail(err, -ERANGE, "slots out of 1.."
				      ESA_RULES_STR(ESA_MAX_AGGREGATORS),
				      ESA_RULES_F_AGG_SLOTS, 0);
	if (cfg->agg_timeout_us > ESA_TIMEOUT_US_MAX)
		return esa_rules_fail(err, -ERANGE,
				      "timeout out of 0..60000000 us",
				      ESA_RULES_F_TIMEOUT, 0);
	return 0;
}

int esa_rules_layout(__u32 policy, __u32 agg_slots,
		     struct esa_rules_slice *s, unsigned int n, __u32 *need)
{
	__u64 fixed = 0, base = 0;
	__u32 shared = 0, share = 0, extra = 0, rest;
	unsigned int i;

	if (policy != ESA_POLICY_STATIC) {
		for (i = 0; i < n; i++)
			s[i].base = s[i].slice = 0;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (s[i].quota)
			fixed += s[i].quota;
		else
			shared++;
	}
	if (fixed + shared > agg_slots) {
		*need = fixed + shared > 0xffffffffu ? 0xffffffffu :
			(__u32)(fixed + shared);
		return -ENOSPC;
	}
	rest = agg_slots - (__u32)fixed;
	if (shared) {
		share = rest / shared;
		extra = rest % shared;
	}
	for (i = 0; i < n; i++) {
		s[i].base = (__u32)base;
		if (s[i].quota) {
			s[i].slice = s[i].quota;
		} else {
			s[i].slice = share + (extra ? 1 : 0);
			if (extra)
				extra--;
		}
		base += s[i].slice;
	}
	return 0;
}
