#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The BfRt backend's calls, against a stand-in for the SDE's
bfrt_grpc.client that records them (the real one needs bf_switchd): an
install reaches every table with BfRt's key and data tuples, numbers for
addresses and MACs, multicast nodes before their groups, and a second
install clears the first one's entries; stats reads fold per job."""
import sys
import types

from tofino_env import tap
from esa_tofino import backend, stats
import test_entries as te


class Tuple:
    def __init__(self, name, value=None, **kw):
        self.name, self.value, self.kw = name, value, kw


class Table:
    def __init__(self, name, log):
        self.name, self.log, self.entries = name, log, {}

    def make_key(self, tuples):
        return tuple((t.name, t.value) for t in tuples)

    def make_data(self, tuples, action=None):
        return (action, tuple((t.name, t.value if t.value is not None else
                               tuple(sorted(t.kw.items()))) for t in tuples))

    def entry_add(self, target, keys, datas):
        for k, d in zip(keys, datas):
            if k in self.entries:
                raise RuntimeError(f"{self.name}: entry exists: {k}")
            self.entries[k] = d
            self.log.append(("add", self.name, k, d))

    def entry_del(self, target, keys):
        for k in keys:
            del self.entries[k]
            self.log.append(("del", self.name, k))

    def entry_get(self, target, keys, flags):
        return [(d, k) for k, d in self.entries.items()]

    def default_entry_set(self, target, data):
        self.log.append(("default", self.name, data))


class Info:
    def __init__(self, log):
        self.tables, self.log = {}, log

    def table_get(self, name):
        return self.tables.setdefault(name, Table(name, self.log))


def fake_client(log):
    gc = types.ModuleType("bfrt_grpc.client")
    info = Info(log)

    class ClientInterface:
        def __init__(self, addr, client_id, device_id):
            log.append(("connect", addr))

        def bind_pipeline_config(self, name):
            log.append(("bind", name))

        def bfrt_info_get(self, name):
            return info

    gc.ClientInterface, gc.KeyTuple, gc.DataTuple = ClientInterface, Tuple, Tuple
    gc.Target = lambda device_id, pipe_id: ("target", device_id, pipe_id)
    pkg = types.ModuleType("bfrt_grpc")
    pkg.client = gc
    sys.modules["bfrt_grpc"], sys.modules["bfrt_grpc.client"] = pkg, gc
    return info


def main():
    log = []
    info = fake_client(log)
    b = backend.BfrtBackend("switch:50052")
    plan = te.make_plan(te.STATIC_JOBS, te.switch("static"))
    backend.install(plan, b)
    tap.ok(log[:2] == [("connect", "switch:50052"), ("bind", "esa")],
           "connects to bf_switchd and binds the program esa", log[:2])
    route = info.tables["pipe.EsaIngress.esa_ps_route"].entries
    tap.ok(route.get((("md.route_job", 2),)) ==
           ("EsaIngress.route", (("port", 11), ("ps_addr", 0x0a00000b),
                                 ("ps_mac", 0x02000000000b), ("fan_in", 3), ("base", 16))),
           "an entry: BfRt key and data tuples, address and MAC as numbers", route)
    defaults = [e for e in log if e[0] == "default"]
    tap.ok(len(defaults) == 1 and defaults[0][1] == "pipe.EsaIngress.validate.esa_config" and
           defaults[0][2][0] == "EsaIngress.validate.set_config",
           "the config as the keyless table's default action", defaults)
    nodes = info.tables["$pre.node"].entries
    groups = info.tables["$pre.mgid"].entries
    g2 = groups.get((("$MGID", 2),))
    node_ids = dict(g2[1])["$MULTICAST_NODE_ID"] if g2 else ()
    ports = sorted(dict(nodes[(("$MULTICAST_NODE_ID", n),)][1])["$DEV_PORT"]
                   for n in dict(node_ids)["int_arr_val"]) if g2 else []
    tap.ok(len(groups) == 3 and ports == [(("int_arr_val", [p]),) for p in (3, 4, 5, 11)],
           "group 2: nodes for its three workers' ports and its PS's", (groups, nodes))
    first = sum(len(t.entries) for t in info.tables.values())
    backend.install(plan, b)
    again = sum(len(t.entries) for t in info.tables.values())
    tap.ok(first == again == len(plan.entries) + 3 + sum(len(g.nodes) for g in plan.groups),
           "a second install replaces the first (nothing left over, nothing twice)",
           (first, again))

    shift = te.PROG.const("ESA_CNT_SHIFT")
    ctr = info.table_get("pipe.EsaIngress.esa_outcome")
    ctr.entries[(("$COUNTER_INDEX", (3 << shift) | 1),)] = None

    class Data:
        def __init__(self, n):
            self.n = n

        def to_dict(self):
            return {"$COUNTER_SPEC_PKTS": self.n}

    class Key:
        def __init__(self, i):
            self.i = i

        def to_dict(self):
            return {"$COUNTER_INDEX": {"value": self.i}}
    ctr.entry_get = lambda target, keys, flags: [(Data(5), Key((3 << shift) | 1)),
                                                 (Data(0), Key(7))]
    raw = b.read_counters("pipe.EsaIngress.esa_outcome")
    tap.ok(raw == {(3 << shift) | 1: 5} and stats.fold({ctr.name: raw}, shift, 16)[3]["aggregated"] == 5,
           "counters read from the hardware fold into job 3's record", raw)
    sys.exit(tap.done())


main()
