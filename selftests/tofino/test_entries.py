#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The control plane's entry generation: job and switch descriptions as
aggctl prints them, with a port map, give the expected defaults, entries
and multicast groups (expectations written out here, not computed); bad
descriptions are refused with their reason; install() drives a backend in
order; the counters fold into aggctl's records."""
import copy
import json
import os
import subprocess
import sys

from tofino_env import ROOT, tap
from esa_tofino import backend, description, entries, program, stats
from esa_tofino.description import DescriptionError

PROG = program.load()
HOLD = 0x80000000
RID_PS = 0xffff
ING, EG = "pipe.EsaIngress", "pipe.EsaEgress"


def mac(n):
    return f"02:00:00:00:00:{n:02x}"


# Hosts 10.0.0.N on dev port N (pipe 0), MAC 02:..:N; a host on pipe 1.
PORTS = {"hosts": {f"10.0.0.{n}": {"port": n, "mac": mac(n)} for n in range(1, 13)}}
PORTS["hosts"]["10.0.1.1"] = {"port": 130, "mac": mac(0x81)}


def job(jid, ps, workers, quota=0, base=0, slice_=0, prio=0):
    return {"id": jid, "fan_in": len(workers), "prio_mode": "fixed", "priority": prio,
            "quota": quota, "agg_base": base, "agg_slice": slice_, "ps": ps,
            "workers": workers}


def switch(policy, slots=1024, timeout=3000):
    return {"module": False, "dataplane": True, "flavour": "maps", "policy": policy,
            "agg_slots": slots, "agg_timeout_us": timeout, "ports": ["p0", "p1"]}


STATIC_JOBS = [job(1, "10.0.0.10:47000", ["10.0.0.1:5000", "10.0.0.2:5000"], 16, 0, 16, 10),
               job(2, "10.0.0.11:47000", ["10.0.0.3:5000", "10.0.0.4:5001", "10.0.0.5:5002"],
                   32, 16, 32)]


def make_plan(jobs, sw, ports=PORTS):
    return entries.plan(description.parse(jobs, sw, ports, PROG.slots), PROG)


def find(plan, table, **key):
    """Entries of @table whose key has @key's fields (dots as __)."""
    want = {k.replace("__", "."): v for k, v in key.items()}
    return [e for e in plan.entries if e.table == table and
            all(dict(e.key).get(k) == v for k, v in want.items())]


def test_static():
    plan = make_plan(STATIC_JOBS, switch("static"))
    cfg = plan.defaults[0]
    tap.ok(cfg.table == f"{ING}.validate.esa_config" and dict(cfg.data) ==
           {"policy": 2, "timeout": 46, "partial_floor": 0, "hold": 0},
           "static: config (policy 2, 3000 us = 46 units of 65.536 us, no hold bit)",
           cfg)
    j2 = find(plan, f"{ING}.validate.esa_job", hdr__esa__job_id=2)
    tap.ok(len(j2) == 1 and dict(j2[0].data) ==
           {"fan_in": 3, "full": 7, "base": 16, "quota": 32, "mgid": 2},
           "static: job 2 is its slice 16..47, group 2", j2)
    m = find(plan, f"{ING}.validate.esa_member", hdr__esa__job_id=2)
    tap.ok(sorted(tuple(dict(e.key).values()) for e in m) ==
           [(2, 1, "10.0.0.3", 5000, 3), (2, 2, "10.0.0.4", 5001, 4),
            (2, 4, "10.0.0.5", 5002, 5)],
           "static: job 2's workers bound to bit, address, UDP port and switch port", m)
    r = find(plan, f"{ING}.esa_ps_route", md__route_job=2)
    tap.ok(len(r) == 1 and dict(r[0].data) == {"port": 11, "ps_addr": "10.0.0.11",
                                               "ps_mac": mac(11), "fan_in": 3, "base": 16},
           "static: job 2's PS route (evictions: fan_in and base)", r)
    ps = find(plan, f"{ING}.validate.esa_ps_member", hdr__esa__job_id=1)
    tap.ok([dict(e.key) for e in ps] ==
           [{"hdr.esa.job_id": 1, "hdr.ipv4.src_addr": "10.0.0.10",
             "ig_intr_md.ingress_port": 10}], "static: job 1's RESULTs only from its PS's port")
    groups = {g.mgid: g.nodes for g in plan.groups}
    tap.ok(groups == {1: ((0, 1), (1, 2), (RID_PS, 10)),
                      2: ((0, 3), (1, 4), (2, 5), (RID_PS, 11)),
                      0xffff: tuple((0, n) for n in list(range(1, 13)) + [130])},
           "static: a group per job (workers' rid = bit index, the PS's 0xffff) and flood",
           groups)
    eg = find(plan, f"{EG}.esa_mcast_member", hdr__bridge__job=1)
    tap.ok(sorted((dict(e.key)["eg_intr_md.egress_rid"], e.action, dict(e.data)) for e in eg) ==
           [(0, "EsaEgress.to_worker", {"addr": "10.0.0.1", "port": 5000, "mac": mac(1),
                                         "worker_bit": 1, "ps_addr": "10.0.0.10",
                                         "ps_mac": mac(10)}),
            (1, "EsaEgress.to_worker", {"addr": "10.0.0.2", "port": 5000, "mac": mac(2),
                                         "worker_bit": 2, "ps_addr": "10.0.0.10",
                                         "ps_mac": mac(10)}),
            (RID_PS, "EsaEgress.to_ps", {"ps_addr": "10.0.0.10", "ps_mac": mac(10)})],
           "static: job 1's copies rewritten per worker, the PS's addressed to it", eg)
    l2 = find(plan, f"{ING}.esa_l2")
    tap.ok(len(l2) == 13 and dict(l2[0].key) == {"hdr.ethernet.dst_addr": mac(1)},
           "static: every host of the port map switched at L2 by MAC", len(l2))
    bound = find(plan, f"{ING}.esa_bound_arp")
    tap.ok([(dict(e.key)["hdr.arp.spa"], dict(e.data)["port"], dict(e.data)["job"])
            for e in bound] ==
           [("10.0.0.1", 1, 1), ("10.0.0.2", 2, 1), ("10.0.0.3", 3, 2), ("10.0.0.4", 4, 2),
            ("10.0.0.5", 5, 2), ("10.0.0.10", 10, 1), ("10.0.0.11", 11, 2)],
           "static: every member's address bound to its port, for its job (ARP senders)",
           bound)
    tap.ok(len(find(plan, f"{ING}.esa_bound_ip")) == 7,
           "static: ... and IPv4 sources")
    tap.ok(len(plan.entries) == 3 * 2 + 5 * 2 + 2 + 13 + 2 * 7,
           "static: nothing else installed (3 per job, 2 per worker, the PS copies, L2, "
           "bound addresses)", len(plan.entries))


