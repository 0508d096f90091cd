#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""selftests/lib/esa_wire.py, the Python tests' wire format, against the C
compiler's reading of uapi/esa_wire.h: every constant and flag it exports
has the header's value, and a header it packs has the bytes of a struct
esa_hdr that C fills with the same fields (layout and byte order). Then
its refusals: an unknown field, a payload shorter than its value_count."""
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "selftests" / "lib"))
import esa_wire as wire  # noqa: E402
from c_output import c_output  # noqa: E402
from tap import Tap  # noqa: E402

# One header of every field set to a distinct value, as C fills it.
SAMPLE = dict(version=1, flags=0x48, fan_in=3, priority=9, job_id=0x0102,
              value_count=2, seq=0x03040506, agg_index=0x0708090a,
              worker_bitmap=0x0b0c0d0e)
SAMPLE_VALUES = [-1, 0x11223344]
SWAP = {"job_id": "htons", "value_count": "htons", "seq": "htonl",
        "agg_index": "htonl", "worker_bitmap": "htonl"}


def c_facts():
    """{name: int} of the constants and flags, and "bytes" -> the sample
    header and values as C lays them out, from gcc."""
    consts = ["ESA_UDP_PORT", "ESA_WIRE_VERSION", "ESA_HDR_LEN", "ESA_MAX_VALUES",
              "ESA_WIRE_VERSION_TOKEN", "ESA_TOKEN_LEN"]
    consts += ["ESA_" + f for f in wire.FLAGS]
    lines = ["#include <stdio.h>", "#include <arpa/inet.h>",
             '#include "esa_wire.h"', "int main(void) {",
             "struct { struct esa_hdr h; __be32 v[2]; } __attribute__((packed)) p;",
             "unsigned char *b = (unsigned char *)&p;"]
    for c in consts:
        lines.append('printf("%s %%lld\\n", (long long)(%s));' % (c, c))
    for f, v in SAMPLE.items():
        lines.append("p.h.%s = %s(%d);" % (f, SWAP.get(f, ""), v))
    for i, v in enumerate(SAMPLE_VALUES):
        lines.append("p.v[%d] = htonl((__u32)%d);" % (i, v))
    lines.append('printf("bytes ");')
    lines.append('for (size_t i = 0; i < sizeof(p); i++) printf("%02x", b[i]);')
    lines.append('printf("\\n"); return 0; }')
    out = c_output(lines, [ROOT / "uapi"], ["-Wall"])
    facts = dict(line.split(" ", 1) for line in out.splitlines())
    return {k: (v if k == "bytes" else int(v)) for k, v in facts.items()}


def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return str(e)
    return None


def main():
    t = Tap()
    c = c_facts()
    mine = {"ESA_UDP_PORT": wire.UDP_PORT, "ESA_WIRE_VERSION": wire.VERSION,
            "ESA_HDR_LEN": wire.HDR_LEN, "ESA_MAX_VALUES": wire.MAX_VALUES,
            "ESA_WIRE_VERSION_TOKEN": wire.VERSION_TOKEN,
            "ESA_TOKEN_LEN": wire.TOKEN_LEN}
    mine.update({"ESA_" + f: getattr(wire, f) for f in wire.FLAGS})
    bad = ["%s: %s, C %s" % (k, v, c.get(k)) for k, v in mine.items()
           if c.get(k) != v]
    t.ok(not bad, "%d constants and flags equal the C header's" % len(mine),
         "\n".join(bad))
    named = set(re.findall(r"\bESA_(F_\w+)\s*=", (ROOT / "uapi" / "esa_wire.h").read_text()))
    t.ok(named == set(wire.FLAGS),
         "every ESA_F_ flag of the header is exported (%d)" % len(named),
         "header %s, module %s" % (sorted(named), sorted(wire.FLAGS)))
    packed = wire.pack(SAMPLE_VALUES, **SAMPLE).hex()
    t.ok(packed == c["bytes"], "pack() lays out a header and values as C does",
         "python %s\nC      %s" % (packed, c["bytes"]))
    hdr, vals = wire.unpack(bytes.fromhex(c["bytes"]))
    t.ok(hdr == dict(SAMPLE, token=0) and vals == SAMPLE_VALUES,
         "unpack() reads C's bytes back", "%s %s" % (hdr, vals))
    defaults, _ = wire.unpack(wire.pack([5, 6, 7]))
    t.ok(defaults["version"] == wire.VERSION and defaults["value_count"] == 3,
         "pack() fills version and value_count when not given", defaults)
    tok = 0x0123456789abcdef
    frame = wire.pack([5], token=tok, job_id=7)
    hdr, vals = wire.unpack(frame)
    t.ok(frame[0] == wire.VERSION_TOKEN and
         frame[-wire.TOKEN_LEN:].hex() == "0123456789abcdef" and
         hdr["token"] == tok and vals == [5],
         "a token makes version %d with the trailer after the values" %
         wire.VERSION_TOKEN, "%s %s %s" % (frame.hex(), hdr, vals))
    why = raises(ValueError, wire.unpack, frame[:-1])
    t.ok(why and "needs 32 bytes, it has 31" in why,
         "a version-2 payload cut inside its token is refused", why)
    why = raises(TypeError, wire.pack, [1], job=4)
    t.ok(why and "no field job in struct esa_hdr" in why,
         "an unknown field is refused by name", why)
    why = raises(ValueError, wire.unpack, wire.pack([1, 2])[:-1])
    t.ok(why and "value_count 2 needs 28 bytes, the payload has 27" in why,
         "a payload shorter than its value_count is refused", why)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
