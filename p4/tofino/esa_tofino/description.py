# SPDX-License-Identifier: GPL-2.0
"""The switch as the control plane is told it: the job list of `aggctl -j
job show`, the settings of `aggctl -j switch show`, and the port map (which
Tofino port and MAC address each host has; a Tofino does not learn them).
Everything is checked here; a description the program cannot run is
refused with DescriptionError naming the job, member or field and why."""
import ipaddress
import json
import re
from dataclasses import dataclass, field

from . import uapi

DEV_PORT_MAX = 511          # PortId_t is 9 bits
PIPE_SHIFT = 7              # Tofino 1: dev_port[8:7] is the pipe
TIMEOUT_MAX_US = 60000000   # aggctl's range (switch set timeout)


class DescriptionError(ValueError):
    """A description the program cannot run; str() says why."""


@dataclass(frozen=True)
class Host:
    addr: str
    port: int               # Tofino dev_port
    mac: str

    @property
    def pipe(self):
        return self.port >> PIPE_SHIFT


@dataclass(frozen=True)
class Member:
    addr: str
    udp_port: int
    host: Host


@dataclass(frozen=True)
class Job:
    job_id: int
    fan_in: int
    quota: int
    agg_base: int
    agg_slice: int
    ps: Member
    workers: tuple


@dataclass(frozen=True)
class Switch:
    policy: str
    agg_slots: int
    agg_timeout_us: int


@dataclass(frozen=True)
class Description:
    switch: Switch
    jobs: tuple
    hosts: dict = field(default_factory=dict)   # addr -> Host
    flood_ports: tuple = ()


def _int(obj, key, where, lo, hi):
    if key not in obj:
        raise DescriptionError(f"{where}: no \"{key}\"")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise DescriptionError(f"{where}: \"{key}\" must be an integer, not {v!r}")
    if not lo <= v <= hi:
        raise DescriptionError(f"{where}: \"{key}\" {v} is outside {lo}..{hi}")
    return v


def _ipv4(s, where):
    try:
        return str(ipaddress.IPv4Address(s))
    except (ipaddress.AddressValueError, ValueError):
        raise DescriptionError(f"{where}: {s!r} is not an IPv4 address") from None


def _unicast(addr, where):
    a = ipaddress.IPv4Address(addr)
    if a.is_multicast or a.is_unspecified or a == ipaddress.IPv4Address("255.255.255.255"):
        raise DescriptionError(f"{where}: {addr} is not a unicast address")
    return addr


def _addr_port(s, where):
    if not isinstance(s, str) or not re.fullmatch(r"[0-9.]+:\d{1,5}", s):
        raise DescriptionError(f"{where}: {s!r} is not ADDR:PORT")
    addr, port = s.rsplit(":", 1)
    port = int(port)
    if not 1 <= port <= 65535:
        raise DescriptionError(f"{where}: port {port} is outside 1..65535")
    return _ipv4(addr, where), port


