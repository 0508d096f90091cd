#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""`make install DESTDIR=...` into a temporary root, then use what it put
there as a user would: the tools run, a C program builds against libesa
with nothing but `pkg-config --cflags --libs libesa` and runs, and the
installed Python package (not the source tree's) imports and finds the
installed library. Prints TAP.
"""
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "selftests" / "lib"))
from tap import Tap  # noqa: E402

t = Tap()
PREFIX = "/usr/local"
PROG = r"""
#include <errno.h>
#include <stdio.h>
#include <esa.h>

int main(void)
{
	struct sockaddr_in sa;

	if (esa_parse_addr("10.0.0.300", ESA_UDP_PORT, &sa) != -EINVAL)
		return 1;
	printf("%s\n", esa_last_error());
	return 0;
}
"""


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


with tempfile.TemporaryDirectory(prefix="esa-install.") as tmp:
    dest = pathlib.Path(tmp, "root")
    r = run(["make", "-s", "-C", str(ROOT), "install", "DESTDIR=%s" % dest,
             "PREFIX=%s" % PREFIX])
    if not t.ok(r.returncode == 0, "make install DESTDIR=... PREFIX=%s" % PREFIX,
                r.stdout + r.stderr):
        sys.exit(t.done())
    top = dest / PREFIX.lstrip("/")
    libdir = top / "lib"
    for tool in ("aggctl", "esa-job", "esa-ps"):
        r = run([str(top / "bin" / tool), "--help"])
        t.ok(r.returncode == 0 and "usage" in (r.stdout + r.stderr),
             "installed %s runs (--help)" % tool, r.stderr[-300:])
    so = sorted(p.name for p in libdir.glob("libesa.so*"))
    t.ok(so == ["libesa.so", "libesa.so.0"] and
         os.readlink(libdir / "libesa.so") == "libesa.so.0",
         "libesa.so.0 and the libesa.so link installed (%s)" % so)
    t.ok(not list(libdir.glob("libesa.a")), "no static library installed")
    comp = top / "share" / "bash-completion" / "completions" / "aggctl"
    r = run(["bash", "-c", '. "$1"; complete -p aggctl', "_", str(comp)])
    t.ok(r.returncode == 0 and "_aggctl" in r.stdout,
         "aggctl's bash completion installed where bash-completion looks, and loads",
         r.stderr[-300:])
    man = top / "share" / "man" / "man8" / "aggctl.8"
    t.ok(man.is_file() and man.read_text().startswith(".TH AGGCTL 8"),
         "aggctl's man page installed in share/man/man8")
    unit = top / "lib" / "systemd" / "system" / "esa-switch.service"
    execs = [l.split("=", 1)[1].split()[0] for l in
             (unit.read_text().splitlines() if unit.is_file() else [])
             if l.startswith(("ExecStart=", "ExecStop="))]
    t.ok(len(execs) == 2 and all(
         e == "%s/libexec/esa/esa-switch" % PREFIX and
         os.access(dest / e.lstrip("/"), os.X_OK) for e in execs),
         "esa-switch.service installed, running the installed esa-switch",
         str(execs))

    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(dest),
               PKG_CONFIG_LIBDIR=str(libdir / "pkgconfig"))
    r = run(["pkg-config", "--cflags", "--libs", "libesa"], env=env)
    flags = r.stdout.split()
    t.ok(r.returncode == 0 and "-lesa" in flags,
         "pkg-config libesa: %s" % r.stdout.strip(), r.stderr)
    src, exe = pathlib.Path(tmp, "p.c"), pathlib.Path(tmp, "p")
    src.write_text(PROG)
    r = run(["gcc", "-Wall", "-Werror", "-o", str(exe), str(src)] + flags)
    if t.ok(r.returncode == 0, "a program builds with those flags alone",
            r.stderr):
        r = run([str(exe)], env=dict(os.environ, LD_LIBRARY_PATH=str(libdir)))
        t.ok(r.returncode == 0 and "bad IPv4 address" in r.stdout,
             "it runs on the installed library: %s" % r.stdout.strip(),
             r.stderr)

    pydirs = list(libdir.glob("python3*/dist-packages"))
    r = run([sys.executable, "-c",
             "import esa, esa._install; print(esa.__file__); "
             "print(esa._install.LIBRARY); print(esa.library_path)"],
            env=dict(os.environ, PYTHONPATH=":".join(map(str, pydirs)),
                     ESA_LIBRARY=str(libdir / "libesa.so.0")),
            cwd=tmp)
    out = r.stdout.split()
    t.ok(r.returncode == 0 and len(out) == 3 and
         out[0].startswith(str(dest)) and
         out[1] == PREFIX + "/lib/libesa.so.0" and
         out[2] == str(libdir / "libesa.so.0"),
         "the installed package imports, records %s/lib/libesa.so.0 and "
         "loads the installed library" % PREFIX, r.stdout + r.stderr)
sys.exit(t.done())
