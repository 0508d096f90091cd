#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Worker and PS ends of the real-veth data plane test (test_veth.sh).

  veth_peer.py ps PS_IP NSEQ NVAL FAN_IN JOB [answer W0_IP]
      print "ready" once listening, then receive NSEQ COMPLETE sums on
      PS_IP:47000, check each exactly;
      with "answer", send each sum back flagged RESULT to W0_IP:47000
      (the atp protocol: the switch multicasts it to the workers)
  veth_peer.py worker W MY_IP MY_PORT PS_IP NSEQ NVAL FAN_IN JOB
      for each sequence send worker W's values, wait for the RESULT
      (lockstep), check the sum exactly
  veth_peer.py script W MY_IP MY_PORT PS_IP NVAL FAN_IN JOB
      print "ready", then for each line on stdin "send SEQ INDEX" or
      "resend SEQ INDEX" send worker W's values of SEQ to aggregator
      INDEX (flagged RESEND), or "send2 SEQ SEQ2 INDEX" both sequences in
      one UDP GSO send (two frames the switch takes in one NAPI poll), and
      answer "sent"; at the end of input wait for a RESULT of every
      sequence sent and check each exactly

  --token HEX16 before the command: the job's token (Documentation/
      security.rst): every frame sent is wire version 2 with it after the
      values, and a frame taken without it is a failure

Prints one TAP-free line per failure and a last line "PASS ..." or
"FAIL ...". Values of worker w, sequence s, index i: value(w, s, i).
"""
import socket
import struct
import sys

ESA_UDP_PORT = 47000
F_RESEND, F_RESULT, F_COMPLETE = 1 << 0, 1 << 3, 1 << 6
SO_NO_CHECK = 11
UDP_SEGMENT = 103
HDR = struct.Struct("!BBBBHHIII")
TOKEN = 0       # --token: the job's; 0: none (wire version 1)


def pack(flags, fan_in, job, seq, idx, bitmap, vals):
    """A frame's UDP payload: header, values and the token trailer if any."""
    return (HDR.pack(2 if TOKEN else 1, flags, fan_in, 1, job, len(vals), seq,
                     idx, bitmap) + struct.pack("!%di" % len(vals), *vals) +
            (struct.pack("!Q", TOKEN) if TOKEN else b""))


def value(w, s, i):
    return ((w * 7919 + s * 104729 + i * 31) % 2000001) - 1000000


def expected(s, nval, fan_in):
    return [sum(value(w, s, i) for w in range(fan_in)) for i in range(nval)]


def parse(data):
    ver, flags, fan, prio, job, cnt, seq, idx, bm = HDR.unpack_from(data)
    vals = list(struct.unpack_from("!%di" % cnt, data, HDR.size))
    end = HDR.size + 4 * cnt
    tok = struct.unpack_from("!Q", data, end)[0] if ver == 2 and \
        len(data) >= end + 8 else 0
    if ver != (2 if TOKEN else 1) or tok != TOKEN:
        # not the job's: flags 0 fails every caller's check
        print("frame of version %d, token %#x: not the job's" % (ver, tok))
        return 0, fan, job, seq, bm, vals
    return flags, fan, job, seq, bm, vals


def ps(ip, nseq, nval, fan_in, job, answer=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)
    s.bind((ip, ESA_UDP_PORT))
    s.settimeout(20)
    print("ready", flush=True)
    seen, bad = set(), 0
    full = (1 << fan_in) - 1
    try:
        while len(seen) < nseq:
            data, _ = s.recvfrom(2048)
            flags, fan, j, seq, bm, vals = parse(data)
            if not flags & F_COMPLETE or j != job or bm != full:
                print("unexpected flags %#x job %d bitmap %#x" % (flags, j, bm))
                bad += 1
                continue
            if vals != expected(seq, nval, fan_in):
                print("seq %d: wrong sum" % seq)
                bad += 1
            seen.add(seq)
            if answer:
                s.sendto(pack(F_RESULT, fan_in, job, seq, seq % 4, full, vals),
                         (answer, ESA_UDP_PORT))
    except socket.timeout:
        pass
    ok = len(seen) == nseq and not bad
    print("%s ps: %d/%d COMPLETE sums exact, %d bad" %
          ("PASS" if ok else "FAIL", len(seen), nseq, bad))
    return 0 if ok else 1


