# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration of Documentation/: `make docs` builds it as HTML
# into build/docs, every warning an error (Debian's python3-sphinx).
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "sphinx"))

project = "ESA"
with open(os.path.join(HERE, "..", "VERSION")) as f:
    release = version = f.read().strip()

extensions = ["esa_docs"]
root_doc = "index"
# The netlink spec and the man page are read by esa_docs, not as pages.
exclude_patterns = ["netlink", "sphinx"]
# Literal blocks are commands, tables and program output: not highlighted
# unless they say what they are.
highlight_language = "none"
html_theme = "alabaster"
html_static_path = []
