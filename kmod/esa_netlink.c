// SPDX-License-Identifier: GPL-2.0
/*
 * The "esa" generic netlink family (uapi/esa_genl.h,
 * Documentation/netlink/specs/esa.yaml).
 *
 * Every operation has its own strict policy (resv_start_op 0: nothing is
 * validated leniently), changes need CAP_NET_ADMIN, and every rejection
 * says why in the extack and points at the attribute (or reports the
 * missing one). Handlers take esa_lock, so each request sees and leaves a
 * consistent table: checks come first, then one esa_commit() that either
 * publishes everything or nothing.
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "esa_kmod.h"

static struct genl_family esa_family;

static const struct nla_policy esa_worker_policy[ESA_A_WORKER_MAX + 1] = {
	[ESA_A_WORKER_ADDR]	= { .type = NLA_BE32 },
	[ESA_A_WORKER_PORT]	= { .type = NLA_BE16 },
	[ESA_A_WORKER_IFINDEX]	= { .type = NLA_U32 },
};

static const struct nla_policy esa_workers_policy[ESA_A_WORKERS_MAX + 1] = {
	[ESA_A_WORKERS_WORKER]	= NLA_POLICY_NESTED(esa_worker_policy),
};

/* Ranges beyond s16 need the full-range form on 6.1. */
static struct netlink_range_validation esa_quota_range = {
	.min = 0, .max = ESA_MAX_AGGREGATORS,
};
static struct netlink_range_validation esa_slots_range = {
	.min = 1, .max = ESA_MAX_AGGREGATORS,
};
static struct netlink_range_validation esa_timeout_range = {
	.min = ESA_TIMEOUT_US_MIN, .max = ESA_TIMEOUT_US_MAX,
};
static struct netlink_range_validation esa_aging_range = {
	.min = ESA_AGING_MS_MIN, .max = ESA_AGING_MS_MAX,
};

#define ESA_JOB_ATTRS_POLICY						\
	[ESA_A_JOB_FAN_IN]	= NLA_POLICY_RANGE(NLA_U8, 1, ESA_MAX_WORKERS), \
	[ESA_A_JOB_PRIORITY]	= { .type = NLA_U8 },			\
	[ESA_A_JOB_PRIO_AUTO]	= { .type = NLA_FLAG },			\
	[ESA_A_JOB_QUOTA]	= NLA_POLICY_FULL_RANGE(NLA_U32, &esa_quota_range), \
	[ESA_A_JOB_PS_ADDR]	= { .type = NLA_BE32 },			\
	[ESA_A_JOB_PS_PORT]	= { .type = NLA_BE16 },			\
	[ESA_A_JOB_PS_IFINDEX]	= { .type = NLA_U32 },			\
	[ESA_A_JOB_WORKERS]	= NLA_POLICY_NESTED(esa_workers_policy)

#define ESA_JOB_ID_POLICY \
	[ESA_A_JOB_ID] = NLA_POLICY_RANGE(NLA_U32, 1, ESA_MAX_JOB_ID)

static const struct nla_policy esa_job_set_policy[ESA_A_MAX + 1] = {
	ESA_JOB_ID_POLICY,
	ESA_JOB_ATTRS_POLICY,
};

static const struct nla_policy esa_job_id_policy[ESA_A_MAX + 1] = {
	ESA_JOB_ID_POLICY,
};

/* job add: the job attributes and its token (0 is none: refused) */
static const struct nla_policy esa_job_add_policy[ESA_A_MAX + 1] = {
	ESA_JOB_ID_POLICY,
	ESA_JOB_ATTRS_POLICY,
	[ESA_A_JOB_TOKEN]	= NLA_POLICY_MIN(NLA_U64, 1),
};

static const struct nla_policy esa_none_policy[ESA_A_MAX + 1] = {
};

static const struct nla_policy esa_config_set_policy[ESA_A_MAX + 1] = {
	[ESA_A_CFG_AGG_SLOTS]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&esa_slots_range),
	[ESA_A_CFG_AGG_TIMEOUT_US] = NLA_POLICY_FULL_RANGE(NLA_U32,
							   &esa_timeout_range),
	[ESA_A_CFG_AGING_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&esa_aging_range),
	[ESA_A_CFG_DP_GENERATION] = { .type = NLA_U32 },
};

