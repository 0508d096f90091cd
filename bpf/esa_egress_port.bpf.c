// SPDX-License-Identifier: GPL-2.0
/*
 * The egress step of the switch (esa_egress_port() in esa_switch.bpf.c,
 * compiled from that very source) as a plain XDP program that
 * BPF_PROG_TEST_RUN can run: the kernel refuses to test-run a devmap
 * program (-EINVAL for expected attach type BPF_XDP_DEVMAP, checked on 6.1
 * and 6.18) and a plain XDP program may neither read egress_ifindex nor be
 * given one in ctx_in. The port the copy leaves by comes from egress_port
 * instead, written before each run. The simulator (tools/esa-sim) splits
 * the result multicast with it, selftests/bpf/test_egress checks it port
 * by port. The switch's own programs are not loaded from this object;
 * its maps are those of a loaded switch (bpf_map__reuse_fd).
 */
#include "esa_switch.bpf.c"

__u32 egress_port;

SEC("xdp")
int esa_egress_at_port(struct xdp_md *ctx)
{
	return esa_egress_port(ctx, egress_port);
}
