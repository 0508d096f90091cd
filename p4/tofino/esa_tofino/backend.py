# SPDX-License-Identifier: GPL-2.0
"""Where a Plan goes. A backend has four operations; install() drives
them, so the entry generation never touches the SDE:

    clear()                          remove what a previous install put in
    set_default(table, action, data)
    add(table, key, action, data)
    add_group(mgid, nodes)           nodes: ((rid, dev_port), ...)

JsonBackend records the calls (the `plan` command prints them, tests read
them). BfrtBackend talks to bf_switchd through the SDE's BfRt gRPC client,
imported only when it is created: the SDE is not needed anywhere else."""
import ipaddress


def install(plan, backend):
    backend.clear()
    for d in plan.defaults:
        backend.set_default(d.table, d.action, d.data)
    for e in plan.entries:
        backend.add(e.table, e.key, e.action, e.data)
    for g in plan.groups:
        backend.add_group(g.mgid, g.nodes)


class JsonBackend:
    """Records every call as a dict, in order."""

    def __init__(self):
        self.calls = []

    def clear(self):
        self.calls.append({"op": "clear"})

    def set_default(self, table, action, data):
        self.calls.append({"op": "set_default", "table": table, "action": action,
                           "data": dict(data)})

    def add(self, table, key, action, data):
        self.calls.append({"op": "add", "table": table, "key": dict(key),
                           "action": action, "data": dict(data)})

    def add_group(self, mgid, nodes):
        self.calls.append({"op": "add_group", "mgid": mgid, "nodes": [list(n) for n in nodes]})


def _value(v):
    """BfRt takes integers: IPv4 and MAC strings become their numbers."""
    if isinstance(v, str):
        if v.count(":") == 5:
            return int(v.replace(":", ""), 16)
        return int(ipaddress.IPv4Address(v))
    return v


class BfrtBackend:
    """The SDE's BfRt gRPC client (bfrt_grpc.client, SDE 9.x)."""

    # tables and PRE tables this program fills (cleared by clear())
    TABLES = ("pipe.EsaIngress.validate.esa_job", "pipe.EsaIngress.validate.esa_member",
              "pipe.EsaIngress.validate.esa_ps_member", "pipe.EsaIngress.esa_ps_route",
              "pipe.EsaIngress.esa_l2", "pipe.EsaIngress.esa_bound_ip",
              "pipe.EsaIngress.esa_bound_arp", "pipe.EsaEgress.esa_mcast_member")

    def __init__(self, grpc_addr, program="esa", client_id=0):
        import bfrt_grpc.client as gc    # the SDE's; here only
        self.gc = gc
        self.iface = gc.ClientInterface(grpc_addr, client_id=client_id, device_id=0)
        self.iface.bind_pipeline_config(program)
        self.info = self.iface.bfrt_info_get(program)
        self.target = gc.Target(device_id=0, pipe_id=0xffff)
        self.node_ids = {}

    def _table(self, name):
        return self.info.table_get(name)

    def clear(self):
        self.node_ids = {}
        for name in self.TABLES:
            t = self._table(name)
            keys = [k for _, k in t.entry_get(self.target, [], {"from_hw": False})]
            if keys:
                t.entry_del(self.target, keys)
        for name in ("$pre.mgid", "$pre.node"):
            t = self._table(name)
            keys = [k for _, k in t.entry_get(self.target, [], {"from_hw": False})]
            if keys:
                t.entry_del(self.target, keys)

    def _data(self, t, action, data):
        return t.make_data([self.gc.DataTuple(k, _value(v)) for k, v in data], action)

    def set_default(self, table, action, data):
        t = self._table(table)
        t.default_entry_set(self.target, self._data(t, action, data))

    def add(self, table, key, action, data):
        t = self._table(table)
        k = t.make_key([self.gc.KeyTuple(f, _value(v)) for f, v in key])
        t.entry_add(self.target, [k], [self._data(t, action, data)])

    def add_group(self, mgid, nodes):
        gc = self.gc
        node_t, mgid_t = self._table("$pre.node"), self._table("$pre.mgid")
        ids = []
        for rid, port in nodes:
            nid = len(self.node_ids) + 1
            self.node_ids[(mgid, rid, port)] = nid
            node_t.entry_add(self.target,
                             [node_t.make_key([gc.KeyTuple("$MULTICAST_NODE_ID", nid)])],
                             [node_t.make_data([gc.DataTuple("$MULTICAST_RID", rid),
                                                gc.DataTuple("$DEV_PORT", int_arr_val=[port])])])
            ids.append(nid)
        mgid_t.entry_add(self.target, [mgid_t.make_key([gc.KeyTuple("$MGID", mgid)])],
                         [mgid_t.make_data([gc.DataTuple("$MULTICAST_NODE_ID", int_arr_val=ids),
                                            gc.DataTuple("$MULTICAST_NODE_L1_XID_VALID",
                                                         bool_arr_val=[False] * len(ids)),
                                            gc.DataTuple("$MULTICAST_NODE_L1_XID",
                                                         int_arr_val=[0] * len(ids))])])

    def read_counters(self, table):
        """{index: packets} of a counter instance, read from the hardware."""
        t = self._table(table)
        out = {}
        for data, key in t.entry_get(self.target, [], {"from_hw": True}):
            n = data.to_dict().get("$COUNTER_SPEC_PKTS", 0)
            if n:
                out[key.to_dict()["$COUNTER_INDEX"]["value"]] = n
        return out

    def read_register(self, table):
        """{index: value} of a register, summed over the pipes it has."""
        t = self._table(table)
        field = table.split(".", 1)[1] + ".f1"
        out = {}
        for data, key in t.entry_get(self.target, [], {"from_hw": True}):
            n = sum(data.to_dict().get(field, [0]))
            if n:
                out[key.to_dict()["$REGISTER_INDEX"]["value"]] = n
        return out