static const struct nla_policy esa_policy_set_policy[ESA_A_MAX + 1] = {
	[ESA_A_POLICY]		= NLA_POLICY_MAX(NLA_U32, __ESA_POLICY_MAX - 1),
};

/* ---- message builders ------------------------------------------------ */

/* What @job holds in the current data plane's array (as reported). */
static u32 esa_job_occ_now(const struct esa_job *job)
{
	return esa_job_occupancy(job, esa_config_locked()->dp_generation);
}

static int esa_put_workers(struct sk_buff *skb, const struct esa_job *job)
{
	struct nlattr *ws, *w;
	unsigned int i;

	ws = nla_nest_start(skb, ESA_A_JOB_WORKERS);
	if (!ws)
		return -EMSGSIZE;
	for (i = 0; i < job->info.fan_in; i++) {
		w = nla_nest_start(skb, ESA_A_WORKERS_WORKER);
		if (!w ||
		    nla_put_be32(skb, ESA_A_WORKER_ADDR,
				 job->info.worker_addr[i]) ||
		    nla_put_be16(skb, ESA_A_WORKER_PORT,
				 job->info.worker_port[i]) ||
		    nla_put_u32(skb, ESA_A_WORKER_IFINDEX,
				job->info.worker_ifindex[i]))
			return -EMSGSIZE;
		nla_nest_end(skb, w);
	}
	nla_nest_end(skb, ws);
	return 0;
}

static int esa_put_job(struct sk_buff *skb, const struct esa_job *job)
{
	const struct esa_job_info *ji = &job->info;

	if (nla_put_u32(skb, ESA_A_JOB_ID, ji->job_id) ||
	    nla_put_u8(skb, ESA_A_JOB_FAN_IN, ji->fan_in) ||
	    nla_put_u8(skb, ESA_A_JOB_PRIO_MODE, ji->prio_mode) ||
	    (ji->prio_mode == ESA_PRIO_FIXED &&
	     nla_put_u8(skb, ESA_A_JOB_PRIORITY, ji->priority)) ||
	    nla_put_u8(skb, ESA_A_JOB_EFF_PRIORITY, esa_job_eff_prio(job)) ||
	    nla_put_u32(skb, ESA_A_JOB_QUOTA, ji->quota) ||
	    nla_put_be32(skb, ESA_A_JOB_PS_ADDR, ji->ps_addr) ||
	    nla_put_be16(skb, ESA_A_JOB_PS_PORT, ji->ps_port) ||
	    nla_put_u32(skb, ESA_A_JOB_PS_IFINDEX, ji->ps_ifindex) ||
	    nla_put_u8(skb, ESA_A_JOB_HAS_TOKEN, !!ji->token) ||
	    esa_put_workers(skb, job) ||
	    nla_put_u8(skb, ESA_A_JOB_STATE, esa_job_state(job)) ||
	    nla_put_u32(skb, ESA_A_JOB_AGG_BASE, ji->agg_base) ||
	    nla_put_u32(skb, ESA_A_JOB_AGG_SLICE, ji->agg_slice) ||
	    nla_put_u32(skb, ESA_A_JOB_OCCUPANCY,
			esa_job_occ_now(job)) ||
	    nla_put_u64_64bit(skb, ESA_A_JOB_ATTAINED, esa_job_attained(job),
			      ESA_A_PAD))
		return -EMSGSIZE;
	return 0;
}

static int esa_put_stats(struct sk_buff *skb,
			 struct esa_counters __percpu *pcpu)
{
	struct esa_counters sum;
	struct nlattr *nest;
	unsigned int i;

