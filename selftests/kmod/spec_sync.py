# SPDX-License-Identifier: GPL-2.0
"""Check Documentation/netlink/specs/esa.yaml against uapi/esa_genl.h (and
the enums it uses from uapi/esa_switch.h): every enum, attribute set and
command in the same order with the same names (name-prefix + name, the
kernel's YAML convention), and the family, version and group names; and
against kmod/esa_netlink.c: the operations that need CAP_NET_ADMIN
(admin-perm, GENL_ADMIN_PERM).
Prints TAP lines; exit 1 on a mismatch."""
import re
import sys

import yaml

root = sys.argv[1]
hdr = open(f"{root}/uapi/esa_genl.h").read() + open(f"{root}/uapi/esa_switch.h").read()
spec = yaml.safe_load(open(f"{root}/Documentation/netlink/specs/esa.yaml"))
n = 0
failed = 0


def tap(good, desc):
    global n, failed
    n += 1
    if not good:
        failed = 1
    if good:
        desc = desc.split(":")[0]	# the details only when they differ
    print(f"{'ok' if good else 'not ok'} {n} - {desc}")


def c_enum(name):
    body = re.search(r"enum %s \{(.*?)\};" % name, hdr, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = re.findall(r"^\s*([A-Z][A-Z0-9_]*)", body, re.M)
    return [x for x in names if not x.startswith("__")]


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


def define(name):
    return re.search(r"#define %s\s+(\S+)" % name, hdr).group(1).strip('"')


tap(spec["name"] == define("ESA_GENL_NAME"), "family name")
tap(str(spec["version"]) == define("ESA_GENL_VERSION"), "family version")
tap([g["name"] for g in spec["mcast-groups"]["list"]] == [define("ESA_GENL_MCGRP_EVENTS")],
    "multicast group")

for d in spec["definitions"]:
    if d["type"] != "enum":
        continue
    want = [c_name(d["name-prefix"], e) for e in d["entries"]]
    cname = {"policy": "esa_policy", "job-state": "esa_job_state",
             "prio-mode": "esa_prio_mode"}[d["name"]]
    got = c_enum(cname)
    tap(got == want, f"enum {d['name']}: {got} vs {want}")

sets = {s["name"]: s for s in spec["attribute-sets"]}
for sname, cname in (("esa", "esa_attr"), ("workers", "esa_workers_attr"),
                     ("worker", "esa_worker_attr")):
    s = sets[sname]
    want = [c_name(s["name-prefix"], a["name"]) for a in s["attributes"]]
    got = c_enum(cname)
    tap(got == want, f"attribute set {sname}: {got} vs {want}")

stats = [a["name"] for a in sets["stats"]["attributes"] if a["type"] != "unused"]
counters = [c.replace("ESA_CNT_", "").lower().replace("_", "-") for c in c_enum("esa_counter")]
tap(stats == counters + ["bytes"], f"stats set follows enum esa_counter: {stats}")
tap([a.get("value") for a in sets["stats"]["attributes"] if a["name"] == "bytes"]
    == [int(define("ESA_A_STATS_BYTES"))], "stats bytes attribute number")

ops = spec["operations"]
want = [c_name(ops["name-prefix"], o["name"]) for o in ops["list"]]
got = c_enum("esa_cmd")
tap(got == want, f"operations: {got} vs {want}")
allattrs = {a["name"] for a in sets["esa"]["attributes"]}
bad = []
for o in ops["list"]:
    for part in ("do", "dump", "event"):
        if part not in o:
            continue
        msgs = [o[part]] if part == "event" else [o[part].get("request", {}), o[part].get("reply", {})]
        for m in msgs:
            bad += [f"{o['name']}:{a}" for a in (m or {}).get("attributes", []) if a not in allattrs]
tap(not bad, f"operations name only attributes of the esa set: {bad}")

src = open(f"{root}/kmod/esa_netlink.c").read()
ops_c = re.search(r"genl_ops esa_ops\[\] = \{(.*?)\n\};", src, re.S).group(1)
admin_c = sorted(re.search(r"\.cmd\s*=\s*(\w+)", b).group(1)
                 for b in re.split(r"\n\t\},?", ops_c)
                 if ".cmd" in b and "GENL_ADMIN_PERM" in b)
admin_y = sorted(c_name(ops["name-prefix"], o["name"]) for o in ops["list"]
                 if "admin-perm" in o.get("flags", []))
tap(admin_c == admin_y, f"admin-perm operations: {admin_c} vs {admin_y}")
print(f"1..{n}")
sys.exit(failed)
