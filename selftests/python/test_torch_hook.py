#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The DDP comm hook esa.torch on loopback, without a switch (a host-only
PS in this process does the sums), fast:

- configuration errors name the variable or the cause: settings missing,
  not numbers, unknown; worker addresses not matching the world; a PS to
  start at an address of this host (it would never see rank 0's packets);
  rank 0's endpoint failing after its PS started stops that PS;
- a PS that never answers: backward() raises the hook's error within
  timeout_s; a float64 model: the hook says gradients must be float32;
- 3 ranks: the hook returns a future (torch.futures.Future.then's), buckets are summed in
  the order DDP hands them over (the same on every rank), every bucket is
  within the fixed-point bound of gloo's sum (verify), and the gradients
  equal plain DDP's average (divided by the world size).
Prints TAP.
"""
import datetime
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools" / "python"), str(ROOT / "selftests" / "lib")]
# Debian 13 builds torch without libuv, which its TCPStore asks for unless
# told otherwise (Documentation/pytorch.rst); older torch ignores this.
os.environ.setdefault("USE_LIBUV", "0")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import esa  # noqa: E402
import esa.torch  # noqa: E402

WORLD = 3
LO = "127.0.0.1"


def net(dtype=torch.float32):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64),
                         nn.ReLU(), nn.Linear(64, 10)).to(dtype)


def ddp(model):
    # Several buckets (DDP's first one is 1 MiB unless this is set).
    dist._DEFAULT_FIRST_BUCKET_BYTES = 8192
    return DDP(model, bucket_cap_mb=8192 / 2**20)


# ------------------------------------------------------------ one rank

def rank_main(rank, port, ps, workers):
    """Rank of the 3-rank case: prints its findings as JSON."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (LO, port),
                            rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=60))
    a, b = ddp(net()), ddp(net())
    hook = esa.torch.EsaHook(job_id=2, ps=ps, workers=workers, agg_slots=256,
                             verify=True, timeout_s=60)
    seen = []

    def spy(state, bucket):
        fut = esa.torch.allreduce_hook(state, bucket)
        seen.append([bucket.index(), isinstance(fut, torch._C.Future)])
        return fut

    a.register_comm_hook(hook, spy)
    gen = torch.Generator().manual_seed(100 + rank)
    worst = 0.0
    for step in range(4):
        x = torch.randn(16, 32, generator=gen)
        y = torch.randint(0, 10, (16,), generator=gen)
        for m in (a, b):
            m.zero_grad()
            F.cross_entropy(m(x), y).backward()
        k = hook.endpoint.stats()["f32_min_scale_log2"]
        for pa, pb in zip(a.parameters(), b.parameters()):
            # Plain DDP averages; the hook must too. Its fixed point
            # rounds to 2^-(k+1) per rank; both round floats.
            tol = 2.0 ** -(k + 1) + 2.0 ** -20 * pb.grad.abs()
            worst = max(worst, float(((pa.grad - pb.grad).abs() / tol).max()))
    hook.close()
    out = dict(rank=rank, seen=seen, worst=worst, stats=hook.stats())
    out["options"] = ddp_options(rank, ps, jobs_workers(workers, 1))
    out["fallback"] = fallback(rank, jobs_workers(workers, 2), "gloo")
    out["error"] = fallback(rank, jobs_workers(workers, 3), "error")
    print(json.dumps(out), flush=True)


def jobs_workers(workers, k):
    """The worker addresses of the k-th job after the first: ports
    WORLD * k above."""
    return ["%s:%d" % (LO, int(w.rsplit(":", 1)[1]) + WORLD * k)
            for w in workers]


class UnusedBranch(nn.Module):
    """A model whose second head gets no gradient (DDP's
    find_unused_parameters exchanges a map of such parameters over gloo
    during the backward pass)."""

    def __init__(self):
        super().__init__()
        self.body, self.unused = net(), nn.Linear(32, 10)

    def forward(self, x):
        return self.body(x)


# Bucket dtypes below float32 that DDP can wrap here: torch 1.13's gloo
# has no bfloat16 (DDP's broadcast of the initial weights fails).
LOW_DTYPES = [torch.float16] + (
    [torch.bfloat16] if torch.__version__ >= "2" else [])


class LowPrecision(nn.Module):
    """Weights in dtype, computed in float32 (torch 1.13 has no float16
    matmul on the CPU): gradients, and DDP's buckets, in dtype."""

    def __init__(self, dtype):
        super().__init__()
        torch.manual_seed(0)
        self.w1 = nn.Parameter((torch.randn(64, 32) / 8).to(dtype))
        self.w2 = nn.Parameter((torch.randn(10, 64) / 8).to(dtype))

    def forward(self, x):
        return F.linear(F.relu(F.linear(x, self.w1.float())), self.w2.float())