	esa_counters_sum(pcpu, &sum);
	nest = nla_nest_start(skb, ESA_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < __ESA_CNT_MAX; i++)
		if (nla_put_u64_64bit(skb, ESA_A_STATS_COUNTER(i), sum.cnt[i],
				      ESA_A_PAD))
			return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, ESA_A_STATS_BYTES, sum.bytes, ESA_A_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int esa_put_config(struct sk_buff *skb, const struct esa_config *c)
{
	if (nla_put_u32(skb, ESA_A_POLICY, c->sw.policy) ||
	    nla_put_u32(skb, ESA_A_CFG_AGG_SLOTS, c->sw.agg_slots) ||
	    nla_put_u32(skb, ESA_A_CFG_AGG_TIMEOUT_US, c->sw.agg_timeout_us) ||
	    nla_put_u32(skb, ESA_A_CFG_AGING_MS, c->aging_ms) ||
	    nla_put_u32(skb, ESA_A_CFG_DP_GENERATION, c->dp_generation))
		return -EMSGSIZE;
	return 0;
}

static int esa_put_occupancy(struct sk_buff *skb, const struct esa_job *job)
{
	if (nla_put_u32(skb, ESA_A_JOB_ID, job->info.job_id) ||
	    nla_put_u32(skb, ESA_A_JOB_OCCUPANCY,
			esa_job_occ_now(job)) ||
	    nla_put_u32(skb, ESA_A_JOB_QUOTA, job->info.quota) ||
	    nla_put_u32(skb, ESA_A_JOB_AGG_BASE, job->info.agg_base) ||
	    nla_put_u32(skb, ESA_A_JOB_AGG_SLICE, job->info.agg_slice))
		return -EMSGSIZE;
	return 0;
}

/*
 * The job's token, for job-token-get only: job records, replies and
 * events alike, say whether there is one, never what it is.
 */
static int esa_put_token(struct sk_buff *skb, const struct esa_job *job)
{
	if (nla_put_u32(skb, ESA_A_JOB_ID, job->info.job_id) ||
	    (job->info.token &&
	     nla_put_u64_64bit(skb, ESA_A_JOB_TOKEN, job->info.token,
			       ESA_A_PAD)))
		return -EMSGSIZE;
	return 0;
}

enum esa_put_what { ESA_PUT_JOB, ESA_PUT_STATS, ESA_PUT_OCC, ESA_PUT_TOKEN };

static int esa_put_one(struct sk_buff *skb, enum esa_put_what what,
		       const struct esa_job *job)
{
	switch (what) {
	case ESA_PUT_JOB:
		return esa_put_job(skb, job);
	case ESA_PUT_STATS:
		if (nla_put_u32(skb, ESA_A_JOB_ID, job->info.job_id))
			return -EMSGSIZE;
		return esa_put_stats(skb, job->acct->pcpu);
	case ESA_PUT_OCC:
		return esa_put_occupancy(skb, job);
	case ESA_PUT_TOKEN:
		return esa_put_token(skb, job);
	}
	return -EINVAL;
}

/* ---- replies --------------------------------------------------------- */

/* A reply to @info, its header in *@hdr; NULL when out of memory. */
static struct sk_buff *esa_reply_new(struct genl_info *info, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put_reply(msg, info, &esa_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Send the reply @msg, or drop it if filling it failed (@err). */
static int esa_reply_send(struct genl_info *info, struct sk_buff *msg,
			  void *hdr, int err)
{
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* A reply to @info holding @what of @job. */
static int esa_reply_job(struct genl_info *info, enum esa_put_what what,
			 const struct esa_job *job)
{
	struct sk_buff *msg;
	void *hdr;

	msg = esa_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	return esa_reply_send(info, msg, hdr, esa_put_one(msg, what, job));
}

/* ---- notifications --------------------------------------------------- */

static struct sk_buff *esa_ntf_new(u8 cmd, void **hdr)
{
	struct sk_buff *skb;

	if (!genl_has_listeners(&esa_family, &init_net, 0))
		return NULL;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &esa_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void esa_ntf_send(struct sk_buff *skb, void *hdr, int err)
{
	if (err) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&esa_family, skb, 0, 0, GFP_KERNEL);
}

void esa_notify_job(u8 cmd, const struct esa_job *job)
{
	struct sk_buff *skb;
	void *hdr;

	skb = esa_ntf_new(cmd, &hdr);
	if (!skb)
		return;
	if (cmd == ESA_CMD_JOB_REMOVED_NTF)
		esa_ntf_send(skb, hdr, nla_put_u32(skb, ESA_A_JOB_ID,
						   job->info.job_id));
	else
		esa_ntf_send(skb, hdr, esa_put_job(skb, job));
}

void esa_notify_count(u8 cmd, u32 id, u32 count)
{
	struct sk_buff *skb;
	void *hdr;

	skb = esa_ntf_new(cmd, &hdr);
	if (!skb)
		return;
	esa_ntf_send(skb, hdr, nla_put_u32(skb, ESA_A_JOB_ID, id) ||
			       nla_put_u32(skb, ESA_A_EVENT_COUNT, count));
}

void esa_notify_policy(void)
{
	struct sk_buff *skb;
	void *hdr;

	skb = esa_ntf_new(ESA_CMD_POLICY_NTF, &hdr);
	if (!skb)
		return;
	esa_ntf_send(skb, hdr, esa_put_config(skb, esa_config_locked()));
}

/* ---- job add / change ------------------------------------------------- */

/* The worker nests of a request, to point a rule's refusal at its input. */
struct esa_job_req {
	struct nlattr *worker[ESA_MAX_WORKERS];
};

/*
 * Parse ESA_A_JOB_WORKERS into @ji (fan_in = the count). Only the shape is
 * checked here; what the addresses and ports may be is the rules'.
 */
static int esa_parse_workers(struct genl_info *info, struct esa_job_info *ji,
			     struct esa_job_req *req)
{
	struct nlattr *tb[ESA_A_WORKER_MAX + 1];
	struct nlattr *ws = info->attrs[ESA_A_JOB_WORKERS], *w;
	struct netlink_ext_ack *extack = info->extack;
	unsigned int n = 0, i;
	int rem, err;

	nla_for_each_nested(w, ws, rem) {
		/* Only ESA_A_WORKERS_WORKER passed the policy. */
		if (n == ESA_MAX_WORKERS) {
			NL_SET_ERR_MSG_ATTR(extack, w,
					    "more workers than ESA_MAX_WORKERS (32)");
			return -E2BIG;
		}
		err = nla_parse_nested(tb, ESA_A_WORKER_MAX, w,
				       esa_worker_policy, extack);
		if (err)
			return err;
		if (!tb[ESA_A_WORKER_ADDR]) {
			NL_SET_ERR_MSG_ATTR(extack, w, "worker has no address");
			NL_SET_ERR_ATTR_MISS(extack, w, ESA_A_WORKER_ADDR);
			return -EINVAL;
		}
		if (!tb[ESA_A_WORKER_PORT]) {
			NL_SET_ERR_MSG_ATTR(extack, w, "worker has no port");
			NL_SET_ERR_ATTR_MISS(extack, w, ESA_A_WORKER_PORT);
			return -EINVAL;
		}
		ji->worker_addr[n] = nla_get_be32(tb[ESA_A_WORKER_ADDR]);
		ji->worker_port[n] = nla_get_be16(tb[ESA_A_WORKER_PORT]);
		ji->worker_ifindex[n] = tb[ESA_A_WORKER_IFINDEX] ?
					nla_get_u32(tb[ESA_A_WORKER_IFINDEX]) : 0;
		req->worker[n++] = w;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(extack, ws, "job has no workers");
		NL_SET_ERR_ATTR_MISS(extack, ws, ESA_A_WORKERS_WORKER);
		return -EINVAL;
	}
	for (i = n; i < ESA_MAX_WORKERS; i++) {
		ji->worker_addr[i] = 0;
		ji->worker_port[i] = 0;
		ji->worker_ifindex[i] = 0;
	}
	ji->fan_in = n;
	return 0;
}

/* The attribute of the request a rule's refusal is about (may be NULL). */
static struct nlattr *esa_rules_attr(struct genl_info *info,
				     const struct esa_job_req *req,
				     const struct esa_rules_err *e)
{
	struct nlattr **a = info->attrs;
	struct nlattr *w = e->index < ESA_MAX_WORKERS ?
			   req->worker[e->index] : NULL;

	switch (e->field) {
	case ESA_RULES_F_JOB_ID:
		return a[ESA_A_JOB_ID];
	case ESA_RULES_F_FAN_IN:
		return a[ESA_A_JOB_FAN_IN] ?: a[ESA_A_JOB_WORKERS];
	case ESA_RULES_F_PRIORITY:
		return a[ESA_A_JOB_PRIORITY] ?: a[ESA_A_JOB_PRIO_AUTO];
	case ESA_RULES_F_QUOTA:
		return a[ESA_A_JOB_QUOTA];
	case ESA_RULES_F_PS_ADDR:
		return a[ESA_A_JOB_PS_ADDR];
	case ESA_RULES_F_PS_PORT:
		return a[ESA_A_JOB_PS_PORT];
	case ESA_RULES_F_WORKER:
		return w;
	case ESA_RULES_F_WORKER_ADDR:
		return w ? nla_find_nested(w, ESA_A_WORKER_ADDR) : NULL;
	case ESA_RULES_F_WORKER_PORT:
		return w ? nla_find_nested(w, ESA_A_WORKER_PORT) : NULL;
	default:
		return NULL;
	}
}

/*
 * Check the record @ji a request produced with the shared rules. Their
 * messages are string literals of lib/esa_rules.c, so they can go into
 * the extack as NL_SET_ERR_MSG_ATTR() would put one of ours.
 */
static int esa_check_job(struct genl_info *info, const struct esa_job_req *req,
			 const struct esa_job_info *ji)
{
	struct netlink_ext_ack *extack = info->extack;
	struct esa_rules_err e;
	int err;

	err = esa_rules_check_job(ji, &e);
	if (err && extack) {
		extack->_msg = e.msg;
		extack->bad_attr = esa_rules_attr(info, req, &e);
	}
	return err;
}

/*
 * Apply the job attributes of @info to @job (a private copy): everything
 * that add and change share. Rejections name their attribute.
 */
static int esa_apply_job_attrs(struct genl_info *info, struct esa_job *job)
{
	struct netlink_ext_ack *extack = info->extack;
	struct esa_job_info *ji = &job->info;
	struct nlattr **a = info->attrs;
	struct esa_job_req req = {};
	int err;

	if (a[ESA_A_JOB_PRIORITY] && a[ESA_A_JOB_PRIO_AUTO]) {
		NL_SET_ERR_MSG_ATTR(extack, a[ESA_A_JOB_PRIO_AUTO],
				    "a fixed priority and auto priority exclude each other");
		return -EINVAL;
	}
	if (a[ESA_A_JOB_FAN_IN] && !a[ESA_A_JOB_WORKERS]) {
		NL_SET_ERR_MSG_ATTR(extack, a[ESA_A_JOB_FAN_IN],
				    "fan-in needs the workers list");
		NL_SET_ERR_ATTR_MISS(extack, NULL, ESA_A_JOB_WORKERS);
		return -EINVAL;
	}
	if (a[ESA_A_JOB_WORKERS]) {
		err = esa_parse_workers(info, ji, &req);
		if (err)
			return err;
		if (a[ESA_A_JOB_FAN_IN] &&
		    nla_get_u8(a[ESA_A_JOB_FAN_IN]) != ji->fan_in) {
			NL_SET_ERR_MSG_ATTR(extack, a[ESA_A_JOB_FAN_IN],
					    "fan-in differs from the number of workers");
			return -EINVAL;
		}
	}
	if (a[ESA_A_JOB_PS_ADDR])
		ji->ps_addr = nla_get_be32(a[ESA_A_JOB_PS_ADDR]);
	if (a[ESA_A_JOB_PS_PORT])
		ji->ps_port = nla_get_be16(a[ESA_A_JOB_PS_PORT]);
	/* a new PS address without a port: bound at first sight */
	if (a[ESA_A_JOB_PS_IFINDEX] || a[ESA_A_JOB_PS_ADDR])
		ji->ps_ifindex = a[ESA_A_JOB_PS_IFINDEX] ?
				 nla_get_u32(a[ESA_A_JOB_PS_IFINDEX]) : 0;
	if (a[ESA_A_JOB_PRIORITY]) {
		ji->prio_mode = ESA_PRIO_FIXED;
		ji->priority = nla_get_u8(a[ESA_A_JOB_PRIORITY]);
	}
	if (a[ESA_A_JOB_PRIO_AUTO]) {
		ji->prio_mode = ESA_PRIO_DYNAMIC;
		ji->priority = 0;
	}
	if (a[ESA_A_JOB_QUOTA])
		ji->quota = nla_get_u32(a[ESA_A_JOB_QUOTA]);
	return esa_check_job(info, &req, ji);
}

/* The job a request names (ESA_A_JOB_ID); NULL: "no such job". esa_lock. */
static struct esa_job *esa_job_of_req(struct genl_info *info)
{
	struct nlattr *id = info->attrs[ESA_A_JOB_ID];
	struct esa_job *job = esa_job_get_locked(nla_get_u32(id));

	if (!job)
		NL_SET_ERR_MSG_ATTR(info->extack, id, "no such job");
	return job;
}

/* esa_commit() for a request: turn -ENOSPC into a message. */
static int esa_commit_req(struct genl_info *info, const struct esa_config *cfg,
			  struct esa_job *cand, u32 skip_id,
			  struct nlattr *blame)
{
	u32 need = 0;
	int err;

	err = esa_commit(cfg, cand, skip_id, &need);
	if (err == -ENOSPC) {
		NL_SET_ERR_MSG_ATTR(info->extack, blame,
				    ESA_RULES_LAYOUT_NOSPC_MSG);
	}
	return err;
}

/*
 * Commit @job, new (its own acct) or a changed copy (sharing the
 * published one's), and tell the listeners; on error @job is freed.
 */
static int esa_job_commit(struct genl_info *info, struct esa_job *job,
			  bool new)
{
	struct nlattr **a = info->attrs;
	int err;

	err = esa_commit_req(info, NULL, job, 0,
			     a[ESA_A_JOB_QUOTA] ?: a[ESA_A_JOB_ID]);
	if (err) {
		if (new)
			esa_job_free(job);
		else
			kfree(job);	/* the acct is the published job's */
		return err;
	}
	esa_notify_job(new ? ESA_CMD_JOB_ADDED_NTF : ESA_CMD_JOB_CHANGED_NTF,
		       job);
	return 0;
}

static int esa_job_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct esa_job tmpl = {}, *job;
	u32 id;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_ID) ||
	    GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_PS_ADDR) ||
	    GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_PS_PORT) ||
	    GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_WORKERS)) {
		GENL_SET_ERR_MSG(info, "job add needs id, PS address and port, and workers");
		return -EINVAL;
	}
	id = nla_get_u32(a[ESA_A_JOB_ID]);
	tmpl.info.job_id = id;
	tmpl.info.prio_mode = ESA_PRIO_DYNAMIC;
	if (a[ESA_A_JOB_TOKEN])
		tmpl.info.token = nla_get_u64(a[ESA_A_JOB_TOKEN]);
	err = esa_apply_job_attrs(info, &tmpl);
	if (err)
		return err;

	mutex_lock(&esa_lock);
	if (esa_job_get_locked(id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ESA_A_JOB_ID],
				    "job already exists");
		err = -EEXIST;
		goto out;
	}
	job = esa_job_alloc(&tmpl, true);
	if (job)
		job->info.incarnation = esa_job_new_incarnation();
	err = job ? esa_job_commit(info, job, true) : -ENOMEM;
