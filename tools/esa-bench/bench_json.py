# SPDX-License-Identifier: GPL-2.0
"""Reading what aggctl -j and esa-job -j print, for the esa-bench scripts.

aggctl prints a JSON object or an array of them per call, and the bench
concatenates calls; every object of every value is returned, in order.
"""
import json


def objects(path):
    """Every JSON object in the file, arrays flattened."""
    with open(path) as f:
        text = f.read().strip()
    if not text:
        return []
    dec = json.JSONDecoder()
    out, i = [], 0
    while i < len(text):
        obj, i = dec.raw_decode(text, i)
        out.extend(obj if isinstance(obj, list) else [obj])
        while i < len(text) and text[i].isspace():
            i += 1
    return out
