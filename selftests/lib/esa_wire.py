# SPDX-License-Identifier: GPL-2.0
"""The ESA wire format for the Python tests, read from uapi/esa_wire.h (its
one definition) with the header reader of p4/tofino/esa_tofino/uapi.py:
the UDP port, the version, the flags and struct esa_hdr's layout. A test
packs and parses headers here instead of copying the constants.

    sys.path.insert(0, os.path.join(ROOT, "selftests", "lib"))
    import esa_wire as wire
    wire.pack(values, flags=wire.F_RESULT, fan_in=2, job_id=7, seq=1)
    hdr, values = wire.unpack(frame_payload)

Every multi-byte field and value is in network byte order; values are
signed 32-bit.
"""
import os
import struct
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "p4", "tofino"))
from esa_tofino import uapi  # noqa: E402

_HEADER = uapi.wire()
_FORMAT = {8: "B", 16: "H", 32: "I", 64: "Q"}

UDP_PORT = _HEADER.defines["ESA_UDP_PORT"]
VERSION = _HEADER.defines["ESA_WIRE_VERSION"]
HDR_LEN = _HEADER.defines["ESA_HDR_LEN"]
MAX_VALUES = _HEADER.defines["ESA_MAX_VALUES"]
VERSION_TOKEN = _HEADER.defines["ESA_WIRE_VERSION_TOKEN"]
TOKEN_LEN = _HEADER.defines["ESA_TOKEN_LEN"]
TOKEN = struct.Struct("!Q")
if TOKEN.size != TOKEN_LEN:
    raise ValueError("uapi/esa_wire.h: ESA_TOKEN_LEN is %d, not 8" % TOKEN_LEN)

# enum esa_flags as F_RESEND, F_RESULT, ... (ESA_F_RESULT -> F_RESULT)
FLAGS = {k[len("ESA_"):]: v for k, v in _HEADER.enum("esa_flags")
         if not k.startswith("__")}
globals().update(FLAGS)

FIELDS = tuple(name for name, _, _ in _HEADER.struct("esa_hdr"))
OFFSET = {name: off for name, _, off in _HEADER.struct("esa_hdr")}
HDR = struct.Struct("!" + "".join(_FORMAT[bits] for _, bits, _ in
                                  _HEADER.struct("esa_hdr")))
if HDR.size != HDR_LEN:
    raise ValueError("uapi/esa_wire.h: struct esa_hdr reads as %d bytes, "
                     "ESA_HDR_LEN is %d" % (HDR.size, HDR_LEN))


def pack(values, token=0, **fields):
    """struct esa_hdr followed by @values and, for a job's @token (not 0),
    the token trailer. Fields not given are 0, except version (VERSION, or
    VERSION_TOKEN with a token) and value_count (len(values)); an unknown
    field name is a TypeError naming it."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise TypeError("no field %s in struct esa_hdr (fields: %s)" %
                        (", ".join(sorted(unknown)), ", ".join(FIELDS)))
    hdr = dict.fromkeys(FIELDS, 0)
    hdr.update(version=VERSION_TOKEN if token else VERSION,
               value_count=len(values))
    hdr.update(fields)
    return (HDR.pack(*(hdr[f] for f in FIELDS)) +
            struct.pack("!%di" % len(values), *values) +
            (TOKEN.pack(token) if token else b""))


def unpack(data):
    """({field: value} of the header, [values]) of an ESA payload; the
    header's "token" is the trailer's of a VERSION_TOKEN payload, else 0.
    A payload shorter than its value_count (and trailer) says is a
    ValueError."""
    if len(data) < HDR.size:
        raise ValueError("%d bytes: shorter than the %d-byte header" %
                         (len(data), HDR.size))
    hdr = dict(zip(FIELDS, HDR.unpack_from(data)))
    n = hdr["value_count"]
    if len(data) < HDR.size + 4 * n:
        raise ValueError("value_count %d needs %d bytes, the payload has %d" %
                         (n, HDR.size + 4 * n, len(data)))
    hdr["token"] = 0
    if hdr["version"] == VERSION_TOKEN:
        if len(data) < HDR.size + 4 * n + TOKEN.size:
            raise ValueError("a version-%d payload of %d values needs %d "
                             "bytes, it has %d" % (VERSION_TOKEN, n,
                                                   HDR.size + 4 * n +
                                                   TOKEN.size, len(data)))
        hdr["token"] = TOKEN.unpack_from(data, HDR.size + 4 * n)[0]
    return hdr, list(struct.unpack_from("!%di" % n, data, HDR.size))
