# SPDX-License-Identifier: GPL-2.0
"""A model of the Tofino program's aggregation path, for test_model.py.

What comes from the P4 source itself (preprocessed, as the compiler reads
it): every register action (interpreted here statement by statement) and
the const entries of the value op table. What is transcribed by hand: the
control flow of EsaIngress.apply between them (class -> vop, the outcome
chains, the judgement, the second pass), written in the same order with
the same names; it must change with p4/tofino/esa_ingress.p4. Validation,
L2 and egress rewriting are not modelled: frames here are valid members'.
"""
import re

from esa_tofino import program, uapi

M32 = 0xffffffff
CLASSES = ("CLAIMED", "MINE", "OTHER", "TAKEN", "FLUSHED", "KEPT", "RELEASED")


# ---------------------------------------------------------------- registers

def _tokens(text):
    return re.findall(r"\|\+\||==|!=|&&|\|\||>=|<=|\(\s*(?:int|bit)<\d+>\s*\)|"
                      r"[\w.]+|[-+(){};=&|^<>~]", text)


class _Parser:
    """Register action bodies: assignments and if/else if/else, with
    == != > < && || & | ^ ~ + - |+| and (int<32>)/(bit<32>) casts."""

    def __init__(self, text):
        self.t = _tokens(text)
        self.i = 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.peek()
        if want is not None and tok != want:
            raise ValueError(f"register action: expected {want!r}, got {tok!r} at {self.i}")
        self.i += 1
        return tok

    def block(self):
        out = []
        while self.peek() not in (None, "}"):
            out.append(self.stmt())
        return out

    def stmt(self):
        tok = self.peek()
        if tok == ";":
            self.take()
            return ("nop",)
        if tok == "if":
            self.take()
            self.take("(")
            cond = self.expr()
            self.take(")")
            self.take("{")
            then = self.block()
            self.take("}")
            other = []
            if self.peek() == "else":
                self.take()
                if self.peek() == "if":
                    other = [self.stmt()]
                else:
                    self.take("{")
                    other = self.block()
                    self.take("}")
            return ("if", cond, then, other)
        lhs = self.take()
        self.take("=")
        rhs = self.expr()
        self.take(";")
        return ("set", lhs, rhs)

    # precedence, loosest first
    LEVELS = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="),
              (">", "<", ">=", "<="), ("+", "-", "|+|")]

    def expr(self, level=0):
        if level == len(self.LEVELS):
            return self.unary()
        left = self.expr(level + 1)
        while self.peek() in self.LEVELS[level]:
            op = self.take()
            left = ("op", op, left, self.expr(level + 1))
        return left

    def unary(self):
        tok = self.take()
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok == "~":
            return ("not", self.unary())
        if tok == "-":
            return ("neg", self.unary())
        m = re.fullmatch(r"\(\s*(int|bit)<(\d+)>\s*\)", tok)
        if m:
            return ("cast", m.group(1), self.unary())
        if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", tok):
            return ("num", int(tok, 0))
        return ("name", tok)


def _signed(x):
    x &= M32
    return x - (1 << 32) if x & 0x80000000 else x


def _eval(e, env, signed):
    kind = e[0]
    if kind == "num":
        return e[1]
    if kind == "name":
        if e[1] not in env:
            raise KeyError(f"register action reads {e[1]}, which the model does not set")
        return env[e[1]]
    if kind == "cast":
        v = _eval(e[2], env, signed)
        return _signed(v) if e[1] == "int" else v & M32
    if kind == "not":
        return ~_eval(e[1], env, signed) & M32
    if kind == "neg":
        return -_eval(e[1], env, signed)
    a, b = _eval(e[2], env, signed), _eval(e[3], env, signed)
    op = e[1]
    if op in ("&&", "||"):
        return (a and b) if op == "&&" else (a or b)
    if op == "|+|":     # signed saturating add (int<32> registers only)
        return max(-(1 << 31), min((1 << 31) - 1, _signed(a) + _signed(b)))
    if isinstance(a, str) or isinstance(b, str):
        return {"==": a == b, "!=": a != b}[op]
    if not signed:
        a, b = a & M32, b & M32
    return {"==": a == b, "!=": a != b, ">": a > b, "<": a < b, ">=": a >= b,
            "<=": a <= b, "&": a & b, "|": a | b, "^": a ^ b, "+": a + b,
            "-": a - b}[op]


