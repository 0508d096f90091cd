# SPDX-License-Identifier: GPL-2.0
"""The columns of esa-bench's and esa-sim's CSV files, read from their one
definition, include/esa_csv.h (string literals and earlier macros)."""
import os
import re

HEADER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           '..', '..', 'include', 'esa_csv.h')


def _macros(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r'/\*.*?\*/', ' ', text.replace('\\\n', ' '), flags=re.S)
    out = {}
    for name, body in re.findall(r'^#define\s+(ESA_CSV_\w+)\s+(.*)$', text, re.M):
        out[name] = ''.join(lit or out[ref]
                            for lit, ref in re.findall(r'"([^"]*)"|(\w+)', body))
    return out


_M = _macros(HEADER_FILE)
JCT_HEADER = _M['ESA_CSV_JCT']
STATS_HEADER = _M['ESA_CSV_STATS']
STATS_COUNTERS = tuple(STATS_HEADER.split(',')[len(_M['ESA_CSV_STATS_FIXED'].split(',')):])