out:
	mutex_unlock(&esa_lock);
	return err;
}

static int esa_job_change_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const int changeable[] = {
		ESA_A_JOB_FAN_IN, ESA_A_JOB_PRIORITY, ESA_A_JOB_PRIO_AUTO,
		ESA_A_JOB_QUOTA, ESA_A_JOB_PS_ADDR, ESA_A_JOB_PS_PORT,
		ESA_A_JOB_PS_IFINDEX, ESA_A_JOB_WORKERS,
	};
	struct nlattr **a = info->attrs;
	struct esa_job *old, *job;
	bool any = false;
	unsigned int i;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_ID)) {
		GENL_SET_ERR_MSG(info, "job change needs the job id");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(changeable); i++)
		any |= !!a[changeable[i]];
	if (!any) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[ESA_A_JOB_ID],
				    "nothing to change for this job");
		return -EINVAL;
	}

	mutex_lock(&esa_lock);
	old = esa_job_of_req(info);
	if (!old) {
		err = -ENOENT;
		goto out;
	}
	job = esa_job_alloc(old, false);
	if (!job) {
		err = -ENOMEM;
		goto out;
	}
	err = esa_apply_job_attrs(info, job);
	if (err)
		kfree(job);	/* the acct is old's */
	else
		err = esa_job_commit(info, job, false);