def _run(stmts, env, signed):
    for s in stmts:
        if s[0] == "set":
            v = _eval(s[2], env, signed)
            env[s[1]] = v if isinstance(v, str) else (_signed(v) if signed else v & M32)
        elif s[0] == "if":
            _run(s[2] if _eval(s[1], env, signed) else s[3], env, signed)


class RegisterAction:
    def __init__(self, reg, name, value_var, body, signed):
        self.reg, self.name, self.var, self.signed = reg, name, value_var, signed
        self.body = _Parser(body).block()

    def execute(self, registers, index, inputs):
        """Run on registers[self.reg][index]; return rv (None if unset)."""
        cell = registers.setdefault(self.reg, {}).get(index, {"": 0, "lo": 0, "hi": 0})
        env = dict(inputs)
        for part in ("lo", "hi"):
            env[f"{self.var}.{part}"] = cell[part]
        env[self.var] = cell[""]
        _run(self.body, env, self.signed)
        registers[self.reg][index] = {"": env[self.var], "lo": env[f"{self.var}.lo"],
                                      "hi": env[f"{self.var}.hi"]}
        return env.get("rv")


def register_actions(text):
    """{name: RegisterAction} of the preprocessed program @text."""
    out = {}
    for m in re.finditer(r"RegisterAction<(.*?)>\((\w+)\)\s*(\w+)\s*=\s*\{\s*void apply\("
                         r"inout\s+(\w+(?:<\d+>)?)\s+(\w+)[^)]*\)\s*\{", text):
        i, depth = m.end(), 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        body = re.sub(r"\besa_owner_class_t\.(\w+)", r"\1", body)
        out[m.group(3)] = RegisterAction(m.group(2), m.group(3), m.group(5), body,
                                         m.group(4).startswith("int"))
    return out


