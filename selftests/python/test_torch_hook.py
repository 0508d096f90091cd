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
    print(json.dumps(dict(rank=rank, seen=seen, worst=worst,
                          stats=hook.stats())), flush=True)


# ------------------------------------------------------------ the test

def main():
    from tap import Tap
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="esa-hook.")
    dist.init_process_group("gloo", init_method="file://%s/pg" % tmp, rank=0,
                            world_size=1)

    def raises(desc, kind, fragment, fn, *a, **kw):
        try:
            fn(*a, **kw)
        except kind as e:
            return t.ok(fragment in str(e), "%s: %s" % (desc, e))
        except Exception as e:  # noqa: BLE001: the failure
            return t.ok(False, desc, "raised %r" % e)
        return t.ok(False, desc, "no exception")

    env = {k: v for k, v in os.environ.items() if not k.startswith("ESA_")}
    os.environ.clear()
    os.environ.update(env)
    raises("nothing configured", ValueError,
           "set ESA_JOB_ID, ESA_PS, ESA_WORKERS, ESA_AGG_SLOTS",
           esa.torch.config_from_env)
    os.environ.update(ESA_JOB_ID="1", ESA_PS=LO, ESA_WORKERS=LO + ":47101",
                      ESA_AGG_SLOTS="many")
    raises("a setting that is not a number", ValueError, "ESA_AGG_SLOTS='many'",
           esa.torch.config_from_env)
    os.environ["ESA_AGG_SLOTS"] = "64"
    raises("an unknown setting", TypeError, "colour",
           esa.torch.config_from_env, {"colour": 1})
    raises("2 worker addresses for a world of 1", ValueError,
           "2 worker addresses (ESA_WORKERS) for a world of 1",
           esa.torch.EsaHook, workers=[LO + ":47101", LO + ":47102"])
    raises("rank 0 to start a PS at an address of its own host",
           RuntimeError, "is an address of rank 0's host",
           esa.torch.EsaHook, ps_start=True, ps=LO + ":47100")
    raises("a library error surfaces with the library's message",
           esa.Error, "job id 0 out of range", esa.torch.EsaHook, job_id=0)
    # Rank 0 starts its PS (in this namespace, named by path), then the
    # endpoint fails: the PS thread must not be left serving the port.
    raises("rank 0's endpoint fails after its PS started",
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
        t.ok("not summed within 2 s" in str(e) and took < 5,
             "a silent PS: backward() raises after %.1f s: %s"
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
    sys.exit(t.done())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank_main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                  sys.argv[5].split(","))
    else:
        main()
