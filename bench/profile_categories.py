#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Where the CPU time of an allreduce goes, from a system-wide perf profile
(bench/profile_allreduce.sh; Documentation/profile.rst).

    perf script -F comm,ip,sym -i perf.data | profile_categories.py \\
        --hz HZ --bytes N [--worker COMM] [--ps COMM] [--ranks COMM]

Each sample (a call chain, leaf first) goes to one stage:
  - a call chain through veth_poll is packet work in softirq: the switch
    port's XDP program (esa_switch), the result multicast (devmap clones,
    esa_egress, transmit), a plain redirect, the copy of a host's frame
    into XDP at the switch port (veth_xdp_rcv_skb), or a host's receive
    stack (skb, GRO, IP, UDP, socket wake-up);
  - otherwise the sample counts only if its command is one of ours (the
    endpoints run under their own names, so other users of the machine do
    not count): their send and receive system calls, ppoll, user space,
    page faults; esa-job's test data generation and checks are listed
    apart, they are not part of the allreduce.
Prints CPU milliseconds per stage and per MiB of tensor allreduced
(--bytes: tensor bytes times iterations), biggest first, and with
--wall-ms how many CPUs' worth of time the allreduce got while it ran.
"""
import argparse
import collections
import sys

MULTICAST = {"dev_map_enqueue_multi", "bq_enqueue", "bq_xmit_all",
             "xdpf_clone", "dev_map_bpf_prog_run", "__dev_flush",
             "xdp_do_flush"}
REDIRECT = {"xdp_do_redirect", "veth_xdp_xmit", "veth_ndo_xdp_xmit",
            "dev_hash_map_redirect"}
STACK = {"veth_xdp_rcv_bulk_skb", "__xdp_build_skb_from_frame",
         "build_skb_around", "napi_gro_receive", "gro_receive_skb",
         "netif_receive_skb_list_internal", "__netif_receive_skb_list_core",
         "__netif_receive_skb", "ip_list_rcv", "ip_sublist_rcv", "ip_rcv",
         "__udp4_lib_rcv", "udp_rcv", "tcp_v4_rcv", "napi_gro_flush",
         "gro_normal_list", "dev_gro_receive", "napi_complete_done",
         "gro_flush"}
TESTDATA = {"coord", "mix", "gen_i32", "gen_f32", "main"}


def napi_stage(top):
    t = set(top)
    progs = [s for s in top if s.startswith("bpf_prog_")]
    if t & MULTICAST or any("esa_egress" in s for s in progs):
        return "switch: result multicast (devmap clones, esa_egress, xmit)"
    if any("esa_switch" in s for s in progs):
        return "switch: esa_switch program"
    if t & REDIRECT:
        return "switch: redirect to a port"
    if "veth_xdp_rcv_skb" in t:
        return "switch: host frames into XDP at the port (copy)"
    if progs:
        return "hosts: XDP program on eth0"
    if t & STACK:
        return "hosts: receive stack (skb, GRO, IP/UDP, wake-up)"
    return "veth NAPI (rings, polling)"


def process_stage(who, frames):
    syms = [s for _, s in frames]
    user = [s for ip, s in frames if ip < 0xffff000000000000]
    # The test data's first touch of a fresh buffer faults in kernel
    # space: it is still the test data, not the allreduce.
    if who == "worker" and user and user[0] in TESTDATA:
        return "worker: test data and checks (not the allreduce)"
    if frames[0][0] < 0xffff000000000000:	# user space
        return f"{who}: user space (libesa)"
    t = set(syms)
    if t & {"__sys_sendmmsg", "__x64_sys_sendmmsg", "__sys_sendmsg",
            "__x64_sys_sendmsg", "__x64_sys_sendto", "tcp_sendmsg",
            "udp_sendmsg", "__x64_sys_write", "__x64_sys_writev"}:
        return f"{who}: send system calls"
    if t & {"__sys_recvmmsg", "__x64_sys_recvmmsg", "__x64_sys_recvmsg",
            "__x64_sys_recvfrom", "udp_recvmsg", "tcp_recvmsg",
            "__x64_sys_read", "__x64_sys_readv"}:
        return f"{who}: receive system calls"
    if t & {"__x64_sys_ppoll", "__x64_sys_poll", "do_sys_poll",
            "__x64_sys_epoll_wait", "do_epoll_wait", "__x64_sys_futex",
            "schedule", "__schedule"}:
        return f"{who}: poll, sleep, wake-up"
    if t & {"asm_exc_page_fault", "exc_page_fault"}:
        return f"{who}: page faults"
    return f"{who}: other kernel"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hz", type=float, required=True)
    ap.add_argument("--bytes", type=float, required=True)
    ap.add_argument("--worker", default="esa-job-prof")
    ap.add_argument("--ps", default="esa-ps-prof")
    ap.add_argument("--ranks", default="", help="comm of gloo ranks")
    ap.add_argument("--wall-ms", type=float, help="the allreduces' wall time")
    a = ap.parse_args()
    who = {a.worker: "worker", a.ps: "PS"}
    if a.ranks:
        who[a.ranks] = "gloo rank"
    cnt = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is None or not frames:
            return
        syms = [s for _, s in frames]
        if "veth_poll" in syms:
            cnt[napi_stage(syms[:syms.index("veth_poll")])] += 1
        elif comm in who:
            cnt[process_stage(who[comm], frames)] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            comm, frames = None, []
        elif not line[0].isspace():
            comm = line.split()[0]
        else:
            p = line.split(None, 1)
            try:
                frames.append((int(p[0], 16),
                               p[1].strip().split("+")[0] if len(p) > 1 else "?"))
            except ValueError:
                pass
    flush()
    mib = a.bytes / (1 << 20)
    allreduce = sum(v for k, v in cnt.items() if "not the allreduce" not in k)
    print(f"{'stage':60} {'CPU ms':>8} {'ms/MiB':>7} {'share':>6}")
    for k, v in sorted(cnt.items(), key=lambda x: -x[1]):
        ms = v * 1e3 / a.hz
        share = f"{100.0 * v / allreduce:5.1f}%" if "not the allreduce" not in k else "     -"
        print(f"{k:60} {ms:8.0f} {ms / mib:7.2f} {share:>6}")
    ms = allreduce * 1e3 / a.hz
    print(f"{'total of the allreduce':60} {ms:8.0f} {ms / mib:7.2f}")
    if a.wall_ms:
        print(f"CPUs busy with the allreduce while it ran: {ms / a.wall_ms:.2f}")


if __name__ == "__main__":
    main()
