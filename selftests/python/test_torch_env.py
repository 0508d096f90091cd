#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""esa.torch's one-armed settings: ESA_SWITCH and ESA_TOKEN.

- config_from_env() reads them (the token by the library's parser) and
  refuses a bad value naming the variable and the library's reason;
- the hook's endpoint gets them (its effective configuration says so),
  and without them has no switch and no token, as before;
- a switch port other than 47000 is the library's error;
- rank 0 may serve the PS at an address of its own host when a switch
  address is set (its packets go to the switch, not to its own host).
No packet is summed: the hook is made and closed. Prints TAP.
"""
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tools" / "python"), str(ROOT / "selftests" / "lib")]

import torch.distributed as dist  # noqa: E402

import esa  # noqa: E402
import esa.torch  # noqa: E402
from tap import Tap  # noqa: E402

# A loopback network of this run's own, from the pid.
NET = "127.%d.%d" % (20 + os.getpid() % 200, (os.getpid() // 200) % 250)
TOKEN = "00c0ffee12345678"


def hook_config():
    """The effective endpoint configuration of a hook from the environment."""
    hook = esa.torch.EsaHook()
    try:
        return hook.endpoint.config()
    finally:
        hook.close()


def main():
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="esa-env.")
    dist.init_process_group("gloo", init_method="file://%s/pg" % tmp, rank=0,
                            world_size=1)

    env = {k: v for k, v in os.environ.items() if not k.startswith("ESA_")}
    os.environ.clear()
    os.environ.update(env, ESA_JOB_ID="1", ESA_PS=NET + ".1",
                      ESA_WORKERS=NET + ".10:47000", ESA_AGG_SLOTS="64")

    cfg = esa.torch.config_from_env()
    t.ok("switch" not in cfg and "token" not in cfg,
         "without ESA_SWITCH and ESA_TOKEN: no switch, no token")
    c = hook_config()
    t.ok(c["switch"] is None and c["token"] == 0,
         "... and the endpoint has none", repr(c))

    os.environ.update(ESA_SWITCH=NET + ".250", ESA_TOKEN=TOKEN)
    cfg = esa.torch.config_from_env()
    t.ok(cfg["switch"] == NET + ".250" and cfg["token"] == 0x00c0ffee12345678,
         "ESA_SWITCH and ESA_TOKEN read", repr(cfg))
    c = hook_config()
    t.ok(c["switch"] == NET + ".250:47000" and
         c["token"] == 0x00c0ffee12345678 and c["values_per_packet"] == 361,
         "the endpoint sends to the switch with the token, 361 values per "
         "packet", repr(c))

    for var, value, reason in (
            ("ESA_TOKEN", "xyz", "is not a token of 16 hexadecimal digits"),
            ("ESA_TOKEN", "0123", "is not a token of 16 hexadecimal digits"),
            ("ESA_TOKEN", "0" * 16, "0 means no token"),
            ("ESA_SWITCH", "10.0.0", "bad IPv4 address '10.0.0'"),
            ("ESA_SWITCH", "sw.example", "bad IPv4 address")):
        saved = os.environ[var]
        os.environ[var] = value
        t.raises("%s=%s is refused" % (var, value), ValueError,
                 "%s=%r: " % (var, value), esa.torch.config_from_env)
        t.raises("... with the library's reason", ValueError, reason,
                 esa.torch.config_from_env)
        os.environ[var] = saved

    # A list: the job over several servers, ESA_SWITCHES its other name.
    os.environ["ESA_SWITCH"] = NET + ".250," + NET + ".251"
    c = hook_config()
    t.ok(c["switch"] == "%s.250:47000,%s.251:47000" % (NET, NET),
         "ESA_SWITCH with a list: the endpoint has both servers", repr(c))
    os.environ["ESA_SWITCHES"] = os.environ.pop("ESA_SWITCH")
    c = hook_config()
    t.ok(c["switch"] == "%s.250:47000,%s.251:47000" % (NET, NET),
         "ESA_SWITCHES: the same", repr(c))
    os.environ["ESA_SWITCH"] = NET + ".250"
    t.raises("ESA_SWITCH and ESA_SWITCHES both set", ValueError,
             "ESA_SWITCH and ESA_SWITCHES are both set",
             esa.torch.config_from_env)
    del os.environ["ESA_SWITCH"]
    os.environ["ESA_SWITCHES"] = NET + ".250,sw"
    t.raises("ESA_SWITCHES with a bad entry is refused", ValueError,
             "ESA_SWITCHES='%s.250,sw': " % NET, esa.torch.config_from_env)
    t.raises("... the entry named", ValueError,
             "switch list '%s.250,sw': entry 2 'sw': bad IPv4 address" % NET,
             esa.torch.config_from_env)
    del os.environ["ESA_SWITCHES"]

    os.environ["ESA_SWITCH"] = NET + ".250:47001"
    t.raises("a switch port other than 47000", esa.Error,
             "switch port 47001 is not 47000", esa.torch.EsaHook)
    os.environ["ESA_SWITCH"] = NET + ".250"

    # The PS at an address of rank 0's host: refused on the path (it would
    # never see rank 0's packets), allowed with a one-armed switch.
    os.environ.update(ESA_PS=NET + ".1:47000", ESA_PS_START="1")
    hook = esa.torch.EsaHook()
    try:
        t.ok(hook.ps is not None, "with ESA_SWITCH rank 0 serves the PS "
             "at an address of its own host")
    finally:
        hook.close()
    del os.environ["ESA_SWITCH"]
    t.raises("... without it, refused", RuntimeError,
             "is an address of rank 0's host", esa.torch.EsaHook)
    dist.destroy_process_group()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
