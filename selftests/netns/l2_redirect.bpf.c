// SPDX-License-Identifier: GPL-2.0
/*
 * A two-port L2 "switch" for the host netns smoke test: a frame arriving
 * on a port is redirected, unchanged, to the port l2_peer names for it.
 * There is no bridge behind the ports, so a frame crosses only if this
 * program redirects it; one without a peer is dropped and counted.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

enum l2_stat {
	L2_REDIRECTED,	/* frames handed to the peer port */
	L2_NO_PEER,	/* frames dropped: no peer for their ingress port */
	L2_NSTATS,
};

/* ingress ifindex -> egress ifindex */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} l2_peer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, L2_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} l2_stats SEC(".maps");

static __always_inline void count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&l2_stats, &stat);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int l2_redirect(struct xdp_md *ctx)
{
	long act = bpf_redirect_map(&l2_peer, ctx->ingress_ifindex, XDP_DROP);

	count(act == XDP_REDIRECT ? L2_REDIRECTED : L2_NO_PEER);
	return act;
}

char _license[] SEC("license") = "GPL";
