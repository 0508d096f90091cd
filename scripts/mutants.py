#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The mutation campaign (`make check-mutants`, Documentation/testing.rst).

Each mutant of scripts/mutants.list is one plausible mistake: a file, an
exact code fragment that must occur in it exactly once, and its
replacement, with the tests that must catch it. The working tree is copied
to a scratch tree (build/mutants/tree, its build/ with it so that builds
are incremental); each mutant is applied there, the tree is rebuilt, its
tests run, and the file is restored. A mutant is

  killed      a test failed (or timed out): the suite catches it;
  SURVIVED    every test passed: a gap, the campaign fails;
  equivalent  survived and is listed as equivalent (with the reason): the
              program behaves the same, no test can catch it;
  STALE       its fragment no longer occurs exactly once: the list must be
              updated, the campaign fails;
  STILLBORN   the tree did not build with it: not a plausible mistake,
              the campaign fails.

Tests are commands run from the scratch tree's root; "vm:FILTER" runs
`selftests/run_tests.sh --vm-only FILTER` in the test VM (serialised with
the other VM users by flock on /tmp/esa-vm.lock).

  scripts/mutants.py [--sample N] [--seed S] [--only ID,...] [--host-only]
                     [--list] [--stale]
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "scripts", "mutants.list")
TEST_TIMEOUT = 900
VM_LOCK = "/tmp/esa-vm.lock"


class Mutant:
    def __init__(self, where):
        self.where = where
        self.fields = {}

    def get(self, key, default=None):
        return self.fields.get(key, default)

    @property
    def id(self):
        return self.fields["id"]

    @property
    def tests(self):
        return [t.strip() for t in self.fields.get("tests", "").split(";")
                if t.strip()]


def parse(path):
    """Records of `key: value` lines, separated by blank lines; a line
    starting with whitespace continues the value before it (joined with a
    newline: fragments keep their line breaks and indentation after the
    first space); # starts a comment line."""
    mutants, cur, last = [], None, None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = last = None
                continue
            if line[0] in " \t" and cur is not None and last:
                cur.fields[last] += "\n" + line[1:]
                continue
            m = re.match(r"^([a-z]+):(?: (.*))?$", line)
            if not m:
                sys.exit(f"{path}:{n}: not 'key: value': {line!r}")
            if cur is None:
                cur = Mutant(f"{path}:{n}")
                mutants.append(cur)
            last = m.group(1)
            if last in cur.fields:
                sys.exit(f"{path}:{n}: {last} given twice")
            cur.fields[last] = m.group(2) or ""
    seen = set()
    for m in mutants:
        for key in ("id", "file", "find", "replace", "tests"):
            if key not in m.fields:
                sys.exit(f"{m.where}: mutant without {key}")
        if m.id in seen:
            sys.exit(f"{m.where}: mutant id {m.id} given twice")
        seen.add(m.id)
        if m.get("find") == m.get("replace"):
            sys.exit(f"{m.where}: {m.id}: replacement equals the fragment")
    return mutants


def log(msg):
    print(msg, flush=True)


def run(cmd, cwd, timeout, env=None, keep=3000):
    """(exit status, the last @keep characters of the output, all if
    None); status 124 on timeout."""
    try:
        p = subprocess.run(cmd, cwd=cwd, shell=True, timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=env)
        out = p.stdout.decode(errors="replace")
        return p.returncode, out[-keep:] if keep else out
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return 124, out[-keep:] if keep else out


