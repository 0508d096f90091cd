# SPDX-License-Identifier: GPL-2.0
"""A DDP communication hook that allreduces gradients through the ESA switch.

    import esa.torch
    dist.init_process_group("gloo")
    model = DistributedDataParallel(model)
    hook = esa.torch.register(model)    # the job from the environment
    esa.torch.register(model2, hook=hook)   # another model, same job
    ...train...
    hook.close()                        # or at exit

What it does (Documentation/pytorch.rst):
- DDP calls the hook once per gradient bucket, in bucket order, the same
  on every rank. The hook queues the bucket to one FIFO thread and returns
  a future at once (a torch.futures.Future's then(), as DDP's own hooks
  do: an error then fails it where DDP waits, in C++), so the allreduces
  overlap with the rest of the backward pass and every rank makes the same library calls in the
  same order (what the switch's sequence numbers need).
- The thread sums the bucket in place with libesa's float32 allreduce
  (fixed point at 2^scale_log2, the same scale on every rank; float16
  and bfloat16 buckets through a float32 copy), divides by the world
  size (DDP does not when a hook is set) and completes the future.
  Packets whose sum overflowed are redone by the library at smaller
  scales (overflow_buckets).
- Every gloo call of the hook goes to a gloo group of its own, made by
  register() and used only by the hook's thread: its collectives come in
  the same order on every rank and never interleave with DDP's own (the
  unused-parameter map of find_unused_parameters, plain DDP models).
- A healthy bucket makes no gloo call. Ranks agree over gloo only when a
  bucket is not finite (ERANGE on every rank: summed through gloo from a
  copy of its input, nonfinite_buckets), with verify, and when the
  switch path goes silent for detect_s: the library's report cancels the
  call, and the ranks exchange where they stand. A rank one bucket behind
  (its last results lost) gets that sum from a rank that has it; every
  other pending bucket is summed through gloo from its input; all ranks
  then sum through gloo (fallback_buckets), and every probe_s they probe
  the switch together at a bucket boundary, returning when it answers
  all of them. ESA_FALLBACK=error raises instead, naming the library's
  diagnosis. Documentation/pytorch.rst, "Faults".
- A bucket not summed within timeout_s fails the future with a
  RuntimeError naming the bucket and the cause; every later bucket fails
  with it, so backward() raises on every surviving rank instead of
  hanging.
- verify=True also sums every bucket through gloo and checks the ESA sum
  against it within the fixed-point error bound (verified_buckets,
  max_error_ratio); a bucket beyond it fails like an error.

Configuration: keyword arguments of register(), else the environment a
launcher sets (ESA_* below; rank and world size from the process group):
    ESA_JOB_ID        job id registered with the switch (aggctl job add)
    ESA_PS            the job's parameter server, A.B.C.D[:PORT]
    ESA_WORKERS       worker addresses A.B.C.D:PORT, comma separated, in
                      rank order (worker i of the switch's job = rank i)
    ESA_AGG_SLOTS     aggregator index space (switch slots or the quota)
    ESA_SWITCH        a one-armed switch's address A.B.C.D: send to it,
                      take results only from it (none: on the path)
    ESA_TOKEN         the job's token, 16 hex digits (none)
    ESA_AGG_OFFSET, ESA_AGG_SPAN, ESA_WINDOW, ESA_PRIORITY,
    ESA_VALUES_PER_PACKET, ESA_TIMEOUT_US, ESA_MAX_RESENDS
                      struct esa_endpoint_config (library defaults)
    ESA_SCALE_LOG2    fixed-point scale (default 24, see SCALE_LOG2)
    ESA_TIMEOUT_S     seconds one bucket may take (default 60)
    ESA_PS_START      1: rank 0 runs the PS in a thread of its own
    ESA_PS_NETNS      network namespace (path) that thread serves from
    ESA_PS_RESULT_ON_COMPLETE
                      0: the PS does not resend sums the switch completed
                      (right under the esa and static policies, which
                      multicast them; atp needs them: default 1)
    ESA_VERIFY        1: verify=True
    ESA_FALLBACK      gloo (default): on a silent switch path, go on
                      through gloo and come back; error: raise
    ESA_DETECT_S      seconds of silence that make a fault (10; at most
                      half of ESA_TIMEOUT_S)
    ESA_PROBE_S       seconds between probes of the switch while on gloo (5)
    ESA_PROBE_TIMEOUT_S
                      seconds a probe may go unanswered (1)
"""

