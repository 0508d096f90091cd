#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Every flag (enum esa_flags) and every counter, drop reasons included
(enum esa_counter), of the wire protocol is handled by the Tofino program
or listed, with its reason, in the program's subset
(esa_tofino/subset.py, NOT_IN_PROGRAM). A name added to uapi/ later
fails here until the program or that list covers it.

Handled means: used by the program's controls (not only defined), or, for a
counter the program counts in an instance (or an amount in a register) of
its own, that is declared and esa_tofino/stats.py reads it under that
counter's name."""
import os
import re
import sys

from tofino_env import tap
from esa_tofino import program, stats, subset, uapi

DEFINING = ("esa_wire.p4", "esa_counters.p4")


def used_names(prog):
    """Words used by the program's controls, i.e. outside the files that
    define the constants."""
    words = set()
    for path in prog.files:
        if os.path.basename(path) in DEFINING:
            continue
        with open(path) as f:
            text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
        words |= set(re.findall(r"\bESA_[A-Z0-9_]+\b", text))
    return words


def main():
    prog = program.load()
    left_out = set(subset.NOT_IN_PROGRAM)
    reasonless = sorted(n for n, why in subset.NOT_IN_PROGRAM.items() if not why.strip())
    tap.ok(not reasonless, "every name left out of the program has its reason",
           ", ".join(reasonless))
    used = used_names(prog)
    source = prog.source()
    counted = {name for inst, name in list(stats.PER_JOB.items()) + list(stats.AMOUNTS.items())
               if re.search(r"\b%s\b" % re.escape(inst.split(".")[-1]), source)}

    flags = [k for k, _ in uapi.wire().enum("esa_flags")]
    for name in flags:
        where = "used" if name in used else "left out (subset.py)" if name in left_out else None
        tap.ok(where is not None, f"flag {name}: {where or 'neither used nor left out'}")
    names = uapi.counter_names()
    for key, value in uapi.switch().enum("esa_counter"):
        if key.startswith("__"):
            continue
        if key in used:
            where = "used"
        elif names[value] in counted:
            where = f"counted by its own instance ({names[value]})"
        elif key in left_out:
            where = "left out (subset.py)"
        else:
            where = None
        kind = "drop reason" if "_DROP_" in key else "counter"
        tap.ok(where is not None, f"{kind} {key}: {where or 'neither used nor left out'}")
    both = sorted(n for n in left_out if n in used)
    tap.ok(not both, "nothing is both used and listed as missing", ", ".join(both))
    known = set(flags) | {k for k, _ in uapi.switch().enum("esa_counter")}
    stale = sorted(left_out - known)
    tap.ok(not stale, "the subset list names only flags and counters of uapi/",
           ", ".join(stale))
    sys.exit(tap.done())


main()
