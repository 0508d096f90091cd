#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The attacker of test_veth_spoof.sh: raw frames on IFACE claiming another
host's IPv4 address, and a capture of what reaches IFACE.

  spoof.py arp IFACE CLAIMED_IP
      a gratuitous ARP reply: "CLAIMED_IP is at my MAC"
  spoof.py ipv4 IFACE CLAIMED_IP DST_IP
      an ordinary UDP datagram (port 9) from CLAIMED_IP
  spoof.py data IFACE CLAIMED_IP SPORT PS_IP JOB FAN_IN WORKER SEQ NVAL
      an ESA data packet of WORKER for (JOB, SEQ), every value 1000000
  spoof.py result IFACE PS_IP DST_IP JOB FAN_IN SEQ NVAL
      an ESA RESULT of (JOB, SEQ) from the PS's address, every value 7
  spoof.py capture IFACE SECONDS JOB [COUNT]
      print how many ESA frames of JOB arrived on IFACE in SECONDS, or
      once COUNT of them did
  spoof.py flood IFACE COUNT DST_IP
      COUNT ordinary UDP datagrams to DST_IP, each from its own source
      address (198.19.0.0/16) and MAC: what fills a switch's learning tables
  spoof.py fragments IFACE SECONDS [COUNT]
      print the IPv4 fragments that arrived on IFACE in SECONDS, or
      until COUNT of them did, a line "fragment from ADDR" each

Every frame goes to the broadcast MAC, so a switch that took it would
flood or aggregate it; the frames carry the attacker's own source MAC.
Options before the command, for the frames it sends:
  --mac MAC            this source MAC instead (03:00:00:00:00:01: a group
                       address)
  --tags TPID:VID,...  802.1ad/802.1Q tags, outermost first (8100:0: a
                       priority tag, which a host takes as untagged)
  --frag later         send the IPv4 datagram as a later fragment (offset
                       8 bytes): its bytes are the UDP header and payload
  --token HEX16        ESA frames of wire version 2 with this token (a
                       guess: the attacker does not know the job's)
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import esa_wire as wire  # noqa: E402  (uapi/esa_wire.h's facts)

ESA_UDP_PORT = wire.UDP_PORT
F_RESULT = wire.F_RESULT
BCAST = b"\xff" * 6
ETH_P_ALL, ETH_P_IP, ETH_P_ARP = 0x0003, 0x0800, 0x0806
PACKET_OUTGOING = 4
ESA_AT = 14 + 20 + 8            # the ESA header in an untagged IPv4 frame



def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


OPTS = {"mac": None, "tags": [], "frag": 0, "token": 0}


def ipv4_udp(src, dst, sport, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, OPTS["frag"],
                     64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + udp


def esa(flags, fan, job, seq, bitmap, vals):
    return wire.pack(vals, token=OPTS["token"], flags=flags, fan_in=fan,
                     priority=1, job_id=job, seq=seq, agg_index=seq % 4,
                     worker_bitmap=bitmap)


def send(iface, proto, l3):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    mac = OPTS["mac"] or s.getsockname()[4]
    tags = b"".join(struct.pack("!HH", tpid, vid) for tpid, vid in OPTS["tags"])
    s.send(BCAST + mac + tags + struct.pack("!H", proto) + l3)
    return mac


def arrivals(iface, seconds, match, count):
    """The frames arriving on @iface (not those it sends) that @match
    takes, for @seconds or until @count (if not None) of them came: a
    capture that knows what it waits for ends when that arrived, however
    slowly a loaded machine starts the sender."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    end = time.time() + float(seconds)
    print("ready", flush=True)
    while time.time() < end and (count is None or count > 0):
        s.settimeout(max(0.01, end - time.time()))
        try:
            f, addr = s.recvfrom(4096)
        except socket.timeout:
            return
        if addr[2] != PACKET_OUTGOING and match(f):
            yield f
            if count is not None:
                count -= 1


def is_esa_of(f, job):
    """Frame @f is an ESA frame (untagged IPv4/UDP) of job @job."""
    return (len(f) >= ESA_AT + wire.HDR_LEN and
            struct.unpack_from("!H", f, 12)[0] == ETH_P_IP and f[23] == 17 and
            (ESA_UDP_PORT in struct.unpack_from("!HH", f, 34) or
             f[ESA_AT] == wire.VERSION) and
            struct.unpack_from("!H", f, ESA_AT + wire.OFFSET["job_id"])[0] == job)


def is_fragment(f):
    """Frame @f is an IPv4 fragment (offset or more-fragments set)."""
    return (len(f) >= 34 and struct.unpack_from("!H", f, 12)[0] == ETH_P_IP and
            struct.unpack_from("!H", f, 20)[0] & 0x3fff != 0)


def options(a):
    """Take the options off argv @a (a[0] is the program)."""
    while len(a) > 2 and a[1].startswith("--"):
        if a[1] == "--mac":
            OPTS["mac"] = bytes(int(x, 16) for x in a[2].split(":"))
        elif a[1] == "--tags":
            OPTS["tags"] = [tuple(int(x, 16) if i == 0 else int(x)
                                  for i, x in enumerate(t.split(":")))
                            for t in a[2].split(",")]
        elif a[1] == "--token":
            OPTS["token"] = int(a[2], 16)
        elif a[1] == "--frag" and a[2] == "later":
            OPTS["frag"] = 1    # offset 1 (8 bytes), no MF
        else:
            break
        a = a[:1] + a[3:]
    return a


def main(a):
    a = options(a)
    if len(a) == 4 and a[1] == "arp":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((a[2], 0))
        mac = OPTS["mac"] or s.getsockname()[4]
        ip = socket.inet_aton(a[3])
        arp = struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 2) + mac + ip + BCAST + ip
        send(a[2], ETH_P_ARP, arp)
    elif len(a) == 5 and a[1] == "ipv4":
        send(a[2], ETH_P_IP, ipv4_udp(a[3], a[4], 9, 9, b"spoof"))
    elif len(a) == 11 and a[1] == "data":
        job, fan, w, seq, n = (int(x) for x in a[6:11])
        send(a[2], ETH_P_IP, ipv4_udp(a[3], a[5], int(a[4]), ESA_UDP_PORT,
                                      esa(0, fan, job, seq, 1 << w, [1000000] * n)))
    elif len(a) == 9 and a[1] == "result":
        job, fan, seq, n = (int(x) for x in a[5:9])
        send(a[2], ETH_P_IP, ipv4_udp(a[3], a[4], ESA_UDP_PORT, ESA_UDP_PORT,
                                      esa(F_RESULT, fan, job, seq, (1 << fan) - 1, [7] * n)))
    elif len(a) in (5, 6) and a[1] == "capture":
        job, count = int(a[4]), int(a[5]) if len(a) == 6 else None
        seen = sum(1 for _ in arrivals(a[2], a[3], lambda f: is_esa_of(f, job), count))
        print("captured %d frames of job %d" % (seen, job))
    elif len(a) == 5 and a[1] == "flood":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((a[2], 0))
        for i in range(int(a[3])):
            src = "198.19.%d.%d" % (i >> 8 & 255, i & 255)
            mac = bytes([2, 0x19, 0, 0, i >> 8 & 255, i & 255])
            s.send(BCAST + mac + struct.pack("!H", ETH_P_IP) +
                   ipv4_udp(src, a[4], 9, 9, b"flood"))
    elif len(a) in (4, 5) and a[1] == "fragments":
        for f in arrivals(a[2], a[3], is_fragment, int(a[4]) if len(a) == 5 else None):
            print("fragment from %s" % socket.inet_ntoa(f[26:30]), flush=True)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