import atexit
import ctypes
import datetime
import errno
import logging
import os
import queue
import socket
import sys
import threading
import time

import numpy as np
import torch
import torch.distributed as dist

import esa

__all__ = ["register", "EsaHook", "allreduce_hook", "SCALE_LOG2",
           "error_bound"]

# The hook's fixed-point scale: 2^-24 resolution, gradients up to
# 2^31 / (2 * fan_in) / 2^24 = 16 (4 ranks) before a packet is redone at
# 2^16. Gradients are small: the library's default 2^16 would round a
# 1e-4 gradient to within 8 %.
SCALE_LOG2 = 24

def _token(text):
    """ESA_TOKEN: the library's parser, its reason as a ValueError."""
    try:
        return esa.parse_token(text)
    except esa.Error as e:
        raise ValueError(e.strerror) from None


def _switch(text):
    """ESA_SWITCH: an address by the library's parser (its port, if any,
    is the library's to judge when the endpoint opens)."""
    try:
        esa.parse_addr(text)
    except esa.Error as e:
        raise ValueError(e.strerror) from None
    return text


# (name, environment variable, parser); None: no default.
_ENV = [
    ("job_id", "ESA_JOB_ID", int),
    ("ps", "ESA_PS", str),
    ("workers", "ESA_WORKERS", lambda s: [w.strip() for w in s.split(",")]),
    ("agg_slots", "ESA_AGG_SLOTS", int),
    ("switch", "ESA_SWITCH", _switch),
    ("token", "ESA_TOKEN", _token),
    ("agg_offset", "ESA_AGG_OFFSET", int),
    ("agg_span", "ESA_AGG_SPAN", int),
    ("window", "ESA_WINDOW", int),
    ("priority", "ESA_PRIORITY", int),
    ("values_per_packet", "ESA_VALUES_PER_PACKET", int),
    ("timeout_us", "ESA_TIMEOUT_US", int),
    ("max_resends", "ESA_MAX_RESENDS", int),
    ("scale_log2", "ESA_SCALE_LOG2", int),
    ("timeout_s", "ESA_TIMEOUT_S", float),
    ("ps_start", "ESA_PS_START", lambda s: s not in ("", "0")),
    ("ps_netns", "ESA_PS_NETNS", str),
    ("ps_result_on_complete", "ESA_PS_RESULT_ON_COMPLETE",
     lambda s: s not in ("", "0")),
    ("verify", "ESA_VERIFY", lambda s: s not in ("", "0")),
    ("fallback", "ESA_FALLBACK", str),
    ("detect_s", "ESA_DETECT_S", float),
    ("probe_s", "ESA_PROBE_S", float),
    ("probe_timeout_s", "ESA_PROBE_TIMEOUT_S", float),
]
# ESA_FALLBACK: what a rank does when the switch path goes silent.
FALLBACK_POLICIES = ("gloo", "error")
# Bucket dtypes the hook takes (summed as float32 on the host).
_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_log = logging.getLogger("esa.torch")
_REQUIRED = ("job_id", "ps", "workers", "agg_slots")
_DEFAULTS = {"scale_log2": SCALE_LOG2, "timeout_s": 60.0, "ps_start": False,
             "ps_netns": None, "ps_result_on_complete": True,
             "verify": False, "fallback": "gloo", "detect_s": 10.0,
             "probe_s": 5.0, "probe_timeout_s": 1.0}
_ENDPOINT_KEYS = ("agg_offset", "agg_span", "window", "priority",
                  "values_per_packet", "timeout_us", "max_resends",
                  "switch", "token")