def low_precision_worst(model, ref, k):
    """model's gradients (DDP with the hook) against ref's (no DDP)
    summed in float32 by gloo and averaged, as a fraction of the
    tolerance: the fixed point plus one rounding to the dtype."""
    worst = 0.0
    for p, q in zip(model.parameters(), ref.parameters()):
        want = q.grad.float()
        dist.all_reduce(want)
        want = (want / WORLD).to(q.dtype).float()
        tol = 2.0 ** -(k + 1) + torch.finfo(q.dtype).eps * want.abs()
        worst = max(worst, float(((p.grad.float() - want).abs() / tol).max()))
    return worst


def grads_close(a, b, k):
    """Worst difference of two models' gradients as a fraction of the
    tolerance (fixed point at 2^k against float sums); NaN where both are
    NaN is equal."""
    worst = 0.0
    for pa, pb in zip(a.parameters(), b.parameters()):
        if pa.grad is None or pb.grad is None:
            if (pa.grad is None) != (pb.grad is None):
                return float("inf")
            continue
        ga, gb = pa.grad.float(), pb.grad.float()
        if not torch.equal(ga.isnan(), gb.isnan()):
            return float("inf")
        ok = ~ga.isnan()
        if not ok.any():
            continue
        tol = 2.0 ** -(k + 1) + 2.0 ** -20 * gb[ok].abs()
        worst = max(worst, float(((ga[ok] - gb[ok]).abs() / tol).max()))
    return worst


def ddp_options(rank, ps, workers):
    """Job 3: DDP's options with the hook, each against plain DDP on the
    default group: find_unused_parameters with a NaN step and verify (the
    hook's gloo calls alongside DDP's own), a static graph, gradient
    accumulation under no_sync(), two models sharing one hook."""
    unused = DDP(UnusedBranch(), bucket_cap_mb=8192 / 2**20,
                 find_unused_parameters=True)
    static = DDP(net(), bucket_cap_mb=8192 / 2**20, static_graph=True)
    ref_unused = DDP(UnusedBranch(), bucket_cap_mb=8192 / 2**20,
                     find_unused_parameters=True)
    ref_static = DDP(net(), bucket_cap_mb=8192 / 2**20, static_graph=True)
    hook = esa.torch.register(unused, job_id=3, ps=ps, workers=workers,
                              agg_slots=256, verify=True, timeout_s=60)
    esa.torch.register(static, hook=hook)
    low = {dt: (DDP(LowPrecision(dt)), LowPrecision(dt))
           for dt in LOW_DTYPES}
    for m, _ in low.values():
        esa.torch.register(m, hook=hook)
    low_worst = {str(dt): 0.0 for dt in low}
    gen = torch.Generator().manual_seed(200 + rank)
    worst = 0.0
    for step in range(6):
        x = torch.randn(16, 32, generator=gen)
        y = torch.randint(0, 10, (16,), generator=gen)
        for m in (unused, ref_unused, static, ref_static):
            m.zero_grad()
            # Accumulate a half batch first (not with a static graph:
            # torch 1.13's DDP asserts on no_sync() there, with or
            # without a hook).
            if step % 2 and m in (unused, ref_unused):
                with m.no_sync():
                    F.cross_entropy(m(x[:8]), y[:8]).backward()
                x1, y1 = x[8:], y[8:]
            else:
                x1, y1 = x, y
            loss = F.cross_entropy(m(x1), y1)
            if step == 4 and m in (unused, ref_unused):
                loss = loss * float("nan")
            loss.backward()
        for m, ref in low.values():
            for x1 in (m, ref):
                x1.zero_grad()
                F.cross_entropy(x1(x), y).backward()
        k = hook.endpoint.stats()["f32_min_scale_log2"]
        worst = max(worst, grads_close(unused, ref_unused, k),
                    grads_close(static, ref_static, k))
        for dt, (m, ref) in low.items():
            low_worst[str(dt)] = max(low_worst[str(dt)],
                                     low_precision_worst(m, ref, k))
    hook.close()
    return dict(worst=worst, low_worst=low_worst, stats=hook.stats())


