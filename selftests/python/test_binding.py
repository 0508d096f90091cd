#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The Python binding of libesa (tools/python/esa) against the library.

- libesa.so: its soname, and it exports exactly the ESA_API functions of
  esa.h, every one of which the binding binds;
- every ctypes structure has the C compiler's size and field offsets;
- every public call that can fail raises esa.Error carrying the errno and
  the library's own message (esa_last_error() read right after the same
  call made directly), for each of its error paths;
- sums over loopback with a host-only PS: int32 exact, float32 within the
  fixed-point bound, from threads (a call holding the GIL would deadlock
  the two workers waiting for each other).
Prints TAP.
"""
import ctypes
import errno
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools" / "python"), str(ROOT / "selftests" / "lib")]
from c_output import c_output  # noqa: E402
from tap import Tap  # noqa: E402

t = Tap()
try:
    import esa
except ImportError as e:
    t.ok(False, "import esa from the source tree", e)
    sys.exit(t.done())
import numpy as np  # noqa: E402

LIB = ROOT / "build" / "libesa.so"
HEADER = ROOT / "tools" / "lib" / "esa.h"
t.ok(pathlib.Path(esa.library_path) == LIB,
     "esa loads the build tree's library (%s)" % esa.library_path)

# ---------------------------------------------------------------- exports
api = set(re.findall(r"^ESA_API[^(]*?\b(esa_\w+)\(", HEADER.read_text(), re.M))
nm = subprocess.run(["nm", "-D", "--defined-only", str(LIB)],
                    capture_output=True, text=True, check=True).stdout
exported = {line.split()[-1] for line in nm.splitlines()
            if line.split()[1] in "TtWw"}
soname = subprocess.run(["readelf", "-d", str(LIB)], capture_output=True,
                        text=True, check=True).stdout
t.ok(len(api) >= 14 and exported == api,
     "libesa.so exports exactly the %d ESA_API functions of esa.h" % len(api),
     "only exported: %s; only in esa.h: %s" % (sorted(exported - api),
                                               sorted(api - exported)))
t.ok(set(esa.BOUND) == api, "the binding binds every one of them",
     "unbound: %s" % sorted(api - set(esa.BOUND)))
m = re.search(r"soname: \[(\S+)\]", soname)
t.ok(m and os.path.realpath(LIB).endswith(m.group(1)),
     "libesa.so has a soname (%s) naming its file" % (m and m.group(1)))

# ----------------------------------------------------------------- layout
def c_layout():
    """sizeof and offsetof of every field the binding declares, from gcc."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "esa.h"',
             "int main(void) {"]
    for cname, st in esa.STRUCTS.items():
        lines.append('printf("%s|%%zu\\n", sizeof(%s));' % (cname, cname))
        for f, _ in st._fields_:
            lines.append('printf("%s.%s|%%zu|%%zu\\n", offsetof(%s, %s), '
                         'sizeof(((%s *)0)->%s));'
                         % (cname, f, cname, f, cname, f))
    lines.append('printf("ESA_MAX_WORKERS|%d\\n", ESA_MAX_WORKERS);')
    lines.append('printf("ESA_MAX_SHARDS|%d\\n", ESA_MAX_SHARDS);')
    lines.append("return 0; }")
    return c_output(lines, [ROOT / "tools" / "lib", ROOT / "uapi"]).split("\n")


c = {}
for line in c_layout():
    if line:
        k, *v = line.split("|")
        c[k] = [int(x) for x in v]
bad = []
for cname, st in esa.STRUCTS.items():
    if c.get(cname) != [ctypes.sizeof(st)]:
        bad.append("%s: size %d, C %s" % (cname, ctypes.sizeof(st), c.get(cname)))
    for f, _ in st._fields_:
        d = getattr(st, f)
        if c.get("%s.%s" % (cname, f)) != [d.offset, d.size]:
            bad.append("%s.%s: offset/size %d/%d, C %s" % (
                cname, f, d.offset, d.size, c.get("%s.%s" % (cname, f))))
t.ok(not bad, "%d structures: sizes and field offsets equal C's"
     % len(esa.STRUCTS), "\n".join(bad))
t.ok(c.get("ESA_MAX_WORKERS") == [esa.MAX_WORKERS],
     "MAX_WORKERS is ESA_MAX_WORKERS (%s)" % c.get("ESA_MAX_WORKERS"))
t.ok(c.get("ESA_MAX_SHARDS") == [esa.MAX_SHARDS],
     "MAX_SHARDS is ESA_MAX_SHARDS (%s)" % c.get("ESA_MAX_SHARDS"))

# ------------------------------------------------------------ error paths
raw_error = esa._lib.esa_last_error        # the library, not the binding