out:
	mutex_unlock(&esa_lock);
	return err;
}

static int esa_job_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct esa_job *job;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_ID)) {
		GENL_SET_ERR_MSG(info, "job delete needs the job id");
		return -EINVAL;
	}
	mutex_lock(&esa_lock);
	job = esa_job_of_req(info);
	if (!job) {
		err = -ENOENT;
		goto out;
	}
	/* The others' slices grow into the freed space (static). */
	err = esa_commit_req(info, NULL, NULL, job->info.job_id,
			     a[ESA_A_JOB_ID]);
	if (err)
		goto out;
	esa_notify_job(ESA_CMD_JOB_REMOVED_NTF, job);
	esa_job_unpublish(job->info.job_id);
out:
	mutex_unlock(&esa_lock);
	return err;
}

/* ---- gets and dumps ---------------------------------------------------- */

static int esa_job_do_get(struct genl_info *info, enum esa_put_what what)
{
	struct esa_job *job;
	int err;

	mutex_lock(&esa_lock);
	job = esa_job_of_req(info);
	err = job ? esa_reply_job(info, what, job) : -ENOENT;
	mutex_unlock(&esa_lock);
	return err;
}

/*
 * A job's token, for a copy of the switch's configuration (aggctl config
 * save): asked for by name, never part of a job record.
 */
