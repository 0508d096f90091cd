#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The P4 program's wire header and constants equal uapi's: struct esa_hdr
against header esa_h (field order, widths, offsets), every #define of
uapi/esa_wire.h and every flag against esa_wire.p4's constants, enum
esa_counter against esa_counters.p4, enum esa_policy against esa_types.p4.
Both sides are parsed from their sources. The comparison is also run on a
mutated copy of each side, which it must reject."""
import sys
from tofino_env import tap
from esa_tofino import program, uapi


def layout_diff(c_fields, p4_fields):
    """Differences between two [(name, bits, offset)] lists, as text."""
    out = []
    for i in range(max(len(c_fields), len(p4_fields))):
        c = c_fields[i] if i < len(c_fields) else None
        p = p4_fields[i] if i < len(p4_fields) else None
        if c != p:
            out.append(f"field {i}: uapi {c} vs p4 {p}")
    return "\n".join(out)


def const_diff(want, have, widths):
    """@want {name: value} against @have; a value must also fit the P4 width."""
    out = []
    for name, v in want.items():
        if name not in have:
            out.append(f"{name}: not in the P4 program")
        elif have[name] != v:
            out.append(f"{name}: uapi {v} vs p4 {have[name]}")
        elif widths.get(name) and v >= 1 << widths[name]:
            out.append(f"{name}: {v} does not fit bit<{widths[name]}>")
    return "\n".join(out)


def main():
    wire, sw, prog = uapi.wire(), uapi.switch(), program.load()
    c_hdr = wire.struct("esa_hdr")
    p4_hdr = prog.headers.get("esa_h", [])
    d = layout_diff(c_hdr, p4_hdr)
    tap.ok(not d, "header esa_h has struct esa_hdr's fields, widths and offsets", d)
    size = sum(bits for _, bits, _ in p4_hdr) // 8
    tap.ok(size == wire.defines["ESA_HDR_LEN"] == prog.const("ESA_HDR_LEN"),
           f"header esa_h is ESA_HDR_LEN ({wire.defines['ESA_HDR_LEN']}) bytes",
           f"p4 {size}, uapi {wire.defines['ESA_HDR_LEN']}")

    defines = {k: v for k, v in wire.defines.items() if k.startswith("ESA_")}
    d = const_diff(defines, prog.consts, prog.const_widths)
    tap.ok(not d, f"the {len(defines)} constants of uapi/esa_wire.h", d)
    flags = dict(wire.enum("esa_flags"))
    d = const_diff(flags, prog.consts, prog.const_widths)
    tap.ok(not d, f"the {len(flags)} flags of enum esa_flags", d)
    counters = {k: v for k, v in sw.enum("esa_counter") if not k.startswith("__")}
    d = const_diff(counters, prog.consts, prog.const_widths)
    tap.ok(not d, f"the {len(counters)} counter ids of enum esa_counter", d)
    top = max(counters.values())
    tap.ok(top < 1 << prog.const("ESA_CNT_SHIFT"),
           "every counter id fits the ESA_CNT_SHIFT bits of a counter index",
           f"largest id {top}, shift {prog.const('ESA_CNT_SHIFT')}")
    jobs = (wire.defines["ESA_MAX_JOB_ID"] + 1) << prog.const("ESA_CNT_SHIFT")
    tap.ok(prog.const("ESA_CNT_ENTRIES") >= jobs,
           "ESA_CNT_ENTRIES holds every job's counters",
           f"{prog.const('ESA_CNT_ENTRIES')} < {jobs}")
    policies = {k: v for k, v in sw.enum("esa_policy") if not k.startswith("__")}
    d = const_diff(policies, prog.consts, prog.const_widths)
    tap.ok(not d, f"the {len(policies)} policies of enum esa_policy", d)
    vals = prog.headers.get("esa_values_h", [])
    tap.ok(len(vals) == prog.values_per_packet and all(b == 32 for _, b, _ in vals),
           f"header esa_values_h holds ESA_TOFINO_VALUES ({prog.values_per_packet}) int32",
           f"{len(vals)} fields: {vals}")
    tap.ok(1 <= prog.values_per_packet <= wire.defines["ESA_MAX_VALUES"],
           "ESA_TOFINO_VALUES is a value_count the wire protocol allows")
    tap.ok(prog.slots <= sw.defines["ESA_MAX_AGGREGATORS"] and
           1 << (prog.slots - 1).bit_length() == prog.slots,
           "ESA_TOFINO_SLOTS is a power of two within ESA_MAX_AGGREGATORS")

    bridge = prog.headers.get("esa_bridge_h", [])
    bits = sum(b for _, b, _ in bridge)
    tap.ok(bridge and bits % 8 == 0 and bits // 8 == prog.const("ESA_EG_LEN_EXTRA"),
           "the bridge header is whole bytes, ESA_EG_LEN_EXTRA of them",
           f"{bits} bits, ESA_EG_LEN_EXTRA {prog.consts.get('ESA_EG_LEN_EXTRA')}")
    resub = sum(b for _, b, _ in prog.headers.get("esa_resubmit_h", []))
    tap.ok(resub == 64, "the resubmit header is Tofino 1's 64 bits", f"{resub} bits")

    # The comparison itself rejects what it must.
    swapped = [c_hdr[1], c_hdr[0]] + c_hdr[2:]
    tap.ok(layout_diff(swapped, p4_hdr) != "", "a swapped field order is caught")
    narrowed = c_hdr[:4] + [(c_hdr[4][0], 8, c_hdr[4][2])] + c_hdr[5:]
    tap.ok(layout_diff(narrowed, p4_hdr) != "", "a narrowed field is caught")
    moved = dict(flags, ESA_F_PARTIAL=0x100)
    tap.ok(const_diff(moved, prog.consts, prog.const_widths) != "",
           "a flag of another value is caught")
    tap.ok(const_diff({"ESA_F_NEW": 0x100}, prog.consts, prog.const_widths) != "",
           "a flag missing from the P4 program is caught")
    sys.exit(tap.done())


main()
