# SPDX-License-Identifier: GPL-2.0
"""ESA in-network aggregation from Python: a thin ctypes binding of libesa.

The public API of tools/lib/esa.h, one class per object:

    ep = esa.Endpoint(job_id=1, worker_id=0, fan_in=4, ps="10.0.0.1",
                      bind="10.0.0.10:47001", agg_slots=4096)
    ep.allreduce(array)          # float32 or int32, summed in place
    ep.stats()                   # dict of struct esa_endpoint_stats

    ps = esa.ParameterServer(bind="10.0.0.1")
    ps.add_job(1, 4)
    while True:
        ps.poll(100)

Every failure of a library call raises esa.Error (an OSError) whose errno
is the call's and whose message is the library's own (esa_last_error()).
Library calls release the GIL (ctypes does), so an allreduce on one thread
overlaps with Python work on others. Documentation/pytorch.rst tells how
to use it; Documentation/endpoints.rst what the calls do.

The library is found, in order: $ESA_LIBRARY; build/libesa.so of the
source tree this package sits in; the library `make install` put next to
the installed package; libesa through the dynamic loader.
"""

import ctypes
import ctypes.util
import errno as _errno
import os
import pathlib
import sys

__all__ = ["Error", "Endpoint", "ParameterServer", "parse_addr", "parse_token",
           "library_path", "MAX_WORKERS"]

# Workers per job (ESA_MAX_WORKERS of uapi/esa_wire.h): the size of the
# worker arrays in struct esa_ps_job_config. selftests/python checks this
# and every structure below against the C compiler's layout.
MAX_WORKERS = 32


class Error(OSError):
    """A libesa call failed: .errno and the library's reason."""


# ------------------------------------------------------------ structures

class _SockaddrIn(ctypes.Structure):
    _fields_ = [("sin_family", ctypes.c_uint16),
                ("sin_port", ctypes.c_uint8 * 2),    # network order
                ("sin_addr", ctypes.c_uint32),       # network order
                ("sin_zero", ctypes.c_uint8 * 8)]

    def text(self):
        addr = self.sin_addr.to_bytes(4, sys.byteorder)
        return "%s:%d" % (".".join(str(b) for b in addr),
                          self.sin_port[0] << 8 | self.sin_port[1])


class _EndpointConfig(ctypes.Structure):
    _fields_ = [("job_id", ctypes.c_uint16),
                ("worker_id", ctypes.c_uint8),
                ("fan_in", ctypes.c_uint8),
                ("priority", ctypes.c_uint8),
                ("ps", _SockaddrIn),
                ("self", _SockaddrIn),
                ("agg_slots", ctypes.c_uint32),
                ("agg_offset", ctypes.c_uint32),
                ("agg_span", ctypes.c_uint32),
                ("window", ctypes.c_uint32),
                ("values_per_packet", ctypes.c_uint32),
                ("timeout_us", ctypes.c_uint32),
                ("max_resends", ctypes.c_uint32),
                ("scale_log2", ctypes.c_int),
                ("scale_log2_set", ctypes.c_bool),
                ("sw", _SockaddrIn),
                ("token", ctypes.c_uint64)]


def _u64_fields(*names):
    return [(n, ctypes.c_uint64) for n in names]


class _EndpointStats(ctypes.Structure):
    _fields_ = (_u64_fields("allreduces", "packets_sent", "bytes_sent",
                            "resends", "timeouts", "results",
                            "duplicate_results", "pulls", "ignored",
                            "overflow_results", "f32_redo_packets") +
                [("f32_min_scale_log2", ctypes.c_int)] +
                _u64_fields("tx_drops", "send_batches", "recv_batches",
                            "bad_token"))


class _PsConfig(ctypes.Structure):
    _fields_ = [("bind", _SockaddrIn),
                ("mode", ctypes.c_int),              # enum esa_ps_mode
                ("result_on_complete", ctypes.c_bool),
                ("cache_entries", ctypes.c_uint32),
                ("sw", _SockaddrIn)]