def make_scratch(scratch):
    """A copy of the working tree (its sources and build, not git's data,
    nor the shared cache, which is linked)."""
    tree = os.path.join(scratch, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    rc, out = run(f"tar -C '{ROOT}' --exclude=./.git --exclude=./.cache "
                  f"--exclude='./build/mutants*' --exclude=./build/coverage "
                  f"-cf - . | tar -C '{tree}' -xf -", ROOT, 600)
    if rc:
        sys.exit(f"copying the tree to {tree} failed:\n{out}")
    cache = os.path.join(tree, ".cache")
    if not os.path.lexists(cache) and os.path.exists(os.path.join(ROOT, ".cache")):
        os.symlink(os.path.realpath(os.path.join(ROOT, ".cache")), cache)
    return tree


def build(tree):
    return run("make -s all selftests", tree, 1800)


def is_vm(m):
    return any(t.startswith("vm:") for t in m.tests)


VM_STASH = "build/mutants-vm"


def vm_artifacts(tree):
    """What a VM mutant is tried with: the module it builds for the VM's
    kernel (build/kmod/KABI/esa.ko, scripts/common.mk) and aggctl."""
    rc, kabi = run("scripts/kabi.sh", tree, 60)
    if rc:
        sys.exit(f"scripts/kabi.sh failed: {kabi}")
    return ((os.path.join("build", "kmod", kabi.strip(), "esa.ko"), "esa.ko"),
            ("build/tools/aggctl", "aggctl"))


def stash(tree, name):
    """Copy the built module and aggctl to VM_STASH/name of the tree."""
    d = os.path.join(tree, VM_STASH, name)
    os.makedirs(d, exist_ok=True)
    for src, dst in vm_artifacts(tree):
        shutil.copy2(os.path.join(tree, src), os.path.join(d, dst))


def try_mutant(m, tree):
    """(verdict, detail); "pending" for a VM mutant, whose build is
    stashed for the one VM run of them all (run_vm())."""
    path = os.path.join(tree, m.get("file"))
    try:
        with open(path) as f:
            orig = f.read()
    except OSError as e:
        return "STALE", f"{m.get('file')}: {e.strerror}"
    n = orig.count(m.get("find"))
    if n != 1:
        return "STALE", f"fragment found {n} times in {m.get('file')}"
    with open(path, "w") as f:
        f.write(orig.replace(m.get("find"), m.get("replace")))
    try:
        rc, out = build(tree)
        if rc:
            return "STILLBORN", out.strip().splitlines()[-1:] or ""
        if is_vm(m):
            stash(tree, m.id)
            return "pending", "built for the VM"
        for t in m.tests:
            rc, out = run(t, tree, TEST_TIMEOUT)
            if rc:
                return "killed", f"by {t}" + (" (timeout)" if rc == 124 else "")
        return "SURVIVED", "every test passed: " + "; ".join(m.tests)
    finally:
        with open(path, "w") as f:
            f.write(orig)


def run_vm(mutants, tree):
    """One VM boot for every VM mutant: the unmutated build first (its
    tests must pass), then each stashed build. {id: (verdict, detail)}."""
    with open(os.path.join(tree, VM_STASH, "manifest"), "w") as f:
        for m in mutants:
            f.write("%s\t%s\n" % (m.id, " ".join(
                t[3:] for t in m.tests if t.startswith("vm:"))))
    cmd = (f"flock {VM_LOCK} env ESA_VM_NO_MODULE=1 ESA_VM_TIMEOUT=3600 "
           f"scripts/vm-run.sh 'scripts/mutants.py --guest {VM_STASH}'")
    rc, out = run(cmd, tree, 4 * 3600, keep=None)
    vm_log = os.path.join(tree, VM_STASH, "vm.log")
    with open(vm_log, "w") as f:
        f.write(out)
    got = dict(re.findall(r"^MUTANT (\S+) (\S+)", out, re.M))
    res = {}
    if got.get("base") != "passed":
        sys.exit("the VM tests fail on the unmutated tree (or the VM run "
                 f"failed, exit {rc}; {vm_log}):\n{out[-3000:]}")
    for m in mutants:
        v = got.get(m.id)
        if v == "failed":
            res[m.id] = ("killed", "by vm:" + ", vm:".join(
                t[3:] for t in m.tests if t.startswith("vm:")))
        elif v == "passed":
            res[m.id] = ("SURVIVED", "every test passed in the VM")
        else:
            res[m.id] = ("STILLBORN", f"no result in the VM ({v})")
    return res


def unload():
    """rmmod esa, waiting up to 5 s for the references of programs
    just closed (they go after an RCU grace period)."""
    for _ in range(50):
        if not os.path.exists("/sys/module/esa"):
            return
        subprocess.run("rmmod esa", shell=True, stderr=subprocess.DEVNULL)
        time.sleep(0.1)


def guest(stash_dir):
    """In the VM (scripts/vm-run.sh, no module loaded): for the base and
    each mutant of the manifest, load its module, run its tests with its
    aggctl, print "MUTANT id passed|failed|noload"."""
    entries = [("base", None)]
    with open(os.path.join(stash_dir, "manifest")) as f:
        entries += [tuple(line.rstrip("\n").split("\t")) for line in f]
    filters = {}
    for mid, flt in entries[1:]:
        filters[mid] = flt.split()
    base = sorted({x for v in filters.values() for x in v})
    for mid, _ in entries:
        d = os.path.join(stash_dir, mid)
        unload()
        if subprocess.run(["insmod", os.path.join(d, "esa.ko")]).returncode:
            log(f"MUTANT {mid} noload")
            continue
        env = dict(os.environ, AGGCTL=os.path.join(d, "aggctl"))
        verdict = "passed"
        for flt in (base if mid == "base" else filters[mid]):
            rc, out = run(f"selftests/run_tests.sh --inner vm '{flt}'",
                          ROOT, TEST_TIMEOUT, env)
            log(out)
            if rc or not re.search(r"^ok ", out, re.M):
                verdict = "failed"
                break
        log(f"MUTANT {mid} {verdict}")
    unload()
    return 0


def check_stale(mutants):
    """Each fragment against the working tree: 1 if one is stale."""
    bad = 0
    for m in mutants:
        try:
            with open(os.path.join(ROOT, m.get("file"))) as f:
                n = f.read().count(m.get("find"))
        except OSError:
            n = 0
        if n != 1:
            bad += 1
            log(f"STALE      {m.id:32} {m.get('file'):34} fragment found {n} times")
    log(f"# {len(mutants)} mutants, {bad} stale")
    return 1 if bad else 0


def pick(mutants, args):
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {m.id for m in mutants}
        if unknown:
            sys.exit("unknown mutant id(s): " + ", ".join(sorted(unknown)))
        mutants = [m for m in mutants if m.id in want]
    if args.host_only:
        mutants = [m for m in mutants
                   if not any(t.startswith("vm:") for t in m.tests)]
    if args.sample and args.sample < len(mutants):
        rnd = random.Random(args.seed)
        mutants = sorted(rnd.sample(mutants, args.sample),
                         key=lambda m: mutants.index(m))
    return mutants


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=0,
                    help="run N mutants drawn at random (seeded)")
    ap.add_argument("--seed", default=time.strftime("%Y%j"),
                    help="seed of --sample (default: the day, so CI rotates)")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--host-only", action="store_true",
                    help="leave out mutants whose tests need the VM")
    ap.add_argument("--list", action="store_true",
                    help="print the mutants (id, file, tests) and exit")
    ap.add_argument("--stale", action="store_true",
                    help="only check that every fragment occurs exactly once "
                    "in the working tree (seconds, no build)")
    ap.add_argument("--guest", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.guest:
        return guest(args.guest)
    mutants = parse(LIST)
    if args.list:
        for m in mutants:
            eq = " [equivalent]" if m.get("equivalent") else ""
            log(f"{m.id:32} {m.get('file'):34} {'; '.join(m.tests)}{eq}")
        return 0
    if args.stale:
        return check_stale(mutants)
    chosen = pick(mutants, args)
    scratch = os.environ.get("MUTANTS_DIR",
                             os.path.join(ROOT, "build", "mutants"))
    t0 = time.time()
    log(f"# {len(chosen)} of {len(mutants)} mutants; scratch tree {scratch}/tree")
    if not chosen:
        return 0
    tree = make_scratch(scratch)
    rc, out = build(tree)
    if rc:
        sys.exit(f"the unmutated tree does not build:\n{out}")
    base = sorted({t for m in chosen for t in m.tests if not t.startswith("vm:")})
    for t in base:		# each host test passes unmutated
        rc, out = run(t, tree, TEST_TIMEOUT)
        if rc:
            sys.exit(f"{t} fails on the unmutated tree:\n{out}")
    log(f"# {len(base)} host tests pass unmutated; {time.time() - t0:.0f} s")
    counts, pending = {}, []

    def report(m, verdict, detail, secs):
        if verdict == "SURVIVED" and m.get("equivalent"):
            verdict, detail = "equivalent", m.get("equivalent")
        counts[verdict] = counts.get(verdict, 0) + 1
        log(f"{verdict:10} {m.id:32} {m.get('file'):34} {secs:5.0f} s  {detail}")

    for m in chosen:
        t = time.time()
        verdict, detail = try_mutant(m, tree)
        if verdict == "pending":
            pending.append(m)
            log(f"{'(VM)':10} {m.id:32} {m.get('file'):34} {time.time() - t:5.0f} s  built")
            continue
        report(m, verdict, detail, time.time() - t)
    build(tree)		# leave the scratch tree built as it was
    if pending:
        t = time.time()
        stash(tree, "base")
        log(f"# {len(pending)} mutants in one VM run (waits for {VM_LOCK})")
        res = run_vm(pending, tree)
        for m in pending:
            report(m, *res[m.id], (time.time() - t) / len(pending))
    killed = counts.get("killed", 0)
    judged = len(chosen) - counts.get("equivalent", 0)
    score = f"{100.0 * killed / judged:.1f} %" if judged else "-"
    log(f"# {len(chosen)} mutants: " +
        ", ".join(f"{counts.get(k, 0)} {k}" for k in
                  ("killed", "SURVIVED", "equivalent", "STALE", "STILLBORN")) +
        f"; caught {killed}/{judged} = {score}; {time.time() - t0:.0f} s")
    bad = sum(counts.get(k, 0) for k in ("SURVIVED", "STALE", "STILLBORN"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