def _split_top(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    return out + [cur.strip()]


def _const(expr, consts):
    return uapi._eval(re.sub(r"\b\d+w(?=\d)", "", expr), consts)


def value_op_entries(text, consts):
    """The const entries of EsaValue's op table, in order:
    [([(value, mask) or None per key field], action)]."""
    body = re.search(r"table op \{.*?const entries = \{(.*?)\n\s*\}", text, re.S).group(1)
    out = []
    for m in re.finditer(r"\(((?:[^()]|\([^()]*\))*)\)\s*:\s*(\w+)\(\)", body):
        pats = []
        for field in _split_top(m.group(1)):
            if field == "_":
                pats.append(None)
            elif "&&&" in field:
                v, mask = field.split("&&&")
                pats.append((_const(v, consts), _const(mask, consts)))
            else:
                pats.append((_const(field, consts), M32))
        out.append((pats, m.group(2)))
    return out


# ---------------------------------------------------------------- pipeline

class Switch:
    """The ingress of esa_ingress.p4 for valid aggregation frames."""

    def __init__(self, policy, slots, timeout_units, jobs):
        self.prog = program.load()
        text = program.preprocess(self.prog.files[0].rsplit("/", 1)[0] + "/esa.p4")
        self.ra = register_actions(text)
        self.c = self.prog.const
        self.ops = value_op_entries(text, dict(self.prog.consts, **self.prog.defines))
        self.policy = self.c(f"ESA_POLICY_{policy.upper()}")
        self.hold = self.c("ESA_HOLD") if policy == "atp" else 0
        self.timeout = timeout_units
        self.slots = slots
        self.jobs = jobs            # job id -> {"fan_in", "base", "quota"}
        self.regs = {}
        self.now = 0
        self.out = []               # frames leaving: dicts
        self.counts = {}
        self.held = {}              # job -> stranded time units

    def count(self, name, job):
        self.counts[(job, name)] = self.counts.get((job, name), 0) + 1

    def exec(self, name, slot, md, esa):
        inputs = {"md.key": md["key"], "md.claim": md["claim"],
                  "md.partial_floor": self.hold, "md.owner_word": md["owner_word"],
                  "md.now": self.now, "esa.seq": esa["seq"],
                  "esa.worker_bitmap": esa["bitmap"], "ESA_HOLD": self.c("ESA_HOLD"),
                  "ESA_INT32_MAX": 0x7fffffff, "ESA_INT32_MIN": -0x80000000}
        inputs.update({name: name for name in CLASSES})
        return self.ra[name].execute(self.regs, slot, inputs)

    def value_op(self, key):
        """EsaValue's op table: the first entry matching @key."""
        for pats, action in self.ops:
            if all(pt is None or (k & pt[1]) == (pt[0] & pt[1]) for pt, k in zip(pats, key)):
                return action
        return "NoAction"

    def values(self, action, slot, vals):
        """EsaValue for each value: the packet's values after the op."""
        if action == "NoAction":
            return list(vals)
        out = []
        for i, v in enumerate(vals):
            # one register "sums" per value control: value i at index (i, slot)
            rv = self.ra[f"sum_{action}"].execute(
                self.regs, (i, slot), {"v": v & M32, "ESA_INT32_MAX": 0x7fffffff,
                                       "ESA_INT32_MIN": -0x80000000})
            out.append(v if action == "write" else _signed(rv))
        return out

    def frame(self, esa, resub=None):
        """One aggregation frame (dict: job, seq, bitmap, flags, prio, index,
        values). Returns "resubmit" or None; outputs go to self.out."""
        c = self.c
        job = self.jobs[esa["job"]]
        full = (1 << job["fan_in"]) - 1
        md = {"key": ((esa["job"] & 0x3ff) << 22) | (esa["seq"] & 0x3fffff),
              "claim": (full ^ esa["bitmap"]) | self.hold,
              "owner_word": (esa["job"] << 8) | esa["prio"]}
        slot = job["base"] + esa["index"]
        is_result = bool(esa["flags"] & c("ESA_F_RESULT"))
        is_resend = bool(esa["flags"] & c("ESA_F_RESEND"))
        jid = esa["job"]

        def send(kind, **kw):
            self.out.append(dict(esa, kind=kind, **kw))

        if is_result:
            if not is_resend:
                self.exec("om_release", slot, md, esa)
                self.exec("oc_release", slot, md, esa)
            self.count("results" if not is_resend else "pulls", jid)
            send("result")
            return None
        if job["fan_in"] == 1:
            self.count("aggregated", jid)
            self.complete(esa, esa["bitmap"], esa["values"], send)
            return None
        own = "take" if resub else "resend" if is_resend else "data"
        a_missing = self.exec(f"om_{own}", slot, md, esa)
        a_class = self.exec(f"oc_{own}", slot, md, esa)
        a_rest = a_missing ^ esa["bitmap"]
        vop = c({"CLAIMED": "ESA_VOP_WRITE", "TAKEN": "ESA_VOP_SWAP", "MINE": "ESA_VOP_ADD",
                 "FLUSHED": "ESA_VOP_FLUSH"}.get(a_class, "ESA_VOP_NONE"))
        b_old = c_old = d_seq = d_time = 0
        if a_class in ("CLAIMED", "TAKEN"):
            b_old = self.exec("bitmap_claim", slot, md, esa)
            c_old = self.exec("owner_claim", slot, md, esa)
            d_seq = self.exec("seq_claim", slot, md, esa)
            d_time = self.exec("time_claim", slot, md, esa)
        elif a_class in ("MINE", "FLUSHED"):
            b_old = self.exec("bitmap_add", slot, md, esa)
            d_seq = self.exec("seq_check", slot, md, esa)
            if a_class == "FLUSHED":
                d_time = self.exec("time_read", slot, md, esa)
        elif a_class == "OTHER":
            c_old = self.exec("owner_read", slot, md, esa)
            d_time = self.exec("time_read", slot, md, esa)
        b_hit = b_old & esa["bitmap"]
        vals = self.values(self.value_op((vop, esa["bitmap"], b_old, d_seq)), slot,
                           esa["values"])

        if a_class == "CLAIMED":
            self.count("aggregated", jid)
        elif a_class == "TAKEN":
            self.count("aggregated", jid)
            if resub["kind"] == c("ESA_TAKE_PREEMPT"):
                self.count("preemptions", jid)
            if a_missing != c("ESA_HOLD"):
                victim = c_old >> 8
                self.count("evictions", victim)
                flag = "preempted" if resub["kind"] == c("ESA_TAKE_PREEMPT") else "partial"
                if flag == "partial":
                    self.stranded(victim, d_time)
                if victim in self.jobs:
                    send("to_ps", flag=flag, job=victim, seq=d_seq, bitmap=b_old,
                         values=vals, prio=c_old & 0xff)
        elif a_class == "MINE":
            out_bitmap = b_old | esa["bitmap"]
            if d_seq != 0:
                self.count("collisions", jid)
                send("to_ps", flag="collision")
            elif b_hit != 0:
                self.count("duplicates", jid)
            elif a_rest != self.hold:
                self.count("aggregated", jid)
            else:
                self.count("aggregated", jid)
                if out_bitmap == full:
                    self.complete(esa, out_bitmap, vals, send)
                else:
                    send("to_ps", flag="partial", bitmap=out_bitmap, values=vals)
        elif a_class == "FLUSHED":
            if d_seq != 0:
                self.count("collisions", jid)
                send("to_ps", flag="partial", seq=esa["seq"] ^ d_seq, bitmap=b_old,
                     values=vals)
                self.stranded(jid, d_time)
            else:
                if b_hit != 0:
                    self.count("duplicates", jid)
                    out_bitmap = b_old
                else:
                    self.count("aggregated", jid)
                    out_bitmap = b_old | esa["bitmap"]
                if out_bitmap == full:
                    self.complete(esa, out_bitmap, vals, send)
                else:
                    send("to_ps", flag="partial", bitmap=out_bitmap, values=vals)
                    self.stranded(jid, d_time)
        elif a_class == "OTHER":
            # EsaJudge
            age = (self.now - d_time) & M32
            slack = (self.timeout - age) & M32
            prio_diff = ((c_old & 0xff) - esa["prio"]) & 0xffff
            if self.timeout != 0 and slack >> 31:
                return {"kind": c("ESA_TAKE_RECLAIM")}
            if (self.policy == c("ESA_POLICY_ESA") and (c_old >> 8) != jid and
                    prio_diff >> 15):
                return {"kind": c("ESA_TAKE_PREEMPT")}
            self.count("collisions", jid)
            send("to_ps", flag="collision")
        else:
            self.count("collisions", jid)
            send("to_ps", flag="resend")
        return None

    def stranded(self, job, claim_time):
        """STRANDED and its held time (the egress register's amount)."""
        self.count("stranded", job)
        self.held[job] = self.held.get(job, 0) + ((self.now - claim_time) & M32)

    def complete(self, esa, bitmap, vals, send):
        self.count("completed", esa["job"])
        send("to_ps", flag="complete", bitmap=bitmap, values=vals)
        if self.policy != self.c("ESA_POLICY_ATP"):
            send("to_workers", flag="result", bitmap=bitmap, values=vals)

    def process(self, esa):
        """A frame and, if it asks, its second pass (resubmit)."""
        self.now += 1
        resub = self.frame(esa)
        if resub:
            self.frame(esa, resub)