class _PsJobConfig(ctypes.Structure):
    _fields_ = [("job_id", ctypes.c_uint16),
                ("fan_in", ctypes.c_uint8),
                ("worker_known", ctypes.c_uint32),
                ("worker", _SockaddrIn * MAX_WORKERS),
                ("token", ctypes.c_uint64)]


class _PsStats(ctypes.Structure):
    _fields_ = _u64_fields("rx_packets", "rx_complete", "rx_partial",
                           "rx_preempted", "rx_collision", "rx_resend",
                           "rx_data", "merged", "duplicates", "overlaps",
                           "finished", "finished_by_ps", "result_packets",
                           "resend_answers", "pulls", "overflows", "stale",
                           "conflicts", "bad", "no_address", "seq_high",
                           "bad_token")


class _PsGlobalStats(ctypes.Structure):
    _fields_ = _u64_fields("rx_packets", "malformed", "unknown_job",
                           "unexpected", "tx_drops", "not_switch")


# enum esa_ps_mode
_PS_SWITCH = 0
_PS_HOST_ONLY = 1

# C name -> ctypes type, for selftests/python (layout check).
STRUCTS = {
    "struct sockaddr_in": _SockaddrIn,
    "struct esa_endpoint_config": _EndpointConfig,
    "struct esa_endpoint_stats": _EndpointStats,
    "struct esa_ps_config": _PsConfig,
    "struct esa_ps_job_config": _PsJobConfig,
    "struct esa_ps_stats": _PsStats,
    "struct esa_ps_global_stats": _PsGlobalStats,
}


def _as_dict(st):
    return {name: getattr(st, name) for name, _ in st._fields_}


_INT_TYPES = (ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32,
              ctypes.c_uint64, ctypes.c_int)


def _fill(st, what, **values):
    """Set integer fields of st, refusing what the C type cannot hold:
    ctypes would truncate silently and the library judge another number
    than the caller gave (its own range checks come after)."""
    types = dict(st._fields_)
    for name, v in values.items():
        t = types[name]
        if t in _INT_TYPES:
            bits = 8 * ctypes.sizeof(t)
            lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                      if t is ctypes.c_int else (0, (1 << bits) - 1))
            if not isinstance(v, int) or not lo <= v <= hi:
                raise Error(_errno.EINVAL, "%s: %s %r is not an integer "
                            "in %d..%d" % (what, name, v, lo, hi))
        setattr(st, name, v)
    return st


# --------------------------------------------------------------- library

def _candidates():
    env = os.environ.get("ESA_LIBRARY")
    if env:
        return [env]            # asked for this one: no silent fallback
    out = []
    here = pathlib.Path(__file__).resolve().parent
    root = here.parents[2]      # tools/python/esa -> the source tree
    if (root / "tools" / "lib" / "esa.h").exists():
        out.append(str(root / "build" / "libesa.so"))
    try:
        from . import _install  # written by `make install`
        out.append(_install.LIBRARY)
    except ImportError:
        pass
    found = ctypes.util.find_library("esa")
    if found:
        out.append(found)
    return out


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (missing)" % path)
            continue
        try:
            return ctypes.CDLL(path, use_errno=True), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("esa: libesa.so not found; build the tree (make), "
                      "run make install, or set ESA_LIBRARY. Tried: " +
                      ("; ".join(tried) or "nothing"))


_lib, library_path = _load()


# The C functions bound (selftests/python: every ESA_API function of esa.h).
BOUND = []


def _proto(name, restype, *argtypes):
    BOUND.append(name)
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


_P = ctypes.POINTER
_last_error = _proto("esa_last_error", ctypes.c_char_p)
_parse_addr = _proto("esa_parse_addr", ctypes.c_int, ctypes.c_char_p,
                     ctypes.c_uint16, _P(_SockaddrIn))
_parse_token = _proto("esa_parse_token", ctypes.c_int, ctypes.c_char_p,
                      _P(ctypes.c_uint64))