def _mac(s, where):
    if not isinstance(s, str) or not re.fullmatch(r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", s):
        raise DescriptionError(f"{where}: {s!r} is not a MAC address")
    if int(s[:2], 16) & 1:
        raise DescriptionError(f"{where}: {s} is a multicast MAC address")
    return s.lower()


def parse_ports(obj):
    """{"hosts": {ADDR: {"port": N, "mac": M}}, "flood_ports": [N...]}"""
    if not isinstance(obj, dict) or not isinstance(obj.get("hosts"), dict):
        raise DescriptionError("port map: an object with \"hosts\": {ADDR: {\"port\", \"mac\"}}")
    hosts, macs = {}, {}
    for addr, h in obj["hosts"].items():
        where = f"port map: host {addr}"
        a = _ipv4(addr, where)
        if not isinstance(h, dict):
            raise DescriptionError(f"{where}: {{\"port\": N, \"mac\": M}} expected")
        mac = _mac(h.get("mac"), where)
        if mac in macs:
            raise DescriptionError(f"{where}: MAC {mac} is also host {macs[mac]}'s")
        macs[mac] = a
        hosts[a] = Host(a, _int(h, "port", where, 0, DEV_PORT_MAX), mac)
    flood = obj.get("flood_ports", sorted({h.port for h in hosts.values()}))
    if not isinstance(flood, list):
        raise DescriptionError("port map: \"flood_ports\" must be a list of ports")
    for p in flood:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= DEV_PORT_MAX:
            raise DescriptionError(f"port map: flood port {p!r} is outside 0..{DEV_PORT_MAX}")
    return hosts, tuple(sorted(set(flood)))


def parse_switch(obj, slots_max):
    where = "switch"
    if not isinstance(obj, dict):
        raise DescriptionError("switch: the object `aggctl -j switch show` prints expected")
    policies = uapi.policies()
    policy = obj.get("policy")
    if policy not in policies:
        raise DescriptionError(f"{where}: policy {policy!r} is not one of {', '.join(policies)}")
    slots = _int(obj, "agg_slots", where, 1, 1 << 32)
    if slots > slots_max:
        raise DescriptionError(f"{where}: agg_slots {slots} exceeds the {slots_max} "
                               "aggregators of the Tofino program (ESA_TOFINO_SLOTS)")
    timeout = _int(obj, "agg_timeout_us", where, 0, TIMEOUT_MAX_US)
    return Switch(policy, slots, timeout)


def _member(s, where, hosts):
    addr, port = _addr_port(s, where)
    _unicast(addr, where)
    if addr not in hosts:
        raise DescriptionError(f"{where}: {addr} is not in the port map")
    return Member(addr, port, hosts[addr])


def parse_job(obj, hosts):
    if not isinstance(obj, dict):
        raise DescriptionError("jobs: each job must be an object")
    jid = _int(obj, "id", "job", 1, uapi.wire().defines["ESA_MAX_JOB_ID"])
    where = f"job {jid}"
    max_workers = uapi.wire().defines["ESA_MAX_WORKERS"]
    fan_in = _int(obj, "fan_in", where, 1, max_workers)
    ws = obj.get("workers")
    if not isinstance(ws, list) or not ws:
        raise DescriptionError(f"{where}: \"workers\" must be a non-empty list")
    if len(ws) != fan_in:
        raise DescriptionError(f"{where}: fan_in {fan_in} but {len(ws)} workers")
    workers = tuple(_member(w, f"{where}: worker {i}", hosts) for i, w in enumerate(ws))
    seen = {}
    for i, w in enumerate(workers):
        if (w.addr, w.udp_port) in seen:
            raise DescriptionError(f"{where}: workers {seen[(w.addr, w.udp_port)]} and {i} "
                                   f"are both {w.addr}:{w.udp_port}")
        seen[(w.addr, w.udp_port)] = i
    if obj.get("has_token"):
        # esa_hdr_check takes wire version 1 only: every frame of a job
        # with a token (version 2) would be dropped as malformed
        raise DescriptionError(f"{where}: has a token, and the Tofino program "
                               "takes no job tokens (wire version 1 only)")
    ps = _member(obj.get("ps"), f"{where}: ps", hosts)
    if ps.udp_port != uapi.wire().defines["ESA_UDP_PORT"]:
        raise DescriptionError(f"{where}: ps: port {ps.udp_port} is not ESA_UDP_PORT "
                               f"({uapi.wire().defines['ESA_UDP_PORT']}): the switch takes "
                               "only aggregation packets to that port")
    return Job(jid, fan_in,
               _int(obj, "quota", where, 0, 1 << 32),
               _int(obj, "agg_base", where, 0, 1 << 32),
               _int(obj, "agg_slice", where, 0, 1 << 32),
               ps, workers)


def _check_pipes(jobs):
    """Registers are per pipe: every member must enter through one pipe."""
    first = None
    for j in jobs:
        for role, m in [("ps", j.ps)] + [(f"worker {i}", w) for i, w in enumerate(j.workers)]:
            if first is None:
                first = (j.job_id, role, m)
            elif m.host.pipe != first[2].host.pipe:
                raise DescriptionError(
                    f"job {j.job_id}: {role} {m.addr} is on port {m.host.port} (pipe "
                    f"{m.host.pipe}) but job {first[0]} {first[1]} {first[2].addr} is on "
                    f"port {first[2].host.port} (pipe {first[2].host.pipe}): the aggregators "
                    "live in one pipe, so every member must use ports of that pipe")


def _check_static(sw, jobs):
    for j in jobs:
        if j.agg_base + j.agg_slice > sw.agg_slots:
            raise DescriptionError(f"job {j.job_id}: static slice {j.agg_base}.."
                                   f"{j.agg_base + j.agg_slice - 1} is beyond agg_slots "
                                   f"{sw.agg_slots}")
    for a in jobs:
        for b in jobs:
            if a.job_id >= b.job_id or not a.agg_slice or not b.agg_slice:
                continue
            if a.quota == 0 and b.quota == 0:
                continue    # jobs without a quota share the remainder
            if a.agg_base < b.agg_base + b.agg_slice and b.agg_base < a.agg_base + a.agg_slice:
                raise DescriptionError(f"jobs {a.job_id} and {b.job_id}: static slices overlap")


def parse(jobs_obj, switch_obj, ports_obj, slots_max):
    """A Description from the three parsed JSON documents."""
    hosts, flood = parse_ports(ports_obj)
    sw = parse_switch(switch_obj, slots_max)
    if not isinstance(jobs_obj, list):
        if isinstance(jobs_obj, dict) and "id" in jobs_obj:
            jobs_obj = [jobs_obj]     # `aggctl -j job show id N` prints one
        else:
            raise DescriptionError("jobs: the list `aggctl -j job show` prints expected")
    jobs = tuple(parse_job(j, hosts) for j in jobs_obj)
    ids = [j.job_id for j in jobs]
    for jid in ids:
        if ids.count(jid) > 1:
            raise DescriptionError(f"job {jid}: described twice")
    if sw.policy == "atp":
        for j in jobs:
            if j.fan_in == uapi.wire().defines["ESA_MAX_WORKERS"]:
                raise DescriptionError(
                    f"job {j.job_id}: {j.fan_in} workers, but under atp the Tofino program "
                    "holds at most 31 (a complete slot is held by the bit of worker 31)")
    if sw.policy == "static":
        _check_static(sw, jobs)
    _check_pipes(jobs)
    return Description(sw, tuple(sorted(jobs, key=lambda j: j.job_id)), hosts, flood)


def load_json(path, what):
    """A JSON document from @path ("-": stdin); errors name @what."""
    import sys
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise DescriptionError(f"{what}: {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise DescriptionError(f"{what}: {path}: not JSON: {e}") from None
