# SPDX-License-Identifier: GPL-2.0
"""Facts of the P4 program the control plane must agree with, read from
p4/tofino/*.p4 (their one definition): constants, #define sizes and header
layouts. Like uapi.py a reader for this program's style only."""
import glob
import os
import re
import subprocess
import tempfile

# TNA's typedefs used in this program's headers (tofino1_specs.p4).
TNA_TYPES = {"PortId_t": 9}

P4_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _text(path):
    with open(path) as f:
        return re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)


def _number(s):
    s = s.strip()
    m = re.fullmatch(r"(?:\d+w)?(0[xX][0-9a-fA-F]+|\d+)", s)
    if not m:
        raise ValueError(f"not a number: {s!r}")
    return int(m.group(1), 0)


class Program:
    """Constants, defines and headers of every .p4 file of p4/tofino."""

    def __init__(self, directory=P4_DIR):
        self.consts, self.const_widths, self.defines, self.headers = {}, {}, {}, {}
        self.files = sorted(glob.glob(os.path.join(directory, "*.p4")))
        for path in self.files:
            self._read(_text(path))
        self._read_headers(preprocess(os.path.join(directory, "esa.p4")))

    def _read(self, text):
        for m in re.finditer(r"\bconst\s+(\w+(?:<\s*\d+\s*>)?)\s+(\w+)\s*=\s*(-?[\w]+)\s*;", text):
            typ, name, value = m.groups()
            try:
                self.consts[name] = _number(value)
            except ValueError:
                continue    # an expression or a name: not needed here
            w = re.search(r"<\s*(\d+)\s*>", typ)
            self.const_widths[name] = int(w.group(1)) if w else None
        for m in re.finditer(r"^\s*#define\s+(\w+)\s+(\S+)\s*$", text, re.M):
            try:
                self.defines[m.group(1)] = _number(m.group(2))
            except ValueError:
                pass

    def _read_headers(self, text):
        """Header layouts, from the preprocessed program (macros expanded)."""
        for m in re.finditer(r"\bheader\s+(\w+)\s*\{(.*?)\}", text, re.S):
            fields, offset = [], 0
            for decl in m.group(2).split(";"):
                decl = decl.strip()
                if not decl:
                    continue
                f = re.fullmatch(r"(?:bit<\s*(\d+)\s*>|(\w+))\s+(\w+)", decl)
                width = int(f.group(1)) if f and f.group(1) else TNA_TYPES.get(f and f.group(2))
                if width is None:
                    fields = None   # a header of other types (not needed)
                    break
                fields.append((f.group(3), width, offset // 8))
                offset += width
            if fields is not None:
                self.headers[m.group(1)] = fields

    def const(self, name):
        if name in self.consts:
            return self.consts[name]
        if name in self.defines:
            return self.defines[name]
        raise KeyError(f"p4/tofino: no constant {name}")

    @property
    def values_per_packet(self):
        return self.const("ESA_TOFINO_VALUES")

    @property
    def slots(self):
        return self.const("ESA_TOFINO_SLOTS")

    @property
    def time_shift(self):
        return self.const("ESA_TIME_SHIFT")

    def source(self):
        """The program's text, comments removed, every file."""
        return "\n".join(_text(p) for p in self.files)


def preprocess(path):
    """@path through the C preprocessor, as the P4 compiler runs it; the
    SDE's own includes (core.p4, tna.p4) are empty here."""
    with tempfile.TemporaryDirectory() as stub:
        for name in ("core.p4", "tna.p4"):
            open(os.path.join(stub, name), "w").close()
        try:
            r = subprocess.run(["cpp", "-P", "-I", os.path.dirname(path), "-I", stub, path],
                               capture_output=True, text=True)
        except FileNotFoundError:
            raise RuntimeError("cpp (the C preprocessor) is needed to read the P4 program") from None
    if r.returncode:
        raise RuntimeError(f"cpp {path}: {r.stderr.strip()}")
    return r.stdout


def load():
    return Program()