def worker(w, ip, port, ps_ip, nseq, nval, fan_in, job):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_NO_CHECK, 1)
    s.bind((ip, port))
    s.settimeout(10)
    good = 0
    for seq in range(nseq):
        vals = [value(w, seq, i) for i in range(nval)]
        s.sendto(pack(0, fan_in, job, seq, seq % 4, 1 << w, vals),
                 (ps_ip, ESA_UDP_PORT))
        try:
            data, src = s.recvfrom(2048)
        except socket.timeout:
            print("worker %d: no RESULT for seq %d" % (w, seq))
            break
        flags, fan, j, rseq, bm, rvals = parse(data)
        if flags & F_RESULT and rseq == seq and src == (ps_ip, ESA_UDP_PORT) \
                and rvals == expected(seq, nval, fan_in):
            good += 1
        else:
            print("worker %d seq %d: bad RESULT flags %#x seq %d from %s" %
                  (w, seq, flags, rseq, src))
    ok = good == nseq
    print("%s worker %d: %d/%d RESULT sums exact" %
          ("PASS" if ok else "FAIL", w, good, nseq))
    return 0 if ok else 1


def script(w, ip, port, ps_ip, nval, fan_in, job):
    # checksummed (UDP GSO refuses SO_NO_CHECK); the switch writes 0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, port))
    print("ready", flush=True)
    sent = set()

    def packet(flags, seq, idx):
        vals = [value(w, seq, i) for i in range(nval)]
        return pack(flags, fan_in, job, seq, idx, 1 << w, vals)

    for line in sys.stdin:
        a = line.split()
        if a[0] == "send2":
            seqs, idx = (int(a[1]), int(a[2])), int(a[3])
            data = packet(0, seqs[0], idx) + packet(0, seqs[1], idx)
            s.setsockopt(socket.SOL_UDP, UDP_SEGMENT, len(data) // 2)
            s.sendto(data, (ps_ip, ESA_UDP_PORT))
            s.setsockopt(socket.SOL_UDP, UDP_SEGMENT, 0)
        else:
            seqs, idx = (int(a[1]),), int(a[2])
            s.sendto(packet(F_RESEND if a[0] == "resend" else 0, seqs[0], idx),
                     (ps_ip, ESA_UDP_PORT))
        sent.update(seqs)
        print("sent", flush=True)
    s.settimeout(5)
    good, bad = set(), 0
    try:
        while len(good) < len(sent):
            data, src = s.recvfrom(2048)
            flags, fan, j, rseq, bm, rvals = parse(data)
            if flags & F_RESULT and flags & F_RESEND:
                continue        # a pull: every packet here is sent once
            if flags & F_RESULT and rseq in sent and \
                    rvals == expected(rseq, nval, fan_in):
                good.add(rseq)
            else:
                print("worker %d: bad RESULT flags %#x seq %d" % (w, flags, rseq))
                bad += 1
    except socket.timeout:
        pass
    ok = good == sent and not bad
    print("%s worker %d: RESULT sums exact for sequences %s of %s" %
          ("PASS" if ok else "FAIL", w, sorted(good), sorted(sent)))
    return 0 if ok else 1


if __name__ == "__main__":
    a = sys.argv
    if len(a) > 2 and a[1] == "--token":
        TOKEN = int(a[2], 16)
        a = a[:1] + a[3:]
    if len(a) == 7 and a[1] == "ps":
        sys.exit(ps(a[2], *map(int, a[3:])))
    if len(a) == 9 and a[1] == "ps" and a[7] == "answer":
        sys.exit(ps(a[2], *map(int, a[3:7]), answer=a[8]))
    if len(a) == 10 and a[1] == "worker":
        sys.exit(worker(int(a[2]), a[3], int(a[4]), a[5], *map(int, a[6:])))
    if len(a) == 9 and a[1] == "script":
        sys.exit(script(int(a[2]), a[3], int(a[4]), a[5], *map(int, a[6:])))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
