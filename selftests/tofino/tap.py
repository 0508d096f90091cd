# SPDX-License-Identifier: GPL-2.0
"""TAP output for the Tofino checks: ok()/done(), and the import path of
p4/tofino's control plane package."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "p4", "tofino"))

_n = 0
_failed = 0


def ok(good, desc, detail=None):
    """One TAP line; @detail (printed as diagnostics) only on failure."""
    global _n, _failed
    _n += 1
    if not good:
        _failed += 1
        for line in str(detail or "").splitlines():
            print(f"# {line}")
    print(f"{'ok' if good else 'not ok'} {_n} - {desc}")


def done():
    print(f"1..{_n}")
    sys.exit(1 if _failed else 0)
