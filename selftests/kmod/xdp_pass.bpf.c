// SPDX-License-Identifier: GPL-2.0
/* A foreign XDP program: the tests put it on a port aggctl must not take. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