def test_esa_priorities():
    jobs = [job(7, "10.0.0.12:47000", ["10.0.0.1:6000", "10.0.0.2:6000"], prio=200),
            job(3, "10.0.0.12:47000", ["10.0.0.3:6000", "10.0.0.4:6000"], quota=8, prio=5),
            job(5, "10.0.0.11:47000", ["10.0.0.5:6000"], prio=0)]
    plan = make_plan(jobs, switch("esa", slots=16384, timeout=0))
    tap.ok(dict(plan.defaults[0].data) == {"policy": 0, "timeout": 0, "partial_floor": 0,
                                           "hold": 0}, "esa: config (timeout 0: never reclaim)")
    js = {dict(e.key)["hdr.esa.job_id"]: dict(e.data)
          for e in find(plan, f"{ING}.validate.esa_job")}
    tap.ok(sorted(js) == [3, 5, 7] and
           all(d["base"] == 0 and d["quota"] == 16384 for d in js.values()) and
           js[5]["full"] == 1 and js[7]["full"] == 3,
           "esa: every job indexes the whole array (a quota is no slice under esa)", js)
    tap.ok([g.mgid for g in plan.groups] == [3, 5, 7, 0xffff] and
           dict((g.mgid, g.nodes) for g in plan.groups)[5] == ((0, 5), (RID_PS, 11)),
           "esa: groups in job order; a fan_in 1 job's group is its worker and PS",
           plan.groups)
    tap.ok(not any("prio" in k for e in plan.entries for k, _ in e.data),
           "esa: priorities are the packets' (the module-less rule), not installed")


def test_atp():
    jobs = [job(1, "10.0.0.10:47000", [f"10.0.0.{n}:7000" for n in range(1, 10)])]
    plan = make_plan(jobs, switch("atp", timeout=100000))
    tap.ok(dict(plan.defaults[0].data) == {"policy": 1, "timeout": 1526,
                                           "partial_floor": HOLD, "hold": HOLD},
           "atp: config holds complete slots (hold bit, resend floor), 100 ms = 1526 units",
           plan.defaults[0])
    one = make_plan([job(1, "10.0.0.10:47000", ["10.0.0.1:7000"])],
                    switch("esa", timeout=1))
    tap.ok(dict(one.defaults[0].data)["timeout"] == 1,
           "a timeout shorter than the time unit rounds up, never to 0 (never)")