static int esa_job_token_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_ID)) {
		GENL_SET_ERR_MSG(info, "job token get needs the job id");
		return -EINVAL;
	}
	return esa_job_do_get(info, ESA_PUT_TOKEN);
}

static int esa_job_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, ESA_A_JOB_ID)) {
		GENL_SET_ERR_MSG(info, "job get needs the job id (or a dump)");
		return -EINVAL;
	}
	return esa_job_do_get(info, ESA_PUT_JOB);
}

/* One message per job, resuming at cb->args[0]. */
static int esa_dump(struct sk_buff *skb, struct netlink_callback *cb,
		    enum esa_put_what what)
{
	struct esa_job *job;
	void *hdr;
	u32 id;
	int err = 0;

	mutex_lock(&esa_lock);
	for (id = max_t(u32, cb->args[0], 1); id <= ESA_MAX_JOB_ID; id++) {
		job = esa_job_get_locked(id);
		if (!job)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &esa_family, NLM_F_MULTI,
				  genl_dumpit_info(cb)->op.cmd);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		err = esa_put_one(skb, what, job);
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	mutex_unlock(&esa_lock);
	cb->args[0] = id;
	/* A full skb ends this round; the next continues at the same id. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static int esa_job_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return esa_dump(skb, cb, ESA_PUT_JOB);
}

static int esa_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	if (info->attrs[ESA_A_JOB_ID])
		return esa_job_do_get(info, ESA_PUT_STATS);
	msg = esa_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	return esa_reply_send(info, msg, hdr,
			      esa_put_stats(msg, esa_global_counters));
}

static int esa_stats_get_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	return esa_dump(skb, cb, ESA_PUT_STATS);
}

/* The occupancy of every job together, against agg_slots. */
static int esa_put_occ_total(struct sk_buff *skb)
{
	u32 id, total = 0, gen = esa_config_locked()->dp_generation;
	struct esa_job *job;

	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		job = esa_job_get_locked(id);
		if (job)
			total += esa_job_occupancy(job, gen);
	}
	if (nla_put_u32(skb, ESA_A_OCC_TOTAL, total) ||
	    nla_put_u32(skb, ESA_A_CFG_AGG_SLOTS,
			esa_config_locked()->sw.agg_slots))
		return -EMSGSIZE;
	return 0;
}

