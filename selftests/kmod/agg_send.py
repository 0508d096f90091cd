#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send ESA aggregation packets one by one (test_occupancy.sh).

  agg_send.py SRC_IP SRC_PORT DST_IP JOB FAN_IN W PRIO SEQ@IDX...
      worker W's data packet (4 values) of each SEQ at aggregator IDX
  agg_send.py SRC_IP SRC_PORT DST_IP JOB FAN_IN result PRIO SEQ@IDX...
      the PS's RESULT of each SEQ (all fan_in bits)

Each packet goes to DST_IP:ESA_UDP_PORT from SRC_IP:SRC_PORT, UDP checksum off,
20 ms apart so the switch sees them in order.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import esa_wire as wire  # noqa: E402  (uapi/esa_wire.h's facts)

SO_NO_CHECK = 11
NVAL = 4


def main(a):
    if len(a) < 9:
        print(__doc__, file=sys.stderr)
        return 2
    src, sport, dst = a[1], int(a[2]), a[3]
    job, fan_in, who, prio = int(a[4]), int(a[5]), a[6], int(a[7])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)
    s.bind((src, sport))
    for spec in a[8:]:
        seq, idx = (int(x) for x in spec.split("@"))
        if who == "result":
            flags, bitmap = wire.F_RESULT, (1 << fan_in) - 1
        else:
            flags, bitmap = 0, 1 << int(who)
        s.sendto(wire.pack(range(seq, seq + NVAL), flags=flags, fan_in=fan_in,
                           priority=prio, job_id=job, seq=seq, agg_index=idx,
                           worker_bitmap=bitmap),
                 (dst, wire.UDP_PORT))
        time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
