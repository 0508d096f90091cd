# SPDX-License-Identifier: GPL-2.0
"""Sphinx directives that show files of the tree in the documentation, so
that each fact keeps one source:

.. esa-manpage:: aggctl.8
    the troff man page, formatted by groff as man(1) shows it;
.. esa-netlink-spec:: netlink/specs/esa.yaml
    the generic netlink family: its operations, attribute sets and
    definitions, as tables.

Paths are relative to the document. A file that cannot be read or
formatted is an error naming the file and the cause."""
import os
import subprocess

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


class FileDirective(SphinxDirective):
    required_arguments = 1

    def source_path(self):
        """The argument as a path, recorded as a dependency of the page."""
        rel, path = self.env.relfn2path(self.arguments[0])
        if not os.path.isfile(path):
            raise self.error(f"{self.name}: {rel}: no such file")
        self.env.note_dependency(rel)
        return path


class ManPage(FileDirective):
    """The man page as text: groff -man, ASCII, no hyphenation."""

    def run(self):
        path = self.source_path()
        cmd = ["groff", "-man", "-Tascii", "-P-cbou", "-rHY=0", "-rLL=78n", path]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        except FileNotFoundError:
            raise self.error(f"{self.name}: groff not found (Debian: groff-base)")
        except subprocess.CalledProcessError as e:
            raise self.error(f"{self.name}: groff failed on {path}: {e.stderr.strip()}")
        block = nodes.literal_block(out, out)
        block["language"] = "none"
        return [block]


def table(header, rows):
    """reST list-table lines for HEADER and ROWS of strings."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header] + rows:
        lines.append("   * - " + row[0])
        lines += ["     - " + cell for cell in row[1:]]
    return lines + [""]


def literal(text):
    return f"``{text}``" if text else ""


def prose(text):
    """A spec's doc string as one line of reST (escaped: the specs' words
    are not markup)."""
    words = " ".join(str(text or "").split())
    for ch in "\\*`|_":
        words = words.replace(ch, "\\" + ch)
    return words


class NetlinkSpec(FileDirective):
    """A YAML netlink spec (the kernel's genetlink schema) as tables."""

    def run(self):
        import yaml

        path = self.source_path()
        try:
            with open(path) as f:
                spec = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            raise self.error(f"{self.name}: {path}: {e}")
        lines = self.family(spec) + self.operations(spec) + \
            self.attribute_sets(spec) + self.definitions(spec)
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(StringList(lines, path), self.content_offset, node,
                                match_titles=True)
        return node.children

    @staticmethod
    def heading(text, mark):
        return [text, mark * len(text), ""]

    def family(self, spec):
        groups = ", ".join(literal(g["name"]) for g in spec.get("mcast-groups", {}).get("list", []))
        lines = [f"Family {literal(spec['name'])}, version {spec.get('version', 1)}, "
                 f"protocol {spec.get('protocol', 'genetlink')}"
                 + (f"; multicast groups {groups}." if groups else "."), "",
                 prose(spec.get("doc")), ""]
        return lines

    def operations(self, spec):
        rows = []
        for op in spec["operations"]["list"]:
            if op.get("value") == 0:
                continue
            parts = []
            for kind in ("do", "dump"):
                for way in ("request", "reply"):
                    attrs = (op.get(kind) or {}).get(way, {}).get("attributes")
                    if attrs:
                        parts.append(f"{kind} {way}: " + ", ".join(attrs))
            if "event" in op:
                parts.append("event: " + ", ".join(op["event"]["attributes"]))
            flags = ", ".join(op.get("flags", []))
            rows.append([literal(op["name"]), prose(op.get("doc")),
                         "; ".join(parts), flags, literal(op.get("mcgrp", ""))])
        return self.heading("Operations", "-") + \
            table(["operation", "what", "attributes", "flags", "group"], rows)

    def attribute_sets(self, spec):
        lines = self.heading("Attribute sets", "-")
        for aset in spec["attribute-sets"]:
            lines += self.heading(f"{aset['name']} (``{aset.get('name-prefix', '')}*``)", "~")
            if aset.get("doc"):
                lines += [prose(aset["doc"]), ""]
            rows = []
            for attr in aset["attributes"]:
                if attr.get("type") == "unused":
                    continue
                kind = attr["type"]
                if "nested-attributes" in attr:
                    kind += f" of {attr['nested-attributes']}"
                if "enum" in attr:
                    kind += f" ({attr['enum']})"
                if attr.get("multi-attr"):
                    kind += ", repeated"
                checks = attr.get("checks", {})
                limits = ", ".join(f"{k} {v}" for k, v in checks.items())
                rows.append([literal(attr["name"]), kind, limits, prose(attr.get("doc"))])
            lines += table(["attribute", "type", "checks", "what"], rows)
        return lines

    def definitions(self, spec):
        rows = []
        for d in spec.get("definitions", []):
            if d["type"] == "const":
                value = str(d["value"])
            else:
                value = ", ".join(str(e) for e in d.get("entries", []))
            rows.append([literal(d["name"]), d["type"], value, prose(d.get("doc"))])
        return self.heading("Definitions", "-") + \
            table(["name", "kind", "value", "what"], rows)


def setup(app):
    app.add_directive("esa-manpage", ManPage)
    app.add_directive("esa-netlink-spec", NetlinkSpec)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
