# SPDX-License-Identifier: GPL-2.0
"""TAP output for Python tests (the format run_tests.sh reads).

    from tap import Tap        # with selftests/lib on sys.path
    t = Tap()
    t.ok(cond, "what was checked", "diagnostic shown when it fails")
    t.xfail(fails, "what", "issue N: the known bug")   # see selftests/lib/tap.sh
    t.raises("what", ValueError, "part of its message", fn, arg, kw=arg)
    t.diag("any text")
    sys.exit(t.done())         # the plan; 1 if anything failed
"""


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0
        print("TAP version 13", flush=True)

    def diag(self, text):
        for line in str(text).splitlines() or [""]:
            print("# " + line, flush=True)

    def ok(self, cond, desc, why=None):
        self.n += 1
        if not cond:
            self.failed += 1
            if why is not None:
                self.diag(why)
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc),
              flush=True)
        return bool(cond)

    def raises(self, desc, kind, fragment, fn, *a, **kw):
        """ok if fn(*a, **kw) raises a `kind` whose message holds
        `fragment`; any other outcome is the failure, shown."""
        try:
            fn(*a, **kw)
        except kind as e:
            return self.ok(fragment in str(e), "%s: %s" % (desc, e))
        except Exception as e:  # noqa: BLE001: the failure
            return self.ok(False, desc, "raised %r" % e)
        return self.ok(False, desc, "no exception")

    def xfail(self, fails, desc, bug):
        """A check that fails today because of a tracked bug: `bug` names
        it ("issue 15: ..."; run_tests.sh fails an XFAIL naming no issue).
        `fails` true: "ok ... # XFAIL bug"; false: the bug is gone, so it is
        reported as a failure (# XPASS) until the xfail becomes a check."""
        self.n += 1
        if fails:
            print("ok %d - %s # XFAIL %s" % (self.n, desc, bug), flush=True)
        else:
            self.failed += 1
            print("not ok %d - %s # XPASS: passes although %s is open: make it a check"
                  % (self.n, desc, bug), flush=True)

    def skip(self, desc, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, reason), flush=True)

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0
