# SPDX-License-Identifier: GPL-2.0
"""What every Tofino check imports: the paths of the project's TAP helper
(selftests/lib/tap.py) and of p4/tofino's control plane package, and the
one Tap of the running check."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "selftests", "lib"), os.path.join(ROOT, "p4", "tofino")]

from tap import Tap  # noqa: E402

tap = Tap()
