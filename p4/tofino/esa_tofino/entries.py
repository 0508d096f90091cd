# SPDX-License-Identifier: GPL-2.0
"""A Description turned into what the program needs installed: default
actions, table entries and multicast groups, as plain data (a Plan). The
names are the program's (p4/tofino/*.p4) as BfRt spells them."""
import math
from dataclasses import dataclass

from . import program as program_mod

ING = "pipe.EsaIngress"
EG = "pipe.EsaEgress"


@dataclass(frozen=True)
class Entry:
    table: str
    key: tuple          # ((field, value), ...)
    action: str
    data: tuple = ()    # ((param, value), ...)


@dataclass(frozen=True)
class Default:
    table: str
    action: str
    data: tuple = ()


@dataclass(frozen=True)
class Group:
    mgid: int
    nodes: tuple        # ((rid, dev_port), ...)


@dataclass(frozen=True)
class Plan:
    defaults: tuple
    entries: tuple
    groups: tuple

    def to_json(self):
        return {
            "defaults": [{"table": d.table, "action": d.action, "data": dict(d.data)}
                         for d in self.defaults],
            "entries": [{"table": e.table, "key": dict(e.key), "action": e.action,
                         "data": dict(e.data)} for e in self.entries],
            "groups": [{"mgid": g.mgid, "nodes": [list(n) for n in g.nodes]}
                       for g in self.groups],
        }


def timeout_units(us, shift):
    """agg_timeout_us in the program's time unit (2^shift ns), rounded up
    so a slot is never reclaimed early; 0 stays 0 (never)."""
    return math.ceil(us * 1000 / (1 << shift))


def _config(desc, prog):
    policy = desc.switch.policy
    hold = prog.const("ESA_HOLD") if policy == "atp" else 0
    return Default(f"{ING}.validate.esa_config", "EsaIngress.validate.set_config", (
        ("policy", prog.const(f"ESA_POLICY_{policy.upper()}")),
        ("timeout", timeout_units(desc.switch.agg_timeout_us, prog.time_shift)),
        # a resend flushes a partial: missing beyond the held-complete bit
        ("partial_floor", hold),
        ("hold", hold),
    ))


def _slice(desc, job):
    """(base, quota) the index is checked against and offset by."""
    if desc.switch.policy == "static":
        return job.agg_base, job.agg_slice
    return 0, desc.switch.agg_slots


def _job_entries(desc, job):
    base, quota = _slice(desc, job)
    full = (1 << job.fan_in) - 1
    jid = job.job_id
    out = [Entry(f"{ING}.validate.esa_job", (("hdr.esa.job_id", jid),),
                 "EsaIngress.validate.set_job",
                 (("fan_in", job.fan_in), ("full", full), ("base", base),
                  ("quota", quota), ("mgid", jid))),
           Entry(f"{ING}.validate.esa_ps_member",
                 (("hdr.esa.job_id", jid), ("hdr.ipv4.src_addr", job.ps.addr),
                  ("ig_intr_md.ingress_port", job.ps.host.port)),
                 "EsaIngress.validate.ps_member"),
           Entry(f"{ING}.esa_ps_route", (("md.route_job", jid),), "EsaIngress.route",
                 (("port", job.ps.host.port), ("ps_addr", job.ps.addr),
                  ("ps_mac", job.ps.host.mac), ("fan_in", job.fan_in), ("base", base)))]
    for i, w in enumerate(job.workers):
        out.append(Entry(f"{ING}.validate.esa_member",
                         (("hdr.esa.job_id", jid), ("hdr.esa.worker_bitmap", 1 << i),
                          ("hdr.ipv4.src_addr", w.addr), ("hdr.udp.src_port", w.udp_port),
                          ("ig_intr_md.ingress_port", w.host.port)),
                         "EsaIngress.validate.member"))
        out.append(Entry(f"{EG}.esa_mcast_member",
                         (("hdr.bridge.job", jid), ("eg_intr_md.egress_rid", i)),
                         "EsaEgress.to_worker",
                         (("addr", w.addr), ("port", w.udp_port), ("mac", w.host.mac),
                          ("worker_bit", 1 << i), ("ps_addr", job.ps.addr),
                          ("ps_mac", job.ps.host.mac))))
    return out


def _groups(desc, prog):
    rid_ps = prog.const("ESA_RID_PS")
    groups = [Group(j.job_id,
                    tuple((i, w.host.port) for i, w in enumerate(j.workers)) +
                    ((rid_ps, j.ps.host.port),))
              for j in desc.jobs]
    groups.append(Group(prog.const("ESA_FLOOD_MGID"),
                        tuple((0, p) for p in desc.flood_ports)))
    return tuple(groups)


def plan(desc, prog=None):
    """The Plan of @desc (a description.Description)."""
    prog = prog or program_mod.load()
    rid_ps = prog.const("ESA_RID_PS")
    entries = []
    for job in desc.jobs:
        entries += _job_entries(desc, job)
        entries.append(Entry(f"{EG}.esa_mcast_member",
                             (("hdr.bridge.job", job.job_id), ("eg_intr_md.egress_rid", rid_ps)),
                             "EsaEgress.to_ps",
                             (("ps_addr", job.ps.addr), ("ps_mac", job.ps.host.mac))))
    for addr in sorted(desc.hosts, key=_addr_order):
        h = desc.hosts[addr]
        entries.append(Entry(f"{ING}.esa_l2", (("hdr.ethernet.dst_addr", h.mac),),
                             "EsaIngress.l2_unicast", (("port", h.port),)))
    entries += _bound(desc)
    return Plan((_config(desc, prog),), tuple(entries), _groups(desc, prog))


def _addr_order(addr):
    return tuple(int(x) for x in addr.split("."))


def _bound(desc):
    """Each member's address bound to its port, for IPv4 sources and ARP
    senders; the binding job (counters) is the first job it belongs to."""
    binder = {}
    for job in desc.jobs:           # in job id order
        for m in (job.ps,) + job.workers:
            binder.setdefault(m.addr, job.job_id)
    out = []
    for table, field in (("esa_bound_ip", "hdr.ipv4.src_addr"), ("esa_bound_arp", "hdr.arp.spa")):
        for addr in sorted(binder, key=_addr_order):
            out.append(Entry(f"{ING}.{table}", ((field, addr),), "EsaIngress.bound",
                             (("port", desc.hosts[addr].port), ("job", binder[addr]))))
    return out