def test_install_order():
    plan = make_plan(STATIC_JOBS, switch("static"))
    b = backend.JsonBackend()
    backend.install(plan, b)
    ops = [c["op"] for c in b.calls]
    n = len(plan.entries)
    tap.ok(ops == ["clear", "set_default"] + ["add"] * n + ["add_group"] * 3,
           "install: clear, defaults, entries, then groups", ops)
    tap.ok(backend._value("10.0.0.1") == 0x0a000001 and
           backend._value("02:00:00:00:00:0b") == 0x02000000000b and backend._value(5) == 5,
           "BfRt values: addresses and MACs as numbers")


BAD = [
    ("a policy aggctl does not have",
     lambda j, s, p: s.update(policy="fifo"), "policy 'fifo' is not one of esa, atp, static"),
    ("more slots than the program has",
     lambda j, s, p: s.update(agg_slots=65536), "exceeds the 16384 aggregators"),
    ("a timeout beyond aggctl's range",
     lambda j, s, p: s.update(agg_timeout_us=60000001), "\"agg_timeout_us\" 60000001 is outside"),
    ("a switch without a data plane (no policy)",
     lambda j, s, p: [s.pop("policy")], "policy None is not one of"),
    ("fan_in that disagrees with the workers",
     lambda j, s, p: j[0].update(fan_in=3), "job 1: fan_in 3 but 2 workers"),
    ("a worker the port map does not know",
     lambda j, s, p: j[1]["workers"].__setitem__(1, "10.0.9.9:5000"),
     "job 2: worker 1: 10.0.9.9 is not in the port map"),
    ("a PS the port map does not know",
     lambda j, s, p: j[0].update(ps="10.0.9.10:47000"), "job 1: ps: 10.0.9.10 is not in"),
    ("a worker without a port",
     lambda j, s, p: j[0]["workers"].__setitem__(0, "10.0.0.1"),
     "job 1: worker 0: '10.0.0.1' is not ADDR:PORT"),
    ("a job described twice",
     lambda j, s, p: j.append(copy.deepcopy(j[0])), "job 1: described twice"),
    ("two workers with one address and port",
     lambda j, s, p: j[1]["workers"].__setitem__(2, "10.0.0.3:5000"),
     "job 2: workers 0 and 2 are both 10.0.0.3:5000"),
    ("job id 0", lambda j, s, p: j[0].update(id=0), "job: \"id\" 0 is outside 1..1023"),
    ("job id 1024", lambda j, s, p: j[0].update(id=1024), "job: \"id\" 1024 is outside 1..1023"),
    ("overlapping static slices",
     lambda j, s, p: j[1].update(agg_base=8), "jobs 1 and 2: static slices overlap"),
    ("a static slice beyond agg_slots",
     lambda j, s, p: j[1].update(agg_slice=1009), "job 2: static slice 16..1024 is beyond"),
    ("members on two pipes",
     lambda j, s, p: j[1]["workers"].__setitem__(0, "10.0.1.1:5000"),
     "job 2: worker 0 10.0.1.1 is on port 130 (pipe 1)"),
    ("32 workers under atp",
     lambda j, s, p: (s.update(policy="atp"), j.__setitem__(1, job(
         2, "10.0.0.11:47000", [f"10.0.0.{1 + i % 12}:{6000 + i}" for i in range(32)]))),
     "job 2: 32 workers, but under atp the Tofino program holds at most 31"),
    ("a multicast MAC in the port map",
     lambda j, s, p: p["hosts"]["10.0.0.1"].update(mac="01:00:5e:00:00:01"),
     "port map: host 10.0.0.1: 01:00:5e:00:00:01 is a multicast MAC"),
    ("a port beyond the 9-bit dev_port",
     lambda j, s, p: p["hosts"]["10.0.0.1"].update(port=512),
     "port map: host 10.0.0.1: \"port\" 512 is outside 0..511"),
    ("two hosts with one MAC",
     lambda j, s, p: p["hosts"]["10.0.0.2"].update(mac=mac(1)),
     "port map: host 10.0.0.2: MAC 02:00:00:00:00:01 is also host 10.0.0.1's"),
    ("a PS port other than ESA_UDP_PORT",
     lambda j, s, p: j[1].update(ps="10.0.0.11:47001"),
     "job 2: ps: port 47001 is not ESA_UDP_PORT (47000)"),
    ("a multicast worker address",
     lambda j, s, p: j[0]["workers"].__setitem__(1, "224.0.0.1:5000"),
     "job 1: worker 1: 224.0.0.1 is not a unicast address"),
    ("a job with a token (aggctl -j job show's has_token)",
     lambda j, s, p: j[0].update(has_token=True),
     "job 1: has a token, and the Tofino program takes no job tokens"),
    ("a quota that is not a number",
     lambda j, s, p: j[0].update(quota="16"), "job 1: \"quota\" must be an integer"),
]