def raises(desc, errno_, fragment, fn, *args, **kw):
    """fn(...) raises esa.Error with errno_ and the library's message,
    which contains fragment."""
    try:
        fn(*args, **kw)
    except esa.Error as e:
        lib_msg = raw_error().decode()
        good = (e.errno == errno_ and fragment in e.strerror and
                e.strerror.endswith(lib_msg))
        return t.ok(good, "%s: %s" % (desc, e.strerror),
                    "errno %s (want %s); library says %r" %
                    (e.errno, errno_, lib_msg))
    except Exception as e:  # noqa: BLE001: reported as the failure
        return t.ok(False, desc, "raised %r instead of esa.Error" % e)
    return t.ok(False, desc, "no exception")


LO = "127.0.0.1"
base = 40000 + os.getpid() % 10000       # ports of this run
ok_cfg = dict(job_id=1, worker_id=0, fan_in=2, ps=LO + ":%d" % base,
              bind=LO + ":%d" % (base + 1), agg_slots=64)


def cfg(**kw):
    d = dict(ok_cfg)
    d.update(kw)
    return d


raises("parse_addr, bad address", errno.EINVAL, "bad IPv4 address",
       esa.parse_addr, "10.0.0.256")
raises("parse_addr, bad port", errno.EINVAL, "bad port",
       esa.parse_addr, "10.0.0.1:0")
raises("Endpoint, job id 0", errno.EINVAL, "job id 0 out of range",
       esa.Endpoint, **cfg(job_id=0))
raises("Endpoint, fan-in 0", errno.EINVAL, "fan-in 0 out of range",
       esa.Endpoint, **cfg(fan_in=0))
raises("Endpoint, worker id not below fan-in", errno.EINVAL,
       "worker id 2 not below fan-in 2", esa.Endpoint, **cfg(worker_id=2))
raises("Endpoint, no PS address", errno.EINVAL, "no parameter server",
       esa.Endpoint, **cfg(ps="0.0.0.0"))
raises("Endpoint, no aggregator slots", errno.EINVAL, "aggregator slots 0",
       esa.Endpoint, **cfg(agg_slots=0))
raises("Endpoint, values per packet", errno.EINVAL, "values per packet",
       esa.Endpoint, **cfg(values_per_packet=100000))
raises("Endpoint, scale out of range", errno.EINVAL, "float scale",
       esa.Endpoint, **cfg(scale_log2=100))
raises("Endpoint, bad bind address", errno.EINVAL, "bad IPv4",
       esa.Endpoint, **cfg(bind="nohost"))
raises("parse_token, not 16 digits", errno.EINVAL,
       "is not a token of 16 hexadecimal digits", esa.parse_token, "abc")
raises("parse_token, zero", errno.EINVAL, "0 means no token",
       esa.parse_token, "0" * 16)
t.ok(esa.parse_token("00C0FFEE12345678") == 0x00c0ffee12345678,
     "parse_token: 16 hexadecimal digits, either case")
raises("Endpoint, switch port", errno.EINVAL, "switch port 47001 is not 47000",
       esa.Endpoint, **cfg(switch="10.0.0.9:47001"))
raises("Endpoint, switch address", errno.EINVAL, "bad IPv4",
       esa.Endpoint, **cfg(switch="sw"))
raises("Endpoint, values per packet with a token", errno.EINVAL,
       "1..361 for a job with a token", esa.Endpoint,
       **cfg(token=1, values_per_packet=363))
with esa.Endpoint(**cfg(switch="10.0.0.9", token=0x00c0ffee12345678)) as ep:
    c = ep.config()
    t.ok(c["switch"] == "10.0.0.9:47000" and c["token"] == 0x00c0ffee12345678
         and c["values_per_packet"] == 361,
         "Endpoint: switch and token reach the library", repr(c))
# Several switch servers: a comma list or a list, the entry named.
with esa.Endpoint(**cfg(switch="10.0.0.9,10.0.0.8:47000,10.0.0.7")) as ep:
    c = ep.config()
    t.ok(c["switch"] == "10.0.0.9:47000,10.0.0.8:47000,10.0.0.7:47000",
         "Endpoint: three switch servers reach the library", repr(c))
t.ok(esa.parse_switches(["10.0.0.9", "10.0.0.8"]) ==
     ["10.0.0.9:47000", "10.0.0.8:47000"], "parse_switches: a list")
raises("Endpoint, bad entry of a switch list", errno.EINVAL,
       "switch list '10.0.0.9,sw': entry 2 'sw': bad IPv4 address",
       esa.Endpoint, **cfg(switch="10.0.0.9,sw"))
raises("ParameterServer, a server twice", errno.EINVAL,
       "switch address 10.0.0.9 listed twice", esa.ParameterServer,
       bind="127.0.0.1:%d" % base, switch=["10.0.0.9", "10.0.0.9"])
