# SPDX-License-Identifier: GPL-2.0
"""The part of the wire protocol the Tofino program leaves out: each flag
and counter of uapi/ that the program neither produces nor handles, with
the reason. selftests/tofino/test_coverage.py fails on a flag or counter
that is neither used by the program nor listed here, and on a name listed
here that the program uses or that uapi/ does not define;
Documentation/tofino.rst shows this list."""

NOT_IN_PROGRAM = {
    "ESA_CNT_EARLY_PARTIALS":
        "the program keeps no gone records, so it never sends a partial early",
    "ESA_CNT_DROP_BUSY":
        "the pipeline is the lock: no frame waits for an aggregator, so none "
        "is dropped for one held too long",
    "ESA_CNT_DROP_TOKEN":
        "the program keeps no job tokens: its jobs are tokenless and it "
        "takes only wire version 1",
    "ESA_CNT_DROP_MODE":
        "the program has per-host ports only: no one-armed port, no frame "
        "for the other mode",
    "ESA_CNT_DROP_NEXTHOP":
        "the program has per-host ports only: it sends nothing by the "
        "kernel's routing",
}