static int esa_occ_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (info->attrs[ESA_A_JOB_ID])
		return esa_job_do_get(info, ESA_PUT_OCC);
	msg = esa_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&esa_lock);
	err = esa_reply_send(info, msg, hdr, esa_put_occ_total(msg));
	mutex_unlock(&esa_lock);
	return err;
}

static int esa_occ_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return esa_dump(skb, cb, ESA_PUT_OCC);
}

/* ---- config and policy ------------------------------------------------- */

static int esa_reply_config(struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = esa_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&esa_lock);
	err = esa_reply_send(info, msg, hdr,
			     esa_put_config(msg, esa_config_locked()));
	mutex_unlock(&esa_lock);
	return err;
}

static int esa_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return esa_reply_config(info);
}

static int esa_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct esa_config c;
	int err;

	if (!a[ESA_A_CFG_AGG_SLOTS] && !a[ESA_A_CFG_AGG_TIMEOUT_US] &&
	    !a[ESA_A_CFG_AGING_MS] && !a[ESA_A_CFG_DP_GENERATION]) {
		GENL_SET_ERR_MSG(info, "nothing to set: give agg-slots, agg-timeout-us, aging-ms or dp-generation");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, ESA_A_CFG_AGG_SLOTS);
		return -EINVAL;
	}
	mutex_lock(&esa_lock);
	c = *esa_config_locked();
	if (a[ESA_A_CFG_AGG_SLOTS])
		c.sw.agg_slots = nla_get_u32(a[ESA_A_CFG_AGG_SLOTS]);
	if (a[ESA_A_CFG_AGG_TIMEOUT_US])
		c.sw.agg_timeout_us = nla_get_u32(a[ESA_A_CFG_AGG_TIMEOUT_US]);
	if (a[ESA_A_CFG_AGING_MS])
		c.aging_ms = nla_get_u32(a[ESA_A_CFG_AGING_MS]);
	if (a[ESA_A_CFG_DP_GENERATION])
		c.dp_generation = nla_get_u32(a[ESA_A_CFG_DP_GENERATION]);
	err = esa_commit_req(info, &c, NULL, 0, a[ESA_A_CFG_AGG_SLOTS]);
	if (!err)
		esa_notify_policy();
	mutex_unlock(&esa_lock);
	return err;
}

