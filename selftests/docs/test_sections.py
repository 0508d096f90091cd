#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Every section of a page that the tree names exists: a page named by its
path and then a title in quotes or stars (Documentation/kmod.rst,
"Occupancy"; Documentation/tofino.rst, *Subset*) must have a heading that starts with that title, so that a
renamed or removed section fails here, not in a reader's search. The
files read and the result per top-level folder are those of
test_paths.sh; comments are read with their leaders (" * ", "# ", "// ")
taken out, so a reference broken over lines is read whole."""
import bisect
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "selftests", "lib"))
from tap import Tap  # noqa: E402

REFERENCE = re.compile(r'Documentation/ ?([\w./-]+?\.rst)\)?[,:]? (?:section )?'
                       r'(?:"([^"]+)"|\*([^*\s][^*]*)\*)')
UNDERLINE = re.compile(r"([=\-~^*])\1{2,}")
LEADER = re.compile(r"^\s*(?:\*|#+|//)?\s?")
SKIPPED = (".png", ".jpg", ".gz", ".xz")


def tree_files(root):
    """The tree's files, as test_paths.sh reads them: not build/, not the
    hidden top-level entries."""
    for top in sorted(os.listdir(root)):
        if top.startswith(".") or top == "build":
            continue
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield top
            continue
        for d, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(SKIPPED):
                    yield os.path.relpath(os.path.join(d, f), root)


def headings(path):
    """The section titles of a reST page, inline literals unquoted."""
    with open(path) as f:
        lines = f.read().split("\n")
    return [lines[i - 1].replace("``", "").strip() for i in range(1, len(lines))
            if UNDERLINE.fullmatch(lines[i]) and lines[i - 1].strip()
            and not UNDERLINE.fullmatch(lines[i - 1])]


def references(text):
    """(line, page, title) of each section reference in TEXT."""
    starts, parts, pos = [], [], 0
    for line in text.split("\n"):
        part = LEADER.sub("", line, count=1)
        starts.append(pos)
        parts.append(part)
        pos += len(part) + 1
    flat = "\n".join(parts)
    out = []
    squeezed, index = squeeze(flat)
    for m in REFERENCE.finditer(squeezed):
        line = bisect.bisect_right(starts, index[m.start()])
        out.append((line, "Documentation/" + m.group(1), (m.group(2) or m.group(3)).strip()))
    return out


def squeeze(text):
    """TEXT with every run of blanks one space, and for each character of
    the result its offset in TEXT."""
    chars, index, blank = [], [], False
    for i, c in enumerate(text):
        if c.isspace():
            if blank:
                continue
            blank, c = True, " "
        else:
            blank = False
        chars.append(c)
        index.append(i)
    return "".join(chars), index


def missing(root, name, known):
    """'FILE:LINE: PAGE "TITLE"' for each reference of NAME to no section."""
    try:
        with open(os.path.join(root, name)) as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return [], 0
    bad, refs = [], references(text)
    for line, page, title in refs:
        path = os.path.join(root, page)
        if page not in known:
            known[page] = headings(path) if os.path.isfile(path) else None
        title = title.replace("``", "")
        if known[page] is None or not any(h.startswith(title) for h in known[page]):
            bad.append(f'{name}:{line}: {page} "{title}"')
    return bad, len(refs)


def self_check(tap):
    """A made-up reference in a scratch tree is reported, a true one not."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="esa-docs-sections.") as root:
        doc = "Documentation/"  # split, so that this file names no page
        os.makedirs(os.path.join(root, doc))
        with open(os.path.join(root, doc, "page.rst"), "w") as f:
            f.write("Page\n====\n\nSome ``section`` here\n---------------------\n")
        with open(os.path.join(root, "sample.c"), "w") as f:
            f.write("/*\n * (" + doc + "page.rst, \"Some section\") and\n"
                    " * (" + doc + "\n * page.rst, *No such\n * section*).\n */\n")
        bad, n = missing(root, "sample.c", {})
    tap.ok(n == 2 and bad == ["sample.c:3: " + doc + 'page.rst "No such section"'],
           "a reference to a missing section is reported, with its file and line",
           f"{n} references, reported: {bad}")


def main():
    tap = Tap()
    self_check(tap)
    files = list(tree_files(ROOT))
    groups = {}
    for name in files:
        groups.setdefault(name.split("/")[0] if "/" in name else ".", []).append(name)
    known, total = {}, 0
    for top in sorted(groups):
        bad, count = [], 0
        for name in groups[top]:
            b, n = missing(ROOT, name, known)
            bad += b
            count += n
        total += count
        if count == 0:
            continue
        label = "the files at the top" if top == "." else top + "/"
        tap.ok(not bad, f"{label}: every section it names exists ({count})"
               if not bad else f"{label}: names sections that do not exist", "\n".join(bad))
    tap.ok(total > 20, f"{total} section references read in the tree")
    sys.exit(tap.done())


main()
