// SPDX-License-Identifier: GPL-2.0
/*
 * XDP program for the VM smoke test: every packet calls the esa_smoke
 * module's kfunc once and passes. The kfunc's return (the module's running
 * count) is kept in a map, so the test can compare what the program saw
 * with what the module reports over generic netlink.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern __u64 esa_smoke_count(__u32 n) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} smoke_last SEC(".maps");

SEC("xdp")
int smoke_xdp(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u64 *last = bpf_map_lookup_elem(&smoke_last, &key);
	__u64 count = esa_smoke_count(1);

	if (last)
		*last = count;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
