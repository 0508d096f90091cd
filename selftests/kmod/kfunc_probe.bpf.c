// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny XDP program that calls the esa kfuncs as the data plane does,
 * driven by BPF_PROG_TEST_RUN from kfunc_probe.c: the request is read from
 * the one-entry "req" map, the kfunc's return value and outputs land in
 * "res". It exercises the real kfuncs, verifier checks included (the
 * opts__sz pairs), with no mock in between.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "esa_kfuncs.h"
#include "kfunc_probe.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_req);
} req SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_res);
} res SEC(".maps");

SEC("xdp")
int kfunc_probe(struct xdp_md *ctx)
{
	struct esa_arb_opts arb;
	struct esa_acct_opts acct;
	struct probe_req *q;
	struct probe_res *r;
	__u32 k = 0;

	q = bpf_map_lookup_elem(&req, &k);
	r = bpf_map_lookup_elem(&res, &k);
	if (!q || !r)
		return XDP_ABORTED;
	switch (q->op) {
	case PROBE_ARBITRATE:
		arb = q->arb;
		r->ret = esa_arbitrate(q->job_id, &arb, sizeof(arb));
		break;
	case PROBE_ACCOUNT:
		acct = q->acct;
		r->ret = esa_account(q->job_id, &acct, sizeof(acct));
		break;
	case PROBE_LOOKUP:
		r->ret = esa_job_lookup(q->job_id, &r->info, sizeof(r->info));
		break;
	case PROBE_CONFIG:
		r->ret = esa_config_get(&r->cfg, sizeof(r->cfg));
		break;
	case PROBE_LOOKUP_CONFIG:
		r->ret = esa_job_config_get(q->job_id, &r->info, sizeof(r->info),
					    &r->cfg, sizeof(r->cfg));
		break;
	default:
		r->ret = -1000;
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
