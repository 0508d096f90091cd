# SPDX-License-Identifier: GPL-2.0
"""A DDP communication hook that allreduces gradients through the ESA switch.

    import esa.torch
    dist.init_process_group("gloo")
    model = DistributedDataParallel(model)
    hook = esa.torch.register(model)    # the job from the environment
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
  (fixed point at 2^scale_log2, the same scale on every rank), divides by
  the world size (DDP does not when a hook is set) and completes the
  future. Packets whose sum overflowed are redone by the library at
  smaller scales; such buckets are counted (overflow_buckets). A bucket
  holding a value that is not finite fails on every rank alike and is
  summed through the process group (gloo) instead, from a copy of its
  input, so NaN and infinities propagate as with plain DDP
  (fallback_buckets).
- A bucket not summed within timeout_s (a rank died, the switch or the PS
  stopped answering), or an error of the library, fails the future with a
  RuntimeError that says which bucket, what the library said and what to
  check; every later bucket fails with it, so backward() raises on every
  surviving rank within timeout_s instead of hanging.
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
"""

import ctypes
import errno
import os
import queue
import socket
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

# (name, environment variable, parser); None: no default.
_ENV = [
    ("job_id", "ESA_JOB_ID", int),
    ("ps", "ESA_PS", str),
    ("workers", "ESA_WORKERS", lambda s: [w.strip() for w in s.split(",")]),
    ("agg_slots", "ESA_AGG_SLOTS", int),
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
]
_REQUIRED = ("job_id", "ps", "workers", "agg_slots")
_DEFAULTS = {"scale_log2": SCALE_LOG2, "timeout_s": 60.0, "ps_start": False,
             "ps_netns": None, "ps_result_on_complete": True,
             "verify": False}
_ENDPOINT_KEYS = ("agg_offset", "agg_span", "window", "priority",
                  "values_per_packet", "timeout_us", "max_resends")


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

    def __init__(self, bind, job_id, workers, netns, result_on_complete):
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error = None
        self.stats = None
        self._thread = threading.Thread(
            target=self._serve,
            args=(bind, job_id, workers, netns, result_on_complete),
            name="esa-ps", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error:
            raise self._error

    def _serve(self, bind, job_id, workers, netns, result_on_complete):
        try:
            if netns:
                _enter_netns(netns)
            elif _is_local(esa.parse_addr(bind)[0]):
                # Packets to an address of this host never reach the
                # switch: rank 0's own contributions would bypass it.
                raise RuntimeError(
                    "esa.torch: ESA_PS %s is an address of rank 0's host; "
                    "the PS must sit behind its own switch port: another "
                    "host, or a network namespace given in ESA_PS_NETNS"
                    % bind)
            ps = esa.ParameterServer(bind,
                                     result_on_complete=result_on_complete)
            ps.add_job(job_id, len(workers), workers)
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
        self.ps = None
        if cfg["ps_start"] and self.rank == 0:
            self.ps = _ServedPs(cfg["ps"], cfg["job_id"], workers,
                                cfg["ps_netns"], cfg["ps_result_on_complete"])
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
        self.counters = dict(buckets=0, values=0, overflow_buckets=0,
                             redo_packets=0, fallback_buckets=0,
                             verified_buckets=0, max_error_ratio=0.0,
                             allreduce_s=0.0)
        self._failed = None
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

    # ---------------------------------------------------- the hook's side

    def submit(self, bucket):
        tensor = bucket.buffer()
        if tensor.dtype != torch.float32 or tensor.device.type != "cpu":
            raise TypeError("esa.torch: gradients must be float32 on the "
                            "CPU, bucket %d is %s on %s"
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
                self._reduce(tensor, index)
                self.counters["allreduce_s"] += time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001: handed to DDP
                self._fail(e)
            with self._lock:
                self._busy = None
                failed = self._failed
            self._complete(fut, failed, tensor)

    def _complete(self, fut, error, tensor=None):
        """Complete fut once (the watchdog may have failed it already)
        with the summed tensor or the error (_unwrap raises it)."""
        with self._lock:
            if not fut.done():
                fut.set_result(error or tensor)

    def _reduce(self, tensor, index):
        arr = tensor.numpy()            # the bucket's memory
        saved = arr.copy()              # for the fallback and verify
        redo0 = self.endpoint.stats()["f32_redo_packets"]
        try:
            self.endpoint.allreduce_f32(arr)
        except esa.Error as e:
            if e.errno != errno.ERANGE:
                raise RuntimeError(
                    "esa.torch: rank %d: allreduce of bucket %d (%d values) "
                    "through the switch failed: %s. A rank may have died, or "
                    "the switch or the PS stopped answering."
                    % (self.rank, index, arr.size, e.strerror)) from e
            # Not finite somewhere: every rank gets ERANGE here alike.
            arr[:] = saved
            dist.all_reduce(tensor, group=self.pg)
            self.counters["fallback_buckets"] += 1
        else:
            redo = self.endpoint.stats()["f32_redo_packets"] - redo0
            if redo:
                self.counters["overflow_buckets"] += 1
                self.counters["redo_packets"] += redo
            if self.verify:
                self._check(tensor, saved, index)
        tensor.div_(self.world)
        self.counters["buckets"] += 1
        self.counters["values"] += arr.size

    def _check(self, tensor, saved, index):
        """The ESA sum against gloo's, within both error bounds."""
        ref = torch.from_numpy(np.concatenate([saved, np.abs(saved)]))
        dist.all_reduce(ref, group=self.pg)
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
                    "within %g s: a rank may have died, or the switch or "
                    "the PS stopped answering (ESA_TIMEOUT_S)"
                    % (self.rank, busy[1], busy[2], self.timeout_s)))
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
        out["endpoint"] = self._endpoint_stats or self.endpoint.stats()
        if self.ps and self.ps.stats:
            out["ps"] = self.ps.stats
        return out

    def close(self, barrier=True):
        """Stop the thread; rank 0 stops its PS once every rank is done
        (a barrier: a rank whose last result was lost still needs it)."""
        if self._thread is None:
            return
        self._queue.put(None)
        with self._lock:
            failed = self._failed
        if not failed:
            self._thread.join()
        self._watch_stop.set()
        self._watchdog.join()
        if barrier and not failed and self.world > 1:
            dist.barrier(group=self.pg)
        if self.ps:
            self.ps.close()
        if not failed:
            self._endpoint_stats = self.endpoint.stats()
            self.endpoint.close()
        self._thread = None


def _unwrap(fut):
    value = fut.value()
    if isinstance(value, Exception):
        raise value
    return value


def allreduce_hook(state, bucket):
    """The DDP comm hook: state is an EsaHook (register() passes it)."""
    return state.submit(bucket)


def register(model, process_group=None, **settings):
    """Register the hook on a DistributedDataParallel model; the job's
    settings from keyword arguments or the environment (module doc)."""
    state = EsaHook(process_group, **settings)
    model.register_comm_hook(state, allreduce_hook)
    return state
