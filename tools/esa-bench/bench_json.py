# SPDX-License-Identifier: GPL-2.0
"""Reading what aggctl -j and esa-job -j print, for the esa-bench scripts.

aggctl prints one JSON object per line for dumps (or one array when
pretty-printing); both are accepted.
"""
import json


def objects(path):
    """Every JSON object in the file, whether one array or one per line."""
    with open(path) as f:
        text = f.read().strip()
    if not text:
        return []
    if text.startswith('['):
        return json.loads(text)
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        obj, i = dec.raw_decode(text, i)
        out.append(obj)
        while i < len(text) and text[i].isspace():
            i += 1
    return out