def config_from_env(overrides=None):
    """The hook's configuration: overrides, else ESA_* variables."""
    cfg = dict(_DEFAULTS)
    for name, var, parse in _ENV:
        if var in os.environ:
            try:
                cfg[name] = parse(os.environ[var])
            except ValueError as e:
                raise ValueError("%s=%r: %s" % (var, os.environ[var], e))
    cfg.update({k: v for k, v in (overrides or {}).items() if v is not None})
    missing = [var for name, var, _ in _ENV
               if name in _REQUIRED and name not in cfg]
    if missing:
        raise ValueError("esa.torch: set %s (or pass them to register()): "
                         "the job as registered with the switch"
                         % ", ".join(missing))
    if cfg["fallback"] not in FALLBACK_POLICIES:
        raise ValueError("esa.torch: ESA_FALLBACK=%r: not one of %s"
                         % (cfg["fallback"], ", ".join(FALLBACK_POLICIES)))
    for name in ("timeout_s", "detect_s", "probe_s", "probe_timeout_s"):
        if not cfg[name] > 0:
            raise ValueError("esa.torch: %s=%r: seconds above 0" % (
                next(v for n, v, _ in _ENV if n == name), cfg[name]))
    unknown = set(cfg) - {n for n, _, _ in _ENV}
    if unknown:
        raise TypeError("esa.torch: unknown settings %s" % sorted(unknown))
    return cfg


def error_bound(fan_in, scale_log2, abs_sum):
    """Largest |ESA sum - exact sum| for one value whose exact sum is
    abs_sum in magnitude (Documentation/endpoints.rst, "Float32")."""
    return fan_in * 2.0 ** -(scale_log2 + 1) + abs_sum * 2.0 ** -24


_CLONE_NEWNET = 0x40000000


def _enter_netns(path):
    """Move the calling thread (only it) into the network namespace path."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET):
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


def _is_local(addr):
    """Whether addr is an address of this host (this namespace)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((addr, 0))
            return True
        except OSError:
            return False


