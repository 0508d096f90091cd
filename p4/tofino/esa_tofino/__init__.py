# SPDX-License-Identifier: GPL-2.0
"""Control plane of the ESA Tofino program (p4/tofino/esa.p4).

description: the job and switch descriptions aggctl prints, plus the port
    map, read and checked (every refusal names its cause);
entries: the tables, default actions and multicast groups they become
    (plain data, no SDE needed);
backend: where a plan goes: printed as JSON, or installed through the
    SDE's BfRt gRPC client (imported only there);
uapi, program: the facts read from uapi/*.h and the P4 source, each
    defined once there.
"""