with esa.Endpoint(**cfg()) as ep:
    c = ep.config()
    t.ok(c["switch"] is None and c["token"] == 0,
         "Endpoint: no switch and no token by default", repr(c))
raises("Endpoint, address not on this host", errno.EADDRNOTAVAIL, "bind",
       esa.Endpoint, **cfg(bind="192.0.2.1:%d" % base))
with esa.Endpoint(**cfg()) as ep:
    raises("Endpoint, port in use", errno.EADDRINUSE, "bind",
           esa.Endpoint, **cfg())
    raises("allreduce_f32, empty", errno.EINVAL, "empty tensor",
           ep.allreduce_f32, np.zeros(0, np.float32))
    raises("allreduce_i32, empty", errno.EINVAL, "empty tensor",
           ep.allreduce_i32, np.zeros(0, np.int32))
    try:
        ep.allreduce_f32(np.zeros(4, np.int32))
        t.ok(False, "allreduce_f32 of int32 refused")
    except TypeError as e:
        t.ok("float32" in str(e), "allreduce_f32 of int32 refused: %s" % e)
with esa.Endpoint(**cfg(timeout_us=1000, max_resends=2)) as ep:
    # No PS listens: every packet goes unanswered.
    raises("allreduce_f32, nobody answers", errno.ETIMEDOUT, "no result",
           ep.allreduce_f32, np.ones(8, np.float32))
    raises("allreduce_i32, nobody answers", errno.ETIMEDOUT, "no result",
           ep.allreduce_i32, np.ones(8, np.int32))
    t.ok(ep.stats()["timeouts"] == 2, "the endpoint counted 2 timeouts (%d)"
         % ep.stats()["timeouts"])
    # A silence is reported with its likely cause: nobody listens.
    heard = []
    ep.on_quiet(1, heard.append)
    raises("allreduce_i32, nobody answers, reported", errno.ETIMEDOUT,
           "is not running", ep.allreduce_i32, np.ones(8, np.int32))
    t.ok(len(heard) == 1 and "is not running: its host answers 'port "
         "unreachable'" in heard[0], "on_quiet: the cause, once per silence",
         repr(heard))
# ... and the call ends at once when the report cancels it: a report at
# 50 ms, well before the first resend (timeout_us, since no round trip has
# been measured yet) at 2 s.
with esa.Endpoint(**cfg(timeout_us=2000000, max_resends=2)) as ep:
    ep.on_quiet(50, lambda why: ep.cancel())
    t0 = time.monotonic()
    raises("allreduce_f32, cancelled from the report", errno.ECANCELED,
           "cancelled after", ep.allreduce_f32, np.ones(8, np.float32))
    took = time.monotonic() - t0
    t.ok(took < 1.5, "... at the report, before its first resend "
         "(%.2f s)" % took)
    seq = ep.next_seq
    ep.next_seq = seq + 1000
    t.ok(ep.next_seq == seq + 1000, "next_seq read and set (%d)" % seq)
    try:
        ep.next_seq = 1 << 32
        t.ok(False, "next_seq beyond uint32 refused")
    except esa.Error as e:
        t.ok(e.errno == errno.EINVAL and "next_seq" in str(e),
             "next_seq beyond uint32 refused: %s" % e)
ep.close()
try:
    ep.stats()
    t.ok(False, "a closed endpoint refuses calls")
except ValueError:
    t.ok(True, "a closed endpoint refuses calls")
try:
    esa.Endpoint(**cfg(job_id=70000))
    t.ok(False, "a job id beyond uint16 is refused, not truncated")
except esa.Error as e:
    t.ok(e.errno == errno.EINVAL and "70000" in str(e),
         "a job id beyond uint16 is refused, not truncated: %s" % e)

raises("ParameterServer, cache too large", errno.EINVAL, "cache of",
       esa.ParameterServer, LO + ":%d" % base, cache_entries=1 << 21)
raises("ParameterServer, bad address", errno.EINVAL, "bad IPv4",
       esa.ParameterServer, "1.2.3")
raises("ParameterServer, switch and host-only", errno.EINVAL,
       "a switch address and host-only mode exclude each other",
       esa.ParameterServer, LO + ":%d" % base, host_only=True,
       switch="10.0.0.9")
raises("ParameterServer, switch port", errno.EINVAL, "switch port 1 is not",
       esa.ParameterServer, LO + ":%d" % base, switch="10.0.0.9:1")
