# SPDX-License-Identifier: GPL-2.0
"""TAP output for Python tests (the format run_tests.sh reads).

    from tap import Tap        # with selftests/lib on sys.path
    t = Tap()
    t.ok(cond, "what was checked", "diagnostic shown when it fails")
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

    def skip(self, desc, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, reason), flush=True)

    def done(self):
        print("1..%d" % self.n, flush=True)
        return 1 if self.failed else 0