_ep_open = _proto("esa_endpoint_open", ctypes.c_int, _P(_EndpointConfig),
                  _P(ctypes.c_void_p))
_allreduce_i32 = _proto("esa_allreduce_i32", ctypes.c_int, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_size_t)
_allreduce_f32 = _proto("esa_allreduce_f32", ctypes.c_int, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_size_t)
_ep_stats = _proto("esa_endpoint_get_stats", None, ctypes.c_void_p,
                   _P(_EndpointStats))
_ep_config = _proto("esa_endpoint_get_config", None, ctypes.c_void_p,
                    _P(_EndpointConfig))
_ep_close = _proto("esa_endpoint_close", None, ctypes.c_void_p)
# void (*)(void *arg, const char *why)
_QuietFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
_ep_on_quiet = _proto("esa_endpoint_on_quiet", None, ctypes.c_void_p,
                      ctypes.c_uint, _QuietFn, ctypes.c_void_p)
_ep_cancel = _proto("esa_endpoint_cancel", None, ctypes.c_void_p)
_ep_next_seq = _proto("esa_endpoint_next_seq", ctypes.c_uint32,
                      ctypes.c_void_p)
_ep_set_next_seq = _proto("esa_endpoint_set_next_seq", None, ctypes.c_void_p,
                          ctypes.c_uint32)
_ps_open = _proto("esa_ps_open", ctypes.c_int, _P(_PsConfig),
                  _P(ctypes.c_void_p))
_ps_add_job = _proto("esa_ps_add_job", ctypes.c_int, ctypes.c_void_p,
                     _P(_PsJobConfig))