class _ServedPs:
    """The job's PS, served by a thread of rank 0 (ESA_PS_START)."""

    def __init__(self, cfg, workers):
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error = None
        self.stats = None
        self._thread = threading.Thread(
            target=self._serve, args=(cfg, workers), name="esa-ps",
            daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error:
            raise self._error

    def _serve(self, cfg, workers):
        bind, job_id = cfg["ps"], cfg["job_id"]
        switch = cfg.get("switch")
        try:
            if cfg["ps_netns"]:
                _enter_netns(cfg["ps_netns"])
            elif not switch and _is_local(esa.parse_addr(bind)[0]):
                # Packets to an address of this host never reach a switch
                # on the path: rank 0's own contributions would bypass it.
                # (Rank 0 sends to a one-armed switch's address instead.)
                raise RuntimeError(
                    "esa.torch: ESA_PS %s is an address of rank 0's host; "
                    "the PS must sit behind its own switch port: another "
                    "host, or a network namespace given in ESA_PS_NETNS"
                    % bind)
            ps = esa.ParameterServer(
                bind, result_on_complete=cfg["ps_result_on_complete"],
                switch=switch)
            ps.add_job(job_id, len(workers), workers,
                       token=cfg.get("token", 0))
        except Exception as e:  # noqa: BLE001: re-raised by __init__
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        with ps:
            while not self._stop.is_set():
                try:
                    ps.poll(100)
                except InterruptedError:
                    continue            # a signal for the main thread
            self.stats = ps.job_stats(job_id)

    def close(self):
        self._stop.set()
        self._thread.join()


# What a rank reports when the ranks agree (_agree), one row each.
_OK, _FAULT, _NONFINITE, _CLOSE, _PROBE_FAILED = range(5)
_STATUS_NAMES = ("ok", "fault", "nonfinite", "close", "probe failed")


class _Row:
    """One rank's report: its status, the bucket it stands at (buckets
    it finished before), its endpoint's next sequence, the buckets the
    switch summed for it."""

    def __init__(self, values):
        self.status, self.bucket, self.next_seq, self.switch_buckets = (
            int(v) for v in values)


def _hook_group(process_group, timeout_s):
    """A gloo group of the hook's own over the ranks of process_group,
    and those ranks (global numbers) in group order. Only the hook's
    thread calls it, so its collectives come in the same order on every
    rank and never interleave with DDP's on process_group."""
    if process_group is None:
        ranks = list(range(dist.get_world_size()))
    elif hasattr(dist, "get_process_group_ranks"):        # torch 2.x
        ranks = dist.get_process_group_ranks(process_group)
    else:
        group_rank = dist.distributed_c10d._pg_group_ranks[process_group]
        ranks = sorted(group_rank, key=group_rank.get)
    group = dist.new_group(ranks, backend="gloo",
                           timeout=datetime.timedelta(seconds=timeout_s))
    return group, ranks


class EsaHook:
    """The hook's state: the endpoint, the FIFO thread, the counters."""

    def __init__(self, process_group=None, **settings):
        cfg = config_from_env(settings)
        self.pg = process_group
        self.rank = dist.get_rank(process_group)
        self.world = dist.get_world_size(process_group)
        workers = cfg["workers"]
        if len(workers) != self.world:
            raise ValueError("esa.torch: %d worker addresses (ESA_WORKERS) "
                             "for a world of %d ranks"
                             % (len(workers), self.world))
        self.scale_log2 = cfg["scale_log2"]
        self.timeout_s = cfg["timeout_s"]
        self.verify = cfg["verify"]
        self.job_id = cfg["job_id"]
        self.fallback = cfg["fallback"]
        self.probe_s = cfg["probe_s"]
        # The library's report of a silence must come before the watchdog.
        self._detect_ms = int(1000 * min(cfg["detect_s"], self.timeout_s / 2))
        # Until the switch first answered, a silence may be ranks starting
        # far apart (data loading before the first backward): it is judged
        # after half the timeout, and then it is a configuration error.
        self._start_ms = int(1000 * self.timeout_s / 2)
        self._probe_ms = int(1000 * min(cfg["probe_timeout_s"],
                                        self.timeout_s / 2))
        self.group, self._ranks = _hook_group(process_group, self.timeout_s)
        self.ps = None
        if cfg["ps_start"] and self.rank == 0:
            self.ps = _ServedPs(cfg, workers)
        try:
            self.endpoint = esa.Endpoint(
                job_id=cfg["job_id"], worker_id=self.rank, fan_in=self.world,
                ps=cfg["ps"], bind=workers[self.rank],
                agg_slots=cfg["agg_slots"], scale_log2=self.scale_log2,
                **{k: cfg[k] for k in _ENDPOINT_KEYS if k in cfg})
        except BaseException:
            if self.ps:
                self.ps.close()         # no thread left serving behind
            raise
        self.endpoint.on_quiet(self._start_ms, self._on_quiet)
        self.counters = dict(buckets=0, values=0, overflow_buckets=0,
                             redo_packets=0, nonfinite_buckets=0,
                             fallback_buckets=0, fallbacks=0, returns=0,
                             probes=0, switch_downtime_s=0.0, gloo_calls=0,
                             verified_buckets=0, max_error_ratio=0.0,
                             allreduce_s=0.0)
        self._on_switch = True          # else gloo, until a probe answers
        self._ordinal = 0               # buckets this rank finished
        self._switch_buckets = 0        # of them summed by the switch
        self._last_sum = None           # (ordinal, sum) of the last of those
        self._cause = None              # the library's report of a silence
        self._down_since = None         # when the switch went quiet
        self._next_probe = None
        self._probe_due = False         # agreed by the ranks
        self._agreed_seq = 0            # beyond every rank's last sequence
        self._failed = None
        self._closed = False
        self._endpoint_stats = None     # the last ones, once closed
        # The bucket in flight: (start, index, values, future), or None.
        self._busy = None
        self._lock = threading.Lock()
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="esa-hook",
                                        daemon=True)
        self._thread.start()
        self._watch_stop = threading.Event()
        self._watchdog = threading.Thread(target=self._watch,
                                          name="esa-watchdog", daemon=True)
        self._watchdog.start()
        atexit.register(self._at_exit)

    # ---------------------------------------------------- the hook's side

    def submit(self, bucket):
        tensor = bucket.buffer()
        if tensor.dtype not in _DTYPES or tensor.device.type != "cpu":
            raise TypeError("esa.torch: gradients must be float32, float16 "
                            "or bfloat16 on the CPU, bucket %d is %s on %s"
                            % (bucket.index(), tensor.dtype, tensor.device))
        fut = torch.futures.Future()
        with self._lock:
            failed = self._failed
        if failed:
            fut.set_result(failed)
        else:
            self._queue.put((tensor, fut, bucket.index()))
        # DDP waits in C++: an error must fail the future there (a callback
        # that raises does), not be a Python exception it cannot unwrap.
        return fut.then(_unwrap)

    # --------------------------------------------------------- the thread

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            tensor, fut, index = item
            with self._lock:
                failed = self._failed
                if not failed:
                    self._busy = (time.monotonic(), index, tensor.numel(), fut)
            if failed:
                self._complete(fut, failed)
                continue
            try:
                t0 = time.perf_counter()
                self._bucket(tensor, index)
                self.counters["allreduce_s"] += time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001: handed to DDP
                self._fail(e)
            with self._lock:
                self._busy = None
                failed = self._failed
            self._complete(fut, failed, tensor)
            if self._probe_due and not failed:
                try:
                    self._probe()       # between buckets, on every rank
                except Exception as e:  # noqa: BLE001: the next bucket's
                    self._fail(e)

    def _complete(self, fut, error, tensor=None):
        """Complete fut once (the watchdog may have failed it already)
        with the summed tensor or the error (_unwrap raises it)."""
        with self._lock:
            if not fut.done():
                fut.set_result(error or tensor)

    def _bucket(self, tensor, index):
        """Sum one bucket (float32 on the host, whatever its dtype), then
        average it."""
        work = tensor if tensor.dtype == torch.float32 else tensor.float()
        if self._on_switch:
            self._switch_bucket(work, index)
        else:
            self._gloo_sum(work)
        work.div_(self.world)
        if work is not tensor:
            tensor.copy_(work)
        self._ordinal += 1
        self.counters["buckets"] += 1
        self.counters["values"] += work.numel()

    def _on_quiet(self, why):
        """The library heard nothing for detect_s: end the call (in it,
        on this thread), keep the cause for the error or the log."""
        self._cause = why
        self.endpoint.cancel()

    def _switch_bucket(self, work, index):
        arr = work.numpy()              # the bucket's memory
        saved = arr.copy()              # for gloo, should the switch fail
        redo0 = self.endpoint.stats()["f32_redo_packets"]
        started = time.monotonic()
        cause = self._cause = None      # this bucket's silence, if any
        try:
            self.endpoint.allreduce_f32(arr)
            status = _OK
        except esa.Error as e:
            if e.errno == errno.ERANGE:
                # Not finite somewhere: every rank gets ERANGE here alike.
                status = _NONFINITE
            else:
                status, cause = _FAULT, e.strerror
                if self.fallback == "error":
                    raise RuntimeError(
                        "esa.torch: rank %d: bucket %d (%d values) not summed "
                        "through the switch: %s (ESA_FALLBACK=error)"
                        % (self.rank, index, arr.size, cause)) from e
        if status == _OK:
            redo = self.endpoint.stats()["f32_redo_packets"] - redo0
            if redo:
                self.counters["overflow_buckets"] += 1
                self.counters["redo_packets"] += redo
            if not self._switch_buckets:
                self.endpoint.on_quiet(self._detect_ms, self._on_quiet)
            self._switch_buckets += 1
            # A rank whose last result was lost may need this sum.
            self._last_sum = (self._ordinal, arr.copy())
            if not self.verify:
                return                  # the healthy path: no collective
        rows = self._agree(status, index)
        self._settle(rows, status, work, saved, index, cause, started)

    # ------------------------------------------- agreement over gloo

    def _gloo(self, collective, *args):
        """Every gloo call of the hook: on its own group, counted."""
        self.counters["gloo_calls"] += 1
        collective(*args, group=self.group)

    def _agree(self, status, index=None):
        """Every rank's report, by a gloo collective of the hook's group
        (the failure path, NaN buckets, verify, probes and close only)."""
        mine = torch.tensor([status, self._ordinal, self.endpoint.next_seq,
                             self._switch_buckets], dtype=torch.int64)
        rows = [torch.zeros_like(mine) for _ in range(self.world)]
        try:
            self._gloo(dist.all_gather, rows, mine)
        except RuntimeError as e:
            raise RuntimeError(
                "esa.torch: rank %d: %s: the ranks could not agree over gloo "
                "(%s): a rank may have died%s"
                % (self.rank, "bucket %d" % index if index is not None
                   else "closing", str(e).split("\n")[0],
                   "; the switch path: %s" % self._cause if self._cause
                   else "")) from e
        rows = [_Row(r.tolist()) for r in rows]
        self._agreed_seq = max(r.next_seq for r in rows)
        return rows

    def _settle(self, rows, status, work, saved, index, cause, started):
        """Finish this rank's bucket as the ranks agreed (see
        Documentation/pytorch.rst, "Faults"): a rank one bucket behind
        takes the sum of one that has it, every other pending bucket is
        summed through gloo from its input, or checked (verify)."""
        lag = self._lagging(rows)
        faults = [i for i, r in enumerate(rows) if r.status == _FAULT]
        if faults and not any(r.switch_buckets for r in rows):
            raise RuntimeError(
                "esa.torch: rank %d: bucket %d (%d values): the switch never "
                "summed a bucket of job %d on any rank: %s"
                % (self.rank, index, work.numel(), self.job_id,
                   cause or "rank %d reported its path silent" % faults[0]))
        if lag is not None:
            self._share_last(rows, lag, work)
        if faults:
            self._leave_switch(cause or "rank %d found the switch silent"
                               % faults[0], started)
        arr = work.numpy()
        if lag is not None and self._ordinal == lag:
            self.counters["fallback_buckets"] += 1   # the sum came by gloo
        elif faults:
            arr[:] = saved
            self._gloo_sum(work)
        elif all(r.status == _OK for r in rows):
            self._check(work, saved, index)
        else:
            arr[:] = saved
            self._gloo(dist.all_reduce, work)
            self.counters["nonfinite_buckets"] += 1

    def _lagging(self, rows):
        """The bucket that ranks one behind the others still need, None if
        all stand at one bucket; refuse what the hook cannot mend."""
        lo = min(r.bucket for r in rows)
        hi = max(r.bucket for r in rows)
        if hi > lo + 1 or (hi == lo + 1 and any(
                r.status != _FAULT for r in rows if r.bucket == lo)):
            raise RuntimeError(
                "esa.torch: rank %d: the ranks stand at buckets %s (statuses "
                "%s): not the same buckets on every rank"
                % (self.rank, [r.bucket for r in rows],
                   [_STATUS_NAMES[r.status] for r in rows]))
        return lo if hi > lo else None

    def _share_last(self, rows, lag, work):
        """Broadcast the sum of bucket lag from the first rank that has it
        to the ranks whose results of it were lost."""
        src = next(i for i, r in enumerate(rows) if r.bucket == lag + 1)
        if self._ordinal == lag:
            buf = work
        elif self.rank == src:
            assert self._last_sum[0] == lag, "no sum of bucket %d" % lag
            buf = torch.from_numpy(self._last_sum[1])
        else:
            buf = torch.empty(len(self._last_sum[1]), dtype=torch.float32)
        self._gloo(dist.broadcast, buf, self._ranks[src])

    def _gloo_sum(self, work):
        """Sum work through gloo, while the switch is away; one more value
        carries whether a rank's probe timer ran out (then every rank
        probes after this bucket)."""
        n = work.numel()
        buf = torch.empty(n + 1, dtype=torch.float32)
        buf[:n] = work
        buf[n] = float(time.monotonic() >= self._next_probe)
        self._gloo(dist.all_reduce, buf)
        work.copy_(buf[:n])
        self._probe_due = bool(buf[n] > 0)
        self.counters["fallback_buckets"] += 1

    def _leave_switch(self, cause, since):
        if not self._on_switch:
            return
        self._on_switch = False
        self._down_since = since
        self._next_probe = time.monotonic() + self.probe_s
        self.counters["fallbacks"] += 1
        _log.warning("esa.torch: rank %d: bucket %d on: switch -> gloo: %s",
                     self.rank, self._ordinal, cause)

    def _probe(self):
        """Every rank at the same bucket boundary: a small sum through the
        switch from a sequence beyond all used, then back to it if it
        answered every rank."""
        self._probe_due = False
        self.counters["probes"] += 1
        self.endpoint.next_seq = self._agreed_seq
        self.endpoint.on_quiet(self._probe_ms, self._on_quiet)
        ones = np.ones(1, np.int32)
        try:
            self.endpoint.allreduce_i32(ones)
            answered = int(ones[0]) == self.world
        except esa.Error:
            answered = False
        finally:
            self.endpoint.on_quiet(self._detect_ms, self._on_quiet)
        rows = self._agree(_OK if answered else _PROBE_FAILED)
        if any(r.status != _OK for r in rows):
            self._next_probe = time.monotonic() + self.probe_s
            return
        down = time.monotonic() - self._down_since
        self.counters["switch_downtime_s"] += down
        self.counters["returns"] += 1
        self._on_switch = True
        self._down_since = None
        _log.warning("esa.torch: rank %d: bucket %d on: gloo -> switch: it "
                     "answered a probe after %.1f s away", self.rank,
                     self._ordinal, down)

    def _check(self, tensor, saved, index):
        """The ESA sum against gloo's, within both error bounds."""
        ref = torch.from_numpy(np.concatenate([saved, np.abs(saved)]))
        self._gloo(dist.all_reduce, ref)
        n = saved.size
        gloo, abs_sum = ref[:n].double().numpy(), ref[n:].double().numpy()
        k = self.endpoint.stats()["f32_min_scale_log2"]
        # ESA's bound against the exact sum, plus gloo's own float
        # rounding (at most world - 1 additions, each 2^-24 relative);
        # 2^-20 more for the second-order terms of both.
        bound = (error_bound(self.world, k, np.abs(gloo)) +
                 (self.world - 1) * abs_sum * 2.0 ** -24) * (1 + 2.0 ** -20)
        err = np.abs(tensor.double().numpy() - gloo)
        ratio = float(np.max(err / bound))
        self.counters["verified_buckets"] += 1
        self.counters["max_error_ratio"] = max(
            self.counters["max_error_ratio"], ratio)
        if ratio > 1:
            i = int(np.argmax(err / bound))
            raise RuntimeError(
                "esa.torch: bucket %d value %d: ESA sum %r, gloo's %r, "
                "difference %g beyond the fixed-point bound %g (scale 2^%d)"
                % (index, i, float(tensor[i]), gloo[i], err[i], bound[i], k))

    def _fail(self, error):
        with self._lock:
            if not self._failed:
                self._failed = (error if isinstance(error, RuntimeError)
                                else RuntimeError("esa.torch: %s" % error))
                self._failed.__cause__ = error

    def _watch(self):
        """Fail the bucket in flight once it is older than timeout_s."""
        while not self._watch_stop.wait(0.5):
            with self._lock:
                busy = self._busy
            if busy and time.monotonic() - busy[0] > self.timeout_s:
                self._fail(RuntimeError(
                    "esa.torch: rank %d: bucket %d (%d values) not summed "
                    "within %g s (ESA_TIMEOUT_S): %s"
                    % (self.rank, busy[1], busy[2], self.timeout_s,
                       self._cause or "a rank may have died, or the switch "
                       "or the PS stopped answering")))
                # The call in flight may never return: fail its bucket
                # and every queued one now.
                with self._lock:
                    failed = self._failed
                self._complete(busy[3], failed)
                self._drain(failed)

    def _drain(self, failed):
        """Fail every queued bucket."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is None:
                self._queue.put(None)   # close() asked the thread to end
                return
            self._complete(item[1], failed)

    # ------------------------------------------------------------- public

    def stats(self):
        """The hook's counters plus the endpoint's (struct esa_endpoint_stats)."""
        out = dict(self.counters)
        if self._down_since is not None:        # still away
            out["switch_downtime_s"] += time.monotonic() - self._down_since
        out["endpoint"] = self._endpoint_stats or self.endpoint.stats()
        if self.ps and self.ps.stats:
            out["ps"] = self.ps.stats
        return out

    def _close_agree(self):
        """Wait for every rank to finish: a rank whose last results were
        lost gets that bucket's sum from one that has it (it needs this
        rank, and rank 0's PS, until then)."""
        while True:
            rows = self._agree(_CLOSE)
            if all(r.status == _CLOSE for r in rows):
                if len({r.bucket for r in rows}) > 1:
                    raise RuntimeError(
                        "esa.torch: rank %d: the ranks closed after %s "
                        "buckets: not the same buckets on every rank"
                        % (self.rank, [r.bucket for r in rows]))
                return
            lag = self._lagging(rows)
            if lag is None:
                raise RuntimeError(
                    "esa.torch: rank %d: closed after bucket %d while rank "
                    "%d has more buckets: not the same buckets on every rank"
                    % (self.rank, self._ordinal - 1, next(
                        i for i, r in enumerate(rows) if r.status != _CLOSE)))
            self._share_last(rows, lag, None)
            self._leave_switch("a rank found the switch silent",
                               time.monotonic())

    def _stop_threads(self, wait_s):
        """Ask the hook's threads to end; whether the FIFO thread did
        within wait_s (None: however long it takes)."""
        self._queue.put(None)
        self._watch_stop.set()
        self._watchdog.join()
        self._thread.join(wait_s)
        return not self._thread.is_alive()

    def _at_exit(self):
        """At interpreter exit, before daemon threads are frozen: a thread
        of the hook that comes back from torch's C++ (a gloo call, a
        future) after that point makes Python unwind it through C++
        frames that do not allow it: std::terminate, 'terminate called
        without an active exception', exit 134. So the threads end now;
        one that cannot (a call that does not return) ends the process
        with status 1, as a failed rank."""
        if self.ps:
            self.ps.close()
        if self._stop_threads(self.timeout_s + 5):
            return
        _log.warning("esa.torch: rank %d: the hook's thread is still in a "
                     "call %g s after the interpreter began to exit: exit "
                     "status 1", self.rank, self.timeout_s + 5)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    def close(self, barrier=True):
        """Stop the thread; the ranks finish together (rank 0 stops its PS
        once every rank is done)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            failed = self._failed
        # A failed hook's thread may be in a call that has yet to time
        # out: not waited for here, but at exit.
        if self._stop_threads(0 if failed else None):
            atexit.unregister(self._at_exit)
        with self._lock:
            failed = self._failed
        try:
            if barrier and not failed:
                self._close_agree()
        finally:
            if self.ps:
                self.ps.close()
            if not failed:
                self._endpoint_stats = self.endpoint.stats()
                self.endpoint.close()


def _unwrap(fut):
    value = fut.value()
    if isinstance(value, Exception):
        raise value
    return value


def allreduce_hook(state, bucket):
    """The DDP comm hook: state is an EsaHook (register() passes it)."""
    return state.submit(bucket)


def register(model, process_group=None, hook=None, **settings):
    """Register the hook on a DistributedDataParallel model; the job's
    settings from keyword arguments or the environment (module doc).
    hook: the EsaHook of another model of this process, to share (one
    endpoint, one queue: the buckets of all its models in the order DDP
    hands them over, the same on every rank)."""
    if hook is None:
        hook = EsaHook(process_group, **settings)
    elif settings or process_group is not None:
        raise TypeError("esa.torch: register(hook=...) shares that hook "
                        "and its settings; pass no others")
    model.register_comm_hook(hook, allreduce_hook)
    return hook
