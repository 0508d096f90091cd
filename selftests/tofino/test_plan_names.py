#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The control plane's names are the program's: for every default action
and entry of a plan (several descriptions, every policy), the table exists
at that BfRt path of the P4 program (controls and their instances, as
preprocessed), the key has exactly the table's key fields, and the action
is one of the table's with exactly the parameters given. A table or action
renamed, a parameter added or a key changed in the P4 source fails here.
Also every table the program leaves to the control plane (no const
entries) is filled or has its default set by some plan, or is named here
as filled by none; and every table, counter and register action of the
program is used in one place."""
import re
import sys

from tofino_env import tap
from esa_tofino import backend, program

# Tables whose entries the program carries itself, or that no plan fills.
NOT_PLANNED = set()


def strip(text):
    return re.sub(r"//[^\n]*", "", text)


def blocks(text, kw):
    """{name: (params, body)} of every `kw NAME(params) { body }`."""
    out = {}
    for m in re.finditer(r"\b%s\s+(\w+)\s*\(" % kw, text):
        i, depth = m.end(), 1
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params = text[m.end():i - 1]
        j = text.index("{", i)
        k, depth = j + 1, 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out[m.group(1)] = (params, text[j + 1:k - 1])
    return out


def tables_of(body):
    """{table: (key fields, actions, has const entries)} of a control body."""
    out = {}
    for m in re.finditer(r"\btable\s+(\w+)\s*\{", body):
        i, depth = m.end(), 1
        while depth:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        t = body[m.end():i - 1]
        key = re.search(r"\bkey\s*=\s*\{(.*?)\}", t, re.S)
        fields = tuple(re.findall(r"([\w.]+)\s*:\s*\w+\s*;", key.group(1))) if key else ()
        acts = re.search(r"\bactions\s*=\s*\{(.*?)\}", t, re.S)
        names = tuple(a.strip() for a in acts.group(1).split(";") if a.strip())
        out[m.group(1)] = (fields, names, "const entries" in t)
    return out


def action_params(body):
    """{action: (param names)} of a control body."""
    out = {}
    for m in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
        params = [p.split()[-1] for p in m.group(2).split(",") if p.strip()]
        out[m.group(1)] = tuple(params)
    return out


def program_tables(text):
    """{BfRt table path: (key fields, {action path: params}, const)}."""
    controls = blocks(text, "control")
    out = {}

    def walk(ctype, path):
        _, body = controls[ctype]
        params = action_params(body)
        for t, (fields, acts, const) in tables_of(body).items():
            out[f"pipe.{path}.{t}"] = (fields, {f"{path}.{a}": params.get(a, ())
                                                for a in acts}, const)
        for m in re.finditer(r"\b(\w+)\s*\(\s*\)\s+(\w+)\s*;", body):
            if m.group(1) in controls:
                walk(m.group(1), f"{path}.{m.group(2)}")

    for top in ("EsaIngress", "EsaEgress"):
        walk(top, top)
    return out


def main():
    import test_entries as te   # its descriptions (runs nothing on import)
    prog = program.load()
    text = strip(program.preprocess(prog.files[0].rsplit("/", 1)[0] + "/esa.p4"))
    tables = program_tables(text)
    tap.ok(len(tables) >= 10, f"{len(tables)} tables found in the program", sorted(tables))
    plans = [te.make_plan(te.STATIC_JOBS, te.switch("static")),
             te.make_plan(te.STATIC_JOBS, te.switch("esa", timeout=0)),
             te.make_plan(te.STATIC_JOBS[:1], te.switch("atp"))]
    used = set()
    for kind, items in (("default", [d for p in plans for d in p.defaults]),
                        ("entry", [e for p in plans for e in p.entries])):
        seen = {}
        for it in items:
            bad = None
            if it.table not in tables:
                bad = "no such table"
            else:
                fields, acts, _ = tables[it.table]
                if kind == "entry" and tuple(k for k, _ in it.key) != fields:
                    bad = f"key {[k for k, _ in it.key]} but the table has {list(fields)}"
                elif it.action not in acts:
                    bad = f"action {it.action} is not one of {sorted(acts)}"
                elif tuple(k for k, _ in it.data) != acts[it.action]:
                    bad = (f"{it.action} takes {list(acts[it.action])}, "
                           f"given {[k for k, _ in it.data]}")
            used.add(it.table)
            seen.setdefault((it.table, it.action), bad)
        for (table, action), bad in sorted(seen.items()):
            tap.ok(bad is None, f"{kind} {table} / {action}", bad)
    open_tables = sorted(t for t, (_, _, const) in tables.items()
                         if not const and t not in used and t not in NOT_PLANNED)
    tap.ok(not open_tables, "every table without constant entries is filled by a plan",
           ", ".join(open_tables))
    # One call site each: a Tofino table, counter or register action is
    # one table's; the compiler would have to prove two sites exclusive.
    for what, pattern in (("register action", r"\b(\w+)\.execute\("),
                          ("counter", r"\b(\w+)\.count\("),
                          ("table or control", r"\b(\w+)\.apply\(")):
        sites = re.findall(pattern, text)
        twice = sorted({s for s in sites if sites.count(s) > 1})
        tap.ok(sites and not twice, f"every {what} is used in one place ({len(sites)})",
               ", ".join(twice))
    filled = {e.table for p in plans for e in p.entries}
    tap.ok(set(backend.BfrtBackend.TABLES) == filled,
           "the BfRt backend clears exactly the tables plans fill",
           f"clears {sorted(backend.BfrtBackend.TABLES)}, plans fill {sorted(filled)}")
    sys.exit(tap.done())


main()