static int esa_policy_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return esa_reply_config(info);
}

static int esa_policy_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *p = info->attrs[ESA_A_POLICY];
	struct esa_config c;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, ESA_A_POLICY)) {
		GENL_SET_ERR_MSG(info, "policy set needs the policy");
		return -EINVAL;
	}
	mutex_lock(&esa_lock);
	c = *esa_config_locked();
	c.sw.policy = nla_get_u32(p);
	err = esa_commit_req(info, &c, NULL, 0, p);
	if (!err)
		esa_notify_policy();
	mutex_unlock(&esa_lock);
	return err;
}

static const struct genl_ops esa_ops[] = {
	{
		.cmd	= ESA_CMD_JOB_ADD,
		.doit	= esa_job_add_doit,
		.policy	= esa_job_add_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= ESA_CMD_JOB_CHANGE,
		.doit	= esa_job_change_doit,
		.policy	= esa_job_set_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= ESA_CMD_JOB_DEL,
		.doit	= esa_job_del_doit,
		.policy	= esa_job_id_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		/* a job's members: addresses, UDP ports, switch ports */
		.cmd	= ESA_CMD_JOB_GET,
		.doit	= esa_job_get_doit,
		.dumpit	= esa_job_get_dumpit,
		.policy	= esa_job_id_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= ESA_CMD_CONFIG_SET,
		.doit	= esa_config_set_doit,
		.policy	= esa_config_set_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= ESA_CMD_CONFIG_GET,
		.doit	= esa_config_get_doit,
		.policy	= esa_none_policy,
		.maxattr = ESA_A_MAX,
	},
	{
		.cmd	= ESA_CMD_POLICY_SET,
		.doit	= esa_policy_set_doit,
		.policy	= esa_policy_set_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= ESA_CMD_POLICY_GET,
		.doit	= esa_policy_get_doit,
		.policy	= esa_none_policy,
		.maxattr = ESA_A_MAX,
	},
	{
		.cmd	= ESA_CMD_STATS_GET,
		.doit	= esa_stats_get_doit,
		.dumpit	= esa_stats_get_dumpit,
		.policy	= esa_job_id_policy,
		.maxattr = ESA_A_MAX,
	},
	{
		.cmd	= ESA_CMD_OCCUPANCY_GET,
		.doit	= esa_occ_get_doit,
		.dumpit	= esa_occ_get_dumpit,
		.policy	= esa_job_id_policy,
		.maxattr = ESA_A_MAX,
	},
	{
		/* the job's secret: only the administrator reads it */
		.cmd	= ESA_CMD_JOB_TOKEN_GET,
		.doit	= esa_job_token_get_doit,
		.policy	= esa_job_id_policy,
		.maxattr = ESA_A_MAX,
		.flags	= GENL_ADMIN_PERM,
	},
};

/* The events carry job records, members included: CAP_NET_ADMIN to join. */
static const struct genl_multicast_group esa_mcgrps[] = {
	{ .name = ESA_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static struct genl_family esa_family __ro_after_init = {
	.name		= ESA_GENL_NAME,
	.version	= ESA_GENL_VERSION,
	.maxattr	= ESA_A_MAX,
	.module		= THIS_MODULE,
	.ops		= esa_ops,
	.n_ops		= ARRAY_SIZE(esa_ops),
	.mcgrps		= esa_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(esa_mcgrps),
	/* 0: every command validates strictly, reserved fields included. */
	.resv_start_op	= 0,
};

int esa_netlink_init(void)
{
	return genl_register_family(&esa_family);
}

void esa_netlink_exit(void)
{
	genl_unregister_family(&esa_family);
}