class LocalPs:
    """A host-only PS of one job served by a thread of this process,
    stopped and started again at will (a PS killed and restarted)."""

    def __init__(self, addr, job_id, workers):
        self.args = addr, job_id, workers
        self.thread = None

    def start(self):
        ps = esa.ParameterServer(self.args[0], host_only=True)
        ps.add_job(self.args[1], WORLD, self.args[2])
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ps,))
        self.thread.start()

    def _serve(self, ps):
        with ps:
            while not self.stop_ev.is_set():
                ps.poll(20)

    def stop(self):
        if self.thread:
            self.stop_ev.set()
            self.thread.join()
            self.thread = None


def fallback(rank, workers, policy):
    """The PS (rank 0's thread) stops at step 5 and, under policy gloo,
    starts again at step 25 of 60: the hook falls back to gloo and comes
    back; the parameters against plain DDP's. Policy error: every rank
    raises, within the timeout. Rank 0 starts late."""
    port = int(workers[0].rsplit(":", 1)[1]) + 50
    ps = LocalPs("%s:%d" % (LO, port), 4, workers) if rank == 0 else None
    if ps:
        ps.start()
    dist.barrier()
    model = DDP(net(), bucket_cap_mb=8192 / 2**20)
    ref = DDP(net(), bucket_cap_mb=8192 / 2**20)
    hook = esa.torch.register(model, job_id=4, ps="%s:%d" % (LO, port),
                              workers=workers, agg_slots=256, timeout_s=10,
                              fallback=policy, detect_s=0.5, probe_s=0.3,
                              probe_timeout_s=0.3)
    opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (model, ref)]
    gen = torch.Generator().manual_seed(300 + rank)
    if rank == 0:
        # Reaching the first backward 1.5 s after the others is no fault
        # (detect_s 0.5 applies once the switch has answered).
        time.sleep(1.5)
    out = dict(error=None)
    for step in range(60):
        if step == 5:
            out["healthy_gloo_calls"] = hook.stats()["gloo_calls"]
        if ps and step == 5:
            ps.stop()
        if ps and step == 25:
            ps.start()
        x = torch.randn(16, 32, generator=gen)
        y = torch.randint(0, 10, (16,), generator=gen)
        t0 = time.monotonic()
        try:
            for m, o in zip((model, ref), opts):
                o.zero_grad()
                F.cross_entropy(m(x), y).backward()
                o.step()
        except RuntimeError as e:
            out.update(error=str(e).split("\n")[0], step=step,
                       took=time.monotonic() - t0)
            break
        time.sleep(0.05)        # the PS stays away for a second
    if out["error"] is None:
        hook.close()
        out["params_sha256"] = hashlib.sha256(b"".join(
            p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
        out["param_diff"] = max(float((a - b).abs().max()) for a, b in zip(
            model.parameters(), ref.parameters()))
    out["stats"] = hook.stats()
    out["stats"].pop("endpoint")
    dist.barrier()
    if ps:
        ps.stop()
    return out


def crash_main(rank, port, ps, workers):
    """A rank of a job whose rank 2 dies at step 3: the others let the
    hook's error end them, as a training script does."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (LO, port),
                            rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=20))
    m = ddp(net())
    esa.torch.register(m, job_id=5, ps=ps, workers=workers, agg_slots=64,
                       timeout_s=5, detect_s=0.5)
    for step in range(100):
        if rank == 2 and step == 3:
            os.kill(os.getpid(), 9)
        F.cross_entropy(m(torch.randn(8, 32)),
                        torch.zeros(8, dtype=torch.long)).backward()


def crash_runs(t, base, runs):
    """Exit statuses of the ranks that survive rank 2, over runs."""
    ps_addr = "%s:%d" % (LO, base)
    workers = ["%s:%d" % (LO, base + 1 + r) for r in range(WORLD)]
    codes, aborts = [], 0
    for run in range(runs):
        ps = esa.ParameterServer(ps_addr, host_only=True)
        ps.add_job(5, WORLD, workers)
        stop = threading.Event()
        server = threading.Thread(
            target=lambda: [ps.poll(20) for _ in iter(stop.is_set, True)])
        server.start()
        procs = [subprocess.Popen(
            [sys.executable, __file__, "--crash", str(r),
             str(base + 10 + run), ps_addr, ",".join(workers)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for r in range(WORLD)]
        for p in procs[:2]:
            try:
                err = p.communicate(timeout=120)[1]
            except subprocess.TimeoutExpired:
                p.kill()
                err = p.communicate()[1]
            codes.append(p.returncode)
            aborts += "terminate called" in err
        procs[2].wait()
        stop.set()
        server.join()
        ps.close()
    return codes, aborts


# ------------------------------------------------------------ the test

def main():
    from tap import Tap
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="esa-hook.")
    dist.init_process_group("gloo", init_method="file://%s/pg" % tmp, rank=0,
                            world_size=1)

    env = {k: v for k, v in os.environ.items() if not k.startswith("ESA_")}
    os.environ.clear()
    os.environ.update(env)
    t.raises("nothing configured", ValueError,
             "set ESA_JOB_ID, ESA_PS, ESA_WORKERS, ESA_AGG_SLOTS",
             esa.torch.config_from_env)
    os.environ.update(ESA_JOB_ID="1", ESA_PS=LO, ESA_WORKERS=LO + ":47101",
                      ESA_AGG_SLOTS="many")
    t.raises("a setting that is not a number", ValueError,
             "ESA_AGG_SLOTS='many'", esa.torch.config_from_env)
    os.environ["ESA_AGG_SLOTS"] = "64"
    t.raises("an unknown setting", TypeError, "colour",
             esa.torch.config_from_env, {"colour": 1})
    t.raises("2 worker addresses for a world of 1", ValueError,
             "2 worker addresses (ESA_WORKERS) for a world of 1",
             esa.torch.EsaHook, workers=[LO + ":47101", LO + ":47102"])
    t.raises("rank 0 to start a PS at an address of its own host",
             RuntimeError, "is an address of rank 0's host",
             esa.torch.EsaHook, ps_start=True, ps=LO + ":47100")
    t.raises("a library error surfaces with the library's message",
             esa.Error, "job id 0 out of range", esa.torch.EsaHook, job_id=0)
    # Rank 0 starts its PS (in this namespace, named by path), then the
    # endpoint fails: the PS thread must not be left serving the port.
    t.raises("rank 0's endpoint fails after its PS started",
             esa.Error, "values per packet", esa.torch.EsaHook, ps_start=True,
             ps=LO + ":47100", ps_netns="/proc/self/ns/net",
             values_per_packet=100000)
    left = [th.name for th in threading.enumerate() if th.name == "esa-ps"]
    try:
        esa.ParameterServer(LO + ":47100").close()
        freed = ""
    except esa.Error as e:
        freed = str(e)
    t.ok(not left and not freed,
         "... its PS stopped: no esa-ps thread, port 47100 free",
         "left: %s %s" % (left, freed))

    # Nobody answers: backward raises within timeout_s.
    m = ddp(net())
    hook = esa.torch.register(m, ps=LO + ":47199", timeout_s=2)
    t0 = time.monotonic()
    try:
        F.cross_entropy(m(torch.randn(4, 32)), torch.zeros(4, dtype=torch.long)).backward()
        t.ok(False, "a silent PS: backward() raises")
    except RuntimeError as e:
        took = time.monotonic() - t0
        t.ok("is not running: its host answers 'port unreachable'" in str(e)
             and took < 2,
             "a silent PS: backward() raises within timeout_s, with the "
             "library's diagnosis, after %.1f s: %s"
             % (took, str(e).split("\n")[0]))
    hook.close()
    m = ddp(net(torch.float64))
    hook = esa.torch.register(m, workers=[LO + ":47103"])
    try:
        m(torch.randn(4, 32, dtype=torch.float64)).sum().backward()
        t.ok(False, "a float64 model is refused")
    except (TypeError, RuntimeError) as e:
        t.ok("must be float32" in str(e), "a float64 model is refused: %s"
             % str(e).split("\n")[0])
    hook.close(barrier=False)
    dist.destroy_process_group()

    # Three ranks, a host-only PS here.
    base = 41000 + os.getpid() % 5000
    ps_addr = "%s:%d" % (LO, base)
    workers = ["%s:%d" % (LO, base + 1 + r) for r in range(WORLD)]
    ps = esa.ParameterServer(ps_addr, host_only=True)
    ps.add_job(2, WORLD, workers)
    ps.add_job(3, WORLD, jobs_workers(workers, 1))
    stop = threading.Event()
    server = threading.Thread(target=lambda: [ps.poll(50) for _ in iter(stop.is_set, True)])
    server.start()
    procs = [subprocess.Popen(
        [sys.executable, __file__, "--rank", str(r), str(base + 100), ps_addr,
         ",".join(workers)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for r in range(WORLD)]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        try:
            outs.append(json.loads(out.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            t.diag(err[-1500:])
            outs.append(None)
    stop.set()
    server.join()
    ps.close()
    if not t.ok(all(outs), "3 ranks ran DDP with the hook on loopback"):
        sys.exit(t.done())
    t.ok(all(k for o in outs for _, k in o["seen"]),
         "the hook returns a future (torch.futures.Future.then's, as DDP's "
         "own hooks do)")
    orders = [[i for i, _ in o["seen"]] for o in outs]
    n = outs[0]["stats"]["buckets"]
    t.ok(all(o == orders[0] for o in orders) and len(set(orders[0])) > 1 and
         all(o["stats"]["endpoint"]["allreduces"] == n == len(orders[0])
             for o in outs),
         "%d buckets (%d distinct), summed in DDP's order, the same on every "
         "rank: %s" % (n, len(set(orders[0])), orders[0]))
    worst = max(o["stats"]["max_error_ratio"] for o in outs)
    t.ok(all(o["stats"]["verified_buckets"] == n for o in outs) and worst <= 1,
         "every bucket within the fixed-point bound of gloo's sum (worst %.3f "
         "of it)" % worst)
    worst = max(o["worst"] for o in outs)
    t.ok(worst <= 1, "gradients equal plain DDP's average (divided by the "
         "world size): worst %.3f of the tolerance" % worst)

    opt = [o["options"] for o in outs]
    worst = max(o["worst"] for o in opt)
    t.ok(worst <= 1 and all(o["stats"]["verified_buckets"] > 0 and
                            o["stats"]["max_error_ratio"] <= 1 for o in opt),
         "find_unused_parameters (a NaN step, every bucket verified), a "
         "static graph, no_sync() accumulation, two models on one hook: "
         "gradients equal plain DDP's, worst %.3f of the tolerance" % worst)
    low = {dt: max(o["low_worst"][dt] for o in opt)
           for dt in opt[0]["low_worst"]}
    t.ok(all(w <= 1 for w in low.values()),
         "%s buckets (summed as float32 on the host, "
         "returned in their dtype): gradients equal gloo's float32 average "
         "rounded to the dtype, worst of the tolerance %s"
         % (" and ".join(low), {k: round(v, 3) for k, v in low.items()}))
    t.ok(all(o["stats"]["nonfinite_buckets"] > 0 for o in opt),
         "... the NaN step's buckets summed through gloo (%s)"
         % [o["stats"]["nonfinite_buckets"] for o in opt])

    fb = [o["fallback"] for o in outs]
    t.ok(all(f["error"] is None for f in fb) and
         len({f["params_sha256"] for f in fb}) == 1,
         "rank 0 1.5 s late to the first step, the PS stopped at step 5, "
         "started at 25 of 60: every rank trains on, parameters "
         "bit-identical", [f["error"] for f in fb])
    if all(f["error"] is None for f in fb):
        diff = max(f["param_diff"] for f in fb)
        t.ok(diff < 1e-5, "... and equal to plain DDP's within the fixed "
             "point (%.2g): no gradient lost or summed twice" % diff)
    t.ok(all(f["healthy_gloo_calls"] == 0 for f in fb),
         "... the 5 healthy steps before made no gloo call (%s)"
         % [f["healthy_gloo_calls"] for f in fb])
    st = [f["stats"] for f in fb]
    t.ok(all(x["fallbacks"] == 1 and x["returns"] == 1 and
             x["fallback_buckets"] > 0 and x["switch_downtime_s"] > 0 and
             x["probes"] >= 2 for x in st),
         "... one fallback, one return counted on every rank: %s" % [
             {k: round(x[k], 2) for k in ("fallbacks", "returns",
              "fallback_buckets", "probes", "switch_downtime_s")}
             for x in st])
    er = [o["error"] for o in outs]
    t.ok(all(e["error"] and "ESA_FALLBACK=error" in e["error"] and
             "is not running" in e["error"] and e["step"] == 5 and
             e["took"] < 10 for e in er),
         "ESA_FALLBACK=error: every rank raises at step 5 within the "
         "timeout, the library's diagnosis in its error (%s s)"
         % [round(e.get("took", -1), 1) for e in er], repr(er))

    # torch 1.13: a thread that comes back from C++ while the interpreter
    # exits aborts it; a rank failed by the hook must exit with status 1.
    codes, aborts = crash_runs(t, base + 200, 3)
    t.ok(codes == [1] * len(codes) and not aborts,
         "rank 2 killed, 3 times: the other ranks exit with status 1, never "
         "an abort (statuses %s)" % codes)
    sys.exit(t.done())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--crash":
        crash_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                   sys.argv[5].split(","))
    elif len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                  sys.argv[5].split(","))
    else:
        main()
