# SPDX-License-Identifier: GPL-2.0
"""Facts of uapi/esa_wire.h and uapi/esa_switch.h, read from the headers
(their one definition): #define constants, enums and the fields of struct
esa_hdr. A small C reader for these two headers' style, not a C parser:
anything it cannot read raises ValueError naming it."""
import ast
import operator
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

_WIDTH = {"__u8": 8, "__u16": 16, "__be16": 16, "__u32": 32, "__be32": 32,
          "__u64": 64, "__be64": 64}


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub,
        ast.LShift: operator.lshift, ast.BitOr: operator.or_}


def _eval(expr, names):
    """An integer constant expression of numbers, names already known,
    +, -, <<, | and parentheses."""
    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(f"cannot evaluate {expr!r}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"cannot evaluate {expr!r}") from None
    return ev(tree.body)


class Header:
    """One uapi header, read."""

    def __init__(self, path):
        self.path = path
        with open(path) as f:
            self.text = _strip_comments(f.read())
        self.defines = {}
        for m in re.finditer(r"^\s*#define\s+(\w+)\s+(.+?)\s*$", self.text, re.M):
            try:
                self.defines[m.group(1)] = _eval(m.group(2), self.defines)
            except ValueError:
                pass    # a define that is not a number (guards, strings)

    def enum(self, name):
        """Ordered [(NAME, value)] of enum @name."""
        m = re.search(r"enum\s+%s\s*\{(.*?)\}\s*;" % re.escape(name), self.text, re.S)
        if not m:
            raise ValueError(f"{self.path}: no enum {name}")
        out, known, nxt = [], dict(self.defines), 0
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                key, expr = (s.strip() for s in item.split("=", 1))
                nxt = _eval(expr, known)
            else:
                key = item
            out.append((key, nxt))
            known[key] = nxt
            nxt += 1
        return out

    def struct(self, name):
        """Ordered [(field, bits, byte offset)] of a packed struct of
        fixed-width integer fields."""
        m = re.search(r"struct\s+%s\s*\{(.*?)\}" % re.escape(name), self.text, re.S)
        if not m:
            raise ValueError(f"{self.path}: no struct {name}")
        fields, offset = [], 0
        for decl in m.group(1).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            parts = decl.split()
            if len(parts) != 2 or parts[0] not in _WIDTH:
                raise ValueError(f"{self.path}: struct {name}: cannot read {decl!r}")
            bits = _WIDTH[parts[0]]
            fields.append((parts[1], bits, offset))
            offset += bits // 8
        return fields


def wire():
    return Header(os.path.join(ROOT, "uapi", "esa_wire.h"))


def switch():
    return Header(os.path.join(ROOT, "uapi", "esa_switch.h"))


def counter_names():
    """{id: name} of enum esa_counter, named as aggctl prints them
    (ESA_CNT_DROP_PORT -> drop_port)."""
    return {v: k[len("ESA_CNT_"):].lower()
            for k, v in switch().enum("esa_counter") if not k.startswith("__")}


def policies():
    """{name: value} of enum esa_policy (ESA_POLICY_ATP -> atp)."""
    return {k[len("ESA_POLICY_"):].lower(): v
            for k, v in switch().enum("esa_policy") if not k.startswith("__")}
