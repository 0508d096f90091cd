# SPDX-License-Identifier: GPL-2.0
"""The program's counters folded into aggctl's records: per job and
switch-wide, named as enum esa_counter (uapi/esa_switch.h) is.

The program counts each event once, at index job (counters of one kind)
or job << ESA_CNT_SHIFT | id (the outcome counters), job 0 for frames of
no known job; the switch-wide total is the sum over jobs, as the XDP
switch's entry 0 is."""
from . import uapi

# counter instance -> the esa_counter it counts (index = job)
PER_JOB = {
    "pipe.EsaIngress.esa_rx": "rx",
    "pipe.EsaIngress.esa_forwarded": "forwarded",
    "pipe.EsaIngress.esa_spoof": "drop_spoof",
    "pipe.EsaIngress.esa_completed": "completed",
    "pipe.EsaIngress.esa_results": "results",
    "pipe.EsaIngress.esa_resends": "resends",
    "pipe.EsaIngress.esa_preemptions": "preemptions",
    "pipe.EsaIngress.esa_evictions": "evictions",
    "pipe.EsaIngress.esa_stranded": "stranded",
    "pipe.EsaEgress.esa_overflows": "overflows",
    "pipe.EsaEgress.esa_truncated": "drop_truncated",
}
# counter instances indexed job << shift | id (the one outcome of a frame)
INDEXED = ("pipe.EsaIngress.esa_outcome",)
# a frame the egress drops as truncated was an ingress collision
EGRESS_TRUNCATED = "pipe.EsaEgress.esa_truncated"
# register of amounts (index = job): the time stranded partials held their
# slot, in units of 2^time_shift ns
STRANDED_TIME = "pipe.EsaEgress.esa_stranded_time"
# registers -> the esa_counter they hold an amount of
AMOUNTS = {STRANDED_TIME: "stranded_us"}


def fold(raw, shift, time_shift):
    """{job: {name: count}} plus "all", from @raw {instance: {index: count}}
    (STRANDED_TIME: {job: time units}, reported in microseconds).

    A frame the egress drops as truncated was counted a collision by the
    ingress (it was on its way to the PS): moved, so that every frame still
    has exactly one outcome."""
    names = uapi.counter_names()
    out = {}

    def add(job, name, n):
        rec = out.setdefault(job, {v: 0 for v in names.values()})
        rec[name] += n

    for inst, name in PER_JOB.items():
        for job, n in raw.get(inst, {}).items():
            add(job, name, n)
            if inst == EGRESS_TRUNCATED:
                add(job, "collisions", -n)
    for inst in INDEXED:
        for index, n in raw.get(inst, {}).items():
            job, cid = index >> shift, index & ((1 << shift) - 1)
            if cid not in names:
                raise ValueError(f"{inst}[{index}]: no counter id {cid} in uapi")
            add(job, names[cid], n)
    for job, units in raw.get(STRANDED_TIME, {}).items():
        add(job, AMOUNTS[STRANDED_TIME], units * (1 << time_shift) // 1000)
    total = {v: 0 for v in names.values()}
    for rec in out.values():
        for k, v in rec.items():
            total[k] += v
    out["all"] = total
    return out