_ps_poll = _proto("esa_ps_poll", ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
_ps_job_stats = _proto("esa_ps_get_job_stats", ctypes.c_int, ctypes.c_void_p,
                       ctypes.c_uint16, _P(_PsStats))
_ps_stats = _proto("esa_ps_get_stats", None, ctypes.c_void_p,
                   _P(_PsGlobalStats))
_ps_close = _proto("esa_ps_close", None, ctypes.c_void_p)


def _check(ret, what):
    """Raise Error for a negative errno; the library's reason as message.

    esa_last_error() is per thread and read on the calling thread right
    after the call, so concurrent calls on other threads cannot mix up
    reasons.
    """
    if ret >= 0:
        return ret
    reason = _last_error().decode(errors="replace")
    raise Error(-ret, "%s: %s" % (what, reason))


def _sockaddr(text, what):
    sa = _SockaddrIn()
    if not isinstance(text, str):
        raise TypeError("%s: an address string 'A.B.C.D[:PORT]', not %r"
                        % (what, type(text).__name__))
    # Default port 0: the library then uses ESA_UDP_PORT where it applies.
    _check(_parse_addr(text.encode(), 0, ctypes.byref(sa)), what)
    return sa


def parse_token(text):
    """A job token of 16 hexadecimal digits -> int, by the library's
    parser (Documentation/security.rst)."""
    if not isinstance(text, str):
        raise TypeError("parse_token: a string of 16 hexadecimal digits, "
                        "not %r" % type(text).__name__)
    t = ctypes.c_uint64()
    _check(_parse_token(text.encode(), ctypes.byref(t)), "parse_token")
    return t.value


def _switch(cfg, switch, what):
    """Set cfg.sw from 'A.B.C.D' (None: no switch address)."""
    if switch is not None:
        cfg.sw = _sockaddr(switch, what + ": switch")


def parse_addr(text, default_port=0):
    """'A.B.C.D[:PORT]' -> (address, port), by the library's parser."""
    sa = _SockaddrIn()
    _check(_parse_addr(text.encode(), default_port, ctypes.byref(sa)),
           "parse_addr")
    host, port = sa.text().rsplit(":", 1)
    return host, int(port)


# Buffer formats (struct module codes) of 4-byte floats and ints.
_F32 = ("f",)
_I32 = ("i", "l") if ctypes.sizeof(ctypes.c_long) == 4 else ("i",)


def _buffer(buf, formats, what):
    """(address, count) of a writable C-contiguous buffer of 4-byte items."""
    mv = memoryview(buf)
    fmt = mv.format.lstrip("@=<")
    if fmt not in formats or mv.itemsize != 4:
        raise TypeError("%s: a buffer of %s items expected, got format %r"
                        % (what, "float32" if formats is _F32 else "int32",
                           mv.format))
    if mv.readonly:
        raise TypeError("%s: the buffer is read-only (sums go in place)"
                        % what)
    if not mv.c_contiguous:
        raise ValueError("%s: the buffer is not contiguous" % what)
    count = mv.nbytes // 4
    if count == 0:
        return None, 0          # the library says what is wrong with it
    return ctypes.addressof(ctypes.c_char.from_buffer(mv.cast("B"))), count


# -------------------------------------------------------------- objects

class _Object:
    """A library object: freed by close(), a with block, or collection."""
    _h = None
    _what = "object"

    @staticmethod
    def _free(handle):
        raise NotImplementedError

    def _handle(self):
        if not self._h:
            raise ValueError("%s is closed" % self._what)
        return self._h

    def close(self):
        if self._h:
            self._free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except (TypeError, AttributeError):
            pass                # interpreter shutdown: the module is gone


class Endpoint(_Object):
    """A worker of an ESA job (struct esa_endpoint).

    Keyword arguments are the fields of struct esa_endpoint_config
    (Documentation/endpoints.rst); ps and bind are 'A.B.C.D[:PORT]'
    strings, scale_log2 None means the library's default; switch is a
    one-armed switch's 'A.B.C.D' (None: none), token the job's token as
    an int (0: none; parse_token() reads the hexadecimal form).
    """
    _what = "endpoint"
    _free = staticmethod(_ep_close)

    def __init__(self, *, job_id, worker_id, fan_in, ps, bind, agg_slots,
                 priority=0, agg_offset=0, agg_span=0, window=0,
                 values_per_packet=0, timeout_us=0, max_resends=0,
                 scale_log2=None, switch=None, token=0):
        cfg = _fill(_EndpointConfig(), "endpoint", job_id=job_id,
                    worker_id=worker_id, fan_in=fan_in, priority=priority,
                    agg_slots=agg_slots, agg_offset=agg_offset,
                    agg_span=agg_span, window=window,
                    values_per_packet=values_per_packet,
                    timeout_us=timeout_us, max_resends=max_resends,
                    token=token)
        cfg.ps = _sockaddr(ps, "endpoint: ps")
        cfg.self = _sockaddr(bind, "endpoint: bind")
        _switch(cfg, switch, "endpoint")
        if scale_log2 is not None:
            _fill(cfg, "endpoint", scale_log2=scale_log2)
            cfg.scale_log2_set = True
        ep = ctypes.c_void_p()
        _check(_ep_open(ctypes.byref(cfg), ctypes.byref(ep)), "endpoint")
        self._h = ep

    def allreduce(self, buf):
        """Sum buf over the job's workers, in place (float32 or int32)."""
        if memoryview(buf).format.lstrip("@=<") in _F32:
            return self.allreduce_f32(buf)
        return self.allreduce_i32(buf)

    def allreduce_f32(self, buf):
        addr, n = _buffer(buf, _F32, "allreduce_f32")
        _check(_allreduce_f32(self._handle(), addr, n), "allreduce_f32")

    def allreduce_i32(self, buf):
        """int32 sums; a saturated sum raises Error(EOVERFLOW) with the
        saturated sums in buf."""
        addr, n = _buffer(buf, _I32, "allreduce_i32")
        _check(_allreduce_i32(self._handle(), addr, n), "allreduce_i32")

    def on_quiet(self, quiet_ms, fn):
        """fn(why) once per silence of quiet_ms in which nothing of the job
        came back, with the likely cause (the allreduce goes on trying);
        fn None: no report."""
        cb = _QuietFn((lambda _arg, why: fn(why.decode(errors="replace")))
                      if fn else 0)
        self._quiet_fn = cb     # alive as long as the library may call it
        _ep_on_quiet(self._handle(), quiet_ms, cb, None)

    def cancel(self):
        """End the call in progress with Error(ECANCELED) naming the
        silence: from an on_quiet function (at once) or another thread."""
        _ep_cancel(self._handle())

    @property
    def next_seq(self):
        """The sequence of the next call's first packet; set it on every
        worker of the job alike after a cancelled call."""
        return _ep_next_seq(self._handle())

    @next_seq.setter
    def next_seq(self, seq):
        if not isinstance(seq, int) or not 0 <= seq < 1 << 32:
            raise Error(_errno.EINVAL, "next_seq: %r is not an integer in "
                        "0..%d" % (seq, (1 << 32) - 1))
        _ep_set_next_seq(self._handle(), seq)

    def stats(self):
        st = _EndpointStats()
        _ep_stats(self._handle(), ctypes.byref(st))
        return _as_dict(st)

    def config(self):
        """The effective configuration (the library's defaults filled in)."""
        c = _EndpointConfig()
        _ep_config(self._handle(), ctypes.byref(c))
        d = _as_dict(c)
        d["ps"] = c.ps.text()
        d["bind"] = c.self.text()
        d["switch"] = c.sw.text() if c.sw.sin_family else None
        del d["self"], d["scale_log2_set"], d["sw"]
        return d


class ParameterServer(_Object):
    """The parameter server of one or more jobs (struct esa_ps).

    host_only: no aggregating switch, the PS sums and unicasts every
    result (ESA_PS_HOST_ONLY); switch: a one-armed switch's 'A.B.C.D'
    (None: none); result_on_complete and cache_entries as in struct
    esa_ps_config.
    """
    _what = "parameter server"
    _free = staticmethod(_ps_close)

    def __init__(self, bind="0.0.0.0", *, host_only=False,
                 result_on_complete=True, cache_entries=0, switch=None):
        cfg = _fill(_PsConfig(), "ps",
                    mode=_PS_HOST_ONLY if host_only else _PS_SWITCH,
                    cache_entries=cache_entries)
        cfg.result_on_complete = bool(result_on_complete)
        cfg.bind = _sockaddr(bind, "ps: bind")
        _switch(cfg, switch, "ps")
        ps = ctypes.c_void_p()
        _check(_ps_open(ctypes.byref(cfg), ctypes.byref(ps)), "ps")
        self._h = ps

    def add_job(self, job_id, fan_in, workers=(), token=0):
        """Serve job_id of fan_in workers; workers[i] is worker i's
        'A.B.C.D[:PORT]' (the others are learned from their packets);
        token: the job's token as an int (0: none)."""
        jc = _fill(_PsJobConfig(), "ps", job_id=job_id, fan_in=fan_in,
                   token=token)
        if len(workers) > min(fan_in, MAX_WORKERS):
            raise Error(_errno.EINVAL, "ps: job %d: %d worker addresses for "
                        "fan-in %d" % (job_id, len(workers), fan_in))
        for i, w in enumerate(workers):
            jc.worker[i] = _sockaddr(w, "ps: job %d worker %d" % (job_id, i))
            jc.worker_known |= 1 << i
        _check(_ps_add_job(self._handle(), ctypes.byref(jc)), "ps")

    def poll(self, timeout_ms=-1):
        """Serve for up to timeout_ms (<0: until a packet); packets done.
        A signal makes it raise Error(EINTR)."""
        return _check(_ps_poll(self._handle(), int(timeout_ms)), "ps poll")

    def job_stats(self, job_id):
        st = _PsStats()
        _fill(_PsJobConfig(), "ps stats", job_id=job_id)
        _check(_ps_job_stats(self._handle(), job_id, ctypes.byref(st)),
               "ps stats")
        return _as_dict(st)

    def stats(self):
        st = _PsGlobalStats()
        _ps_stats(self._handle(), ctypes.byref(st))
        return _as_dict(st)