with esa.ParameterServer(LO + ":%d" % base) as ps:
    raises("ParameterServer, port in use", errno.EADDRINUSE, "bind",
           esa.ParameterServer, LO + ":%d" % base)
    raises("add_job, id 0", errno.EINVAL, "job id 0", ps.add_job, 0, 2)
    raises("add_job, fan-in 33", errno.EINVAL, "fan-in 33", ps.add_job, 1, 33)
    ps.add_job(1, 2)
    raises("add_job, twice", errno.EEXIST, "already served", ps.add_job, 1, 2)
    raises("job_stats, job not served", errno.ENOENT, "job 5 not served",
           ps.job_stats, 5)
    signal.signal(signal.SIGALRM, lambda *a: None)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    raises("poll, interrupted by a signal", errno.EINTR, "ppoll",
           ps.poll, 5000)
    t.ok(ps.poll(10) == 0, "poll: nothing came, 0 packets")

# ESA_LIBRARY names the library; a wrong one is an ImportError naming it.
r = subprocess.run([sys.executable, "-c", "import esa"], capture_output=True,
                   text=True, env=dict(os.environ, ESA_LIBRARY="/nonexistent/libesa.so",
                                       PYTHONPATH=str(ROOT / "tools" / "python")))
t.ok(r.returncode != 0 and "/nonexistent/libesa.so" in r.stderr,
     "ESA_LIBRARY naming no library: import fails naming it",
     r.stderr[-500:])

# ------------------------------------------------------ sums over loopback
FAN = 3


def run_job(arrays, host_port, **kw):
    """One host-only PS, FAN workers on threads; errors per worker."""
    errs = [None] * FAN
    with esa.ParameterServer(LO + ":%d" % host_port, host_only=True) as ps:
        ps.add_job(2, FAN)
        stop = threading.Event()

        def serve():
            while not stop.is_set():
                ps.poll(20)

        eps = [esa.Endpoint(job_id=2, worker_id=w, fan_in=FAN,
                            ps=LO + ":%d" % host_port,
                            bind=LO + ":%d" % (host_port + 1 + w),
                            agg_slots=256, **kw) for w in range(FAN)]

        def work(w):
            try:
                eps[w].allreduce(arrays[w])
            except esa.Error as e:
                errs[w] = e

        threads = [threading.Thread(target=work, args=(w,)) for w in range(FAN)]
        server = threading.Thread(target=serve)
        server.start()
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        stop.set()
        server.join()
        stats = [ep.stats() for ep in eps]
        for ep in eps:
            ep.close()
    return errs, stats


rng = np.random.default_rng(12)
n = 10000
ints = [rng.integers(-2**20, 2**20, n, dtype=np.int32) for _ in range(FAN)]
want = sum(a.astype(np.int64) for a in ints)
errs, _ = run_job(ints, base + 10)
t.ok(not any(errs) and all((a == want).all() for a in ints),
     "int32: %d workers x %d values, every sum exact" % (FAN, n), errs)

floats = [rng.uniform(-3, 3, n).astype(np.float32) for _ in range(FAN)]
exact = sum(a.astype(np.float64) for a in floats)
K = 16
errs, stats = run_job(floats, base + 20, scale_log2=K)
# Documentation/endpoints.rst: |result - S| <= fan_in 2^-(k+1) + |S| 2^-24.
bound = FAN * 2.0 ** -(K + 1) + np.abs(exact) * 2.0 ** -24
worst = max(float(np.max(np.abs(a - exact) / bound)) for a in floats)
t.ok(not any(errs) and worst <= 1 and all((a == floats[0]).all() for a in floats),
     "float32: every worker the same sums, within the documented bound "
     "(worst %.3f of it)" % worst, errs)

# A NaN in one worker's second packet: every worker ERANGE alike, the
# first packet's sums right, the second packet's inputs kept.
nan = [np.ones(2 * 363, np.float32) * (w + 1) for w in range(FAN)]
nan[1][400] = np.nan
inputs = [a.copy() for a in nan]
errs, stats = run_job(nan, base + 40)
t.ok(all(e is not None and e.errno == errno.ERANGE and "not finite" in e.strerror
         for e in errs) and
     all((a[:363] == sum(range(1, FAN + 1))).all() for a in nan) and
     all(np.array_equal(a[363:], b[363:], equal_nan=True)
         for a, b in zip(nan, inputs)),
     "float32 with a NaN: every worker Error(ERANGE) (%s), other packets summed"
     % (errs[0] and errs[0].strerror), [str(e) for e in errs])

ints = [np.full(100, 2**30, np.int32) for _ in range(FAN)]
errs, _ = run_job(ints, base + 30)
t.ok(all(e is not None and e.errno == errno.EOVERFLOW for e in errs) and
     (ints[0] == 2**31 - 1).all(),
     "int32 saturating: every worker Error(EOVERFLOW), sums saturated (%s)"
     % (errs[0] and errs[0].strerror))
sys.exit(t.done())
