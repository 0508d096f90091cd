# SPDX-License-Identifier: GPL-2.0
"""What a small C program prints: the Python tests ask gcc how the C
headers lay out their structs and constants, to check a Python copy of
them against it.

    from c_output import c_output      # with selftests/lib on sys.path
    out = c_output(lines, [ROOT / "uapi"], ["-Wall"])
"""
import pathlib
import subprocess
import tempfile


def c_output(lines, include_dirs, cflags=()):
    """stdout of the C program of `lines`, built by gcc with -I for each
    of include_dirs and `cflags`; a build or run failure raises
    subprocess.CalledProcessError."""
    with tempfile.TemporaryDirectory() as d:
        src, exe = pathlib.Path(d, "p.c"), pathlib.Path(d, "p")
        src.write_text("\n".join(lines))
        incs = [a for i in include_dirs for a in ("-I", str(i))]
        subprocess.run(["gcc", *cflags, *incs, "-o", str(exe), str(src)],
                       check=True)
        return subprocess.run([str(exe)], capture_output=True, text=True,
                              check=True).stdout