def test_refusals():
    for desc, mutate, reason in BAD:
        j, s, p = copy.deepcopy(STATIC_JOBS), switch("static"), copy.deepcopy(PORTS)
        mutate(j, s, p)
        try:
            make_plan(j, s, p)
            got = "accepted"
        except DescriptionError as e:
            got = str(e)
        tap.ok(reason in got, f"refused: {desc}", f"want {reason!r}\ngot  {got!r}")
    one = make_plan(STATIC_JOBS[0], switch("static"))
    tap.ok(len(find(one, f"{ING}.validate.esa_job")) == 1,
           "`aggctl -j job show id N` (one object) is read as one job")


def test_cli(tmp):
    files = {"jobs": STATIC_JOBS, "switch": switch("static"), "ports": PORTS}
    for name, obj in files.items():
        with open(os.path.join(tmp, name + ".json"), "w") as f:
            json.dump(obj, f)
    tool = os.path.join(ROOT, "p4", "tofino", "esa-tofino")
    args = [tool, "plan"] + [a for n in files for a in (f"--{n}", os.path.join(tmp, n + ".json"))]
    r = subprocess.run(args, capture_output=True, text=True)
    ok = r.returncode == 0 and len(json.loads(r.stdout)["entries"]) == 45
    tap.ok(ok, "esa-tofino plan prints the plan as JSON", r.stderr)
    with open(os.path.join(tmp, "switch.json"), "w") as f:
        f.write("{policy")
    r = subprocess.run(args, capture_output=True, text=True)
    tap.ok(r.returncode == 1 and "switch: " in r.stderr and "not JSON" in r.stderr
           and not r.stdout, "esa-tofino plan: a file that is not JSON, exit 1 and why",
           r.stderr)
    r = subprocess.run(args + ["--bogus"], capture_output=True, text=True)
    tap.ok(r.returncode == 2 and "unrecognized arguments" in r.stderr,
           "esa-tofino: a bad option is a usage error (exit 2)", r.stderr)
    with open(os.path.join(tmp, "switch.json"), "w") as f:
        json.dump(files["switch"], f)
    r = subprocess.run([tool, "install"] + args[2:], capture_output=True, text=True)
    tap.ok(r.returncode == 1 and "BfRt client is not importable" in r.stderr,
           "esa-tofino install without the SDE says what is missing", r.stderr)


def test_stats():
    shift = PROG.const("ESA_CNT_SHIFT")
    raw = {"pipe.EsaIngress.esa_rx": {0: 2, 1: 10, 2: 4},
           "pipe.EsaIngress.esa_outcome": {(0 << shift) | 11: 1, (0 << shift) | 13: 1,
                                           (1 << shift) | 1: 9, (1 << shift) | 7: 1,
                                           (2 << shift) | 3: 4},
           "pipe.EsaIngress.esa_forwarded": {0: 7},
           "pipe.EsaIngress.esa_completed": {1: 4},
           "pipe.EsaIngress.esa_evictions": {2: 1},
           "pipe.EsaEgress.esa_truncated": {2: 1},
           "pipe.EsaEgress.esa_overflows": {1: 2},
           "pipe.EsaIngress.esa_stranded": {2: 3},
           stats.STRANDED_TIME: {2: 1000}}
    f = stats.fold(raw, shift, PROG.time_shift)
    tap.ok(f[1]["rx"] == 10 and f[1]["aggregated"] == 9 and f[1]["duplicates"] == 1 and
           f[1]["completed"] == 4 and f[1]["overflows"] == 2,
           "stats: job 1's counters from the per-job and indexed instances", f[1])
    tap.ok(f[2]["collisions"] == 3 and f[2]["drop_truncated"] == 1 and f[2]["evictions"] == 1,
           "stats: an egress truncation drop moves a collision to drop_truncated", f[2])
    tap.ok(f[2]["stranded"] == 3 and f[2]["stranded_us"] == 65536,
           "stats: stranded partials, and their held time from time units to us", f[2])
    tap.ok(f["all"]["rx"] == 16 and f["all"]["forwarded"] == 7 and
           f["all"]["drop_unknown_job"] == 1 and f["all"]["drop_malformed"] == 1,
           "stats: switch-wide totals are the sum over jobs and job 0", f["all"])
    names = set(stats.PER_JOB.values())
    src = PROG.source()
    tap.ok(all(inst.split(".")[-1] in src for inst in list(stats.PER_JOB) + list(stats.INDEXED))
           and len(names) == len(stats.PER_JOB),
           "stats: every counter instance read is declared in the program, once per name")


def main():
    import tempfile
    test_static()
    test_esa_priorities()
    test_atp()
    test_install_order()
    test_refusals()
    with tempfile.TemporaryDirectory() as tmp:
        test_cli(tmp)
    test_stats()
    sys.exit(tap.done())


if __name__ == "__main__":
    main()
