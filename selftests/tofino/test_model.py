#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The Tofino program's aggregation logic, run: model.py interprets the
program's register actions and value op entries from the P4 source and
follows esa_ingress.p4's control flow. Random frames of three jobs
(duplicates, resends, a sequence aliasing another in the 22-bit key,
priorities that preempt, a timeout that reclaims, atp RESULTs that
release) over few slots, then two rounds of resends from every worker
(what endpoints do until they see a result). Checked: every sum leaving
the switch is exactly the sum of the workers its bitmap names; the PS
(merging as the wire protocol says) ends with every worker of every
sequence; the two ownership replicas never differ; no slot stays held;
every frame has one outcome."""
import random
import sys

from tofino_env import tap
from model import Switch

N_SEQ, SPAN, ALIAS = 10, 4, 1 << 22


def scenario(policy, seed):
    rng = random.Random(seed)
    if policy == "static":
        jobs = {1: {"fan_in": 3, "base": 0, "quota": 4}, 2: {"fan_in": 2, "base": 4, "quota": 4},
                3: {"fan_in": 4, "base": 0, "quota": 4}}
        slots = 8
    else:
        jobs = {1: {"fan_in": 3, "base": 0, "quota": 6}, 2: {"fan_in": 2, "base": 0, "quota": 6},
                3: {"fan_in": 4, "base": 0, "quota": 6}}
        slots = 6
    prio = {1: 1, 2: 9, 3: 5}
    seqs = {j: list(range(100 * j, 100 * j + N_SEQ)) for j in jobs}
    seqs[1].append(seqs[1][0] + ALIAS)     # same key and index as seqs[1][0]
    sw = Switch(policy, slots, timeout_units=60 if seed % 2 else 0, jobs=jobs)
    n = sw.prog.values_per_packet

    def values(j, s, w):
        return [(j * 7919 + s * 131 + w * 17 + i) % 2001 - 1000 for i in range(n)]

    def frame(j, s, w, flags=0):
        return {"job": j, "seq": s, "bitmap": 1 << w, "flags": flags, "prio": prio[j],
                "index": s % SPAN if policy == "static" else (s + 2 * j) % slots,
                "values": values(j, s, w)}

    stream = [frame(j, s, w) for j in jobs for s in seqs[j] for w in range(jobs[j]["fan_in"])]
    rng.shuffle(stream)
    extra = []
    for f in stream:
        if rng.random() < 0.1:
            extra.append(dict(f))                               # a duplicate
        if rng.random() < 0.08:
            extra.append(dict(f, flags=sw.c("ESA_F_RESEND")))   # an early resend
    for f in extra:
        stream.insert(rng.randrange(len(stream) + 1), f)
    final = [frame(j, s, w, sw.c("ESA_F_RESEND"))
             for _ in range(2) for j in jobs for s in seqs[j] for w in range(jobs[j]["fan_in"])]
    return sw, jobs, seqs, values, stream, final, rng


def run(policy, seed):
    sw, jobs, seqs, values, stream, final, rng = scenario(policy, seed)
    frames = 0
    results = []        # atp: the PS's RESULTs, sent back some frames later
    queue = list(stream) + final
    while queue or results:
        if results and (not queue or rng.random() < 0.3):
            f = results.pop(rng.randrange(len(results)))
        else:
            f = queue.pop(0)
        before = len(sw.out)
        sw.process(f)
        frames += 1
        for o in sw.out[before:]:
            if policy == "atp" and o["kind"] == "to_ps" and o.get("flag") == "complete":
                results.append(dict(o, flags=sw.c("ESA_F_RESULT"), bitmap=o["bitmap"]))

    bad = []
    for o in sw.out:
        if o["kind"] == "result":
            continue
        j, s, b = o["job"], o["seq"], o["bitmap"]
        full = (1 << jobs[j]["fan_in"]) - 1
        want = [sum(values(j, s, w)[i] for w in range(jobs[j]["fan_in"]) if b >> w & 1)
                for i in range(sw.prog.values_per_packet)]
        if not b or b & ~full or o["values"] != want:
            bad.append(f"{o['kind']} {o.get('flag')} job {j} seq {s} bitmap {b:#x}")
    tap.ok(not bad, f"{policy} seed {seed}: every sum out is exactly its bitmap's workers "
           f"({len(sw.out)} frames out)", "\n".join(bad[:10]))

    missing = []
    for j in jobs:
        full = (1 << jobs[j]["fan_in"]) - 1
        for s in seqs[j]:
            have, done = 0, False
            for o in sw.out:
                if o["kind"] != "to_ps" or o["job"] != j or o["seq"] != s:
                    continue
                if o["flag"] == "complete" and o["bitmap"] == full:
                    done = True
                elif o["bitmap"] & have == 0:
                    have |= o["bitmap"]
            if not done and have != full:
                missing.append(f"job {j} seq {s}: PS has {have:#x} of {full:#x}")
    tap.ok(not missing, f"{policy} seed {seed}: the PS gets every worker of every sequence",
           "\n".join(missing[:10]))

    a, b = sw.regs.get("owner_missing", {}), sw.regs.get("owner_class", {})
    tap.ok(a == b, f"{policy} seed {seed}: the ownership replicas are identical")
    held = sorted(k for k, v in a.items() if v["hi"])
    tap.ok(not held, f"{policy} seed {seed}: no slot held at the end", held)
    outcomes = sum(n for (_, name), n in sw.counts.items()
                   if name in ("aggregated", "duplicates", "collisions", "results", "pulls"))
    tap.ok(outcomes == frames, f"{policy} seed {seed}: one outcome per frame",
           f"{outcomes} outcomes, {frames} frames")
    return sw.counts


def directed():
    """Fixture-like sequences whose every output is known."""
    jobs = {1: {"fan_in": 3, "base": 0, "quota": 4}, 2: {"fan_in": 2, "base": 0, "quota": 4}}
    sw = Switch("esa", 4, timeout_units=50, jobs=jobs)
    n = sw.prog.values_per_packet
    resend = sw.c("ESA_F_RESEND")

    def f(j, s, w, prio=1, flags=0, val=None):
        return {"job": j, "seq": s, "bitmap": 1 << w, "flags": flags, "prio": prio,
                "index": 0, "values": [val if val is not None else w + 1] * n}

    def step(frame):
        before = len(sw.out)
        sw.process(frame)
        return [(o["kind"], o.get("flag"), o["job"], o["seq"], o["bitmap"], o["values"][0])
                for o in sw.out[before:]]

    S, A = 7, 7 + ALIAS
    got = [step(f(1, S, 0)), step(f(1, A, 1)), step(f(1, S, 1)), step(f(1, S, 2))]
    tap.ok(got == [[], [("to_ps", "collision", 1, A, 2, 2)], [],
                   [("to_ps", "complete", 1, S, 7, 6), ("to_workers", "result", 1, S, 7, 6)]],
           "alias: a sequence 2^22 later goes on unaggregated and the resident still sums "
           "the worker whose bit it cleared (the slot record decides)", got)
    got = [step(f(1, S, 1, flags=resend))]
    tap.ok(got == [[("to_ps", "resend", 1, S, 2, 2)]],
           "a resend after the completion goes on to the PS", got)
    S2, A2 = 8, 8 + ALIAS
    got = [step(f(1, S2, 0)), step(f(1, S2, 1)), step(f(1, A2, 2)), step(f(1, S2, 2))]
    tap.ok(got == [[], [], [("to_ps", "collision", 1, A2, 4, 3)], []],
           "alias clearing the resident's last bit: nothing wrong leaves (the resident's "
           "workers resend, as for a lost packet)", got)
    for w in range(3):
        step(f(1, S2, w, flags=resend))
    tap.ok(sw.regs["owner_missing"][0]["hi"] == 0, "and their resends free the slot")

    got = [step(f(1, 20, 0, prio=1)), step(f(2, 30, 0, prio=9, val=10))]
    tap.ok(got == [[], [("to_ps", "preempted", 1, 20, 1, 1)]],
           "preemption: the higher priority takes the slot, the partial goes to its "
           "owner flagged PREEMPTED", got)
    got = [step(f(1, 21, 0, prio=1))]
    tap.ok(got == [[("to_ps", "collision", 1, 21, 1, 1)]],
           "a lower priority collides with the preemptor", got)
    sw.now += 100
    got = [step(f(1, 21, 1, prio=1, val=5))]
    tap.ok(got == [[("to_ps", "partial", 2, 30, 1, 10)]],
           "reclaim: past the timeout any data packet takes the slot, the stale partial "
           "goes to its owner flagged PARTIAL", got)
    got = [step(f(1, 21, 0, prio=1)), step(f(1, 21, 2, prio=1))]
    tap.ok(got == [[], [("to_ps", "complete", 1, 21, 7, 5 + 1 + 3),
                        ("to_workers", "result", 1, 21, 7, 5 + 1 + 3)]],
           "the reclaimer's sum completes: COMPLETE to the PS, RESULT to the workers", got)
    tap.ok(sw.regs["owner_missing"][0]["hi"] == 0, "a complete sum frees its slot at once")


def main():
    directed()
    totals = {}
    for policy in ("esa", "atp", "static"):
        for seed in range(4):
            for (_, name), n in run(policy, seed).items():
                totals[(policy, name)] = totals.get((policy, name), 0) + n
    # the scenarios reach the paths they are meant to test
    for policy, name in (("esa", "preemptions"), ("esa", "evictions"), ("esa", "completed"),
                         ("esa", "stranded"), ("static", "stranded"),
                         ("esa", "duplicates"), ("atp", "results"), ("atp", "completed"),
                         ("static", "completed"), ("static", "collisions")):
        tap.ok(totals.get((policy, name), 0) > 0,
               f"{policy}: the scenarios exercise {name} ({totals.get((policy, name), 0)})")
    sys.exit(tap.done())


main()
