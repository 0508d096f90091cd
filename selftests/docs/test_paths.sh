#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every repository path that Documentation/, README.md, a comment or a
# script names exists: a word that starts with one of the tree's top-level
# folders (uapi/, bpf/, tools/, ...) is such a path. It exists when it is a
# file or folder from the root or from the naming file's folder, when it
# names a program built from P.c (selftests/bpf/test_hammer), or when it is
# a pattern (followed by [, *, {, < or $) that something in the tree
# matches. Absolute paths (/sys/..., /usr/...) name the target system,
# never this tree, and are not read; nor are #include <...> lines (the
# system's headers: libbpf's are named as the data plane's folder is),
# build/ (outputs) or the hidden top-level entries (.git, .cache).
# One result per top-level folder and one for the files at the top; each
# missing path as FILE:LINE: PATH.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"

TOP='uapi|include|lib|bpf|kmod|tools|p4|selftests|bench|scripts|Documentation'
# Named but not in a fresh tree, each for its reason:
ALLOWED=(
	kmod/esa.ko             # built by `make kmod`, next to its sources
	scripts/pahole-flags.sh # the kernel tree's script (linux-source)
	scripts/ro-probe        # the file vm_run.sh creates to probe the root
	kmod/esa                # dkms.conf's module: its location and name, .ko added
	lib/systemd/            # debian/*.install: a path in the package, under /
	'kmod/.*'               # dkms.conf's CLEAN: kbuild's .cmd files, a build's
)

# The files read: the tree's files as git lists them (tracked, and new
# ones not ignored), so that what a build leaves beside its sources (the
# module's .cmd files name the kernel tree's paths) is not read; outside
# a git checkout every file but the outputs and caches.
tree_files() {
	if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
		git -C "$ROOT" ls-files --cached --others --exclude-standard |
			while IFS= read -r f; do [ -f "$ROOT/$f" ] && echo "$f"; done | sort
	else
		(cd "$ROOT" && find . \( -path './.*' -o -path ./build \) -prune -o \
			-type f -print | sed 's|^\./||' | sort)
	fi
}

# FILE: "LINE:WORD" for each path-like word of FILE; a pattern keeps the
# character that makes it one.
path_words() {
	sed 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<.*//' "$ROOT/$1" |
		grep -noP "(?<![\\w./\$@{}~-])(?:$TOP)/[\\w.+/-]*[\\[*{<\$]?" |
		sed -E 's/[.,:;)-]+$//'
}

allowed() {
	local a
	for a in "${ALLOWED[@]}"; do
		# an entry ending in / allows everything below it
		case $a in */) [[ "$1" == "$a"* ]] && return 0 ;; esac
		[ "$1" = "$a" ] && return 0
	done
	return 1
}

# FILE WORD: true when WORD, named in FILE, is in the tree.
exists() {
	local file=$1 word=$2 dir
	dir=$(dirname "$file")
	allowed "$word" && return 0
	case $word in
	*[\[*\{\<\$])
		compgen -G "$ROOT/${word%?}*" > /dev/null ||
			compgen -G "$ROOT/$dir/${word%?}*" > /dev/null
		return
		;;
	esac
	[ -e "$ROOT/$word" ] || [ -e "$ROOT/$dir/$word" ] ||
		[ -e "$ROOT/$word.c" ] || allowed "$word"
}

# FILE...: print "FILE:LINE: WORD" for each missing path; count the words.
missing_in() {
	local f lw
	checked=0
	for f in "$@"; do
		while IFS= read -r lw; do
			checked=$((checked + 1))
			exists "$f" "${lw#*:}" || echo "$f:${lw%%:*}: ${lw#*:}"
		done < <(path_words "$f")
	done
}

# The check itself can fail: a made-up path in a scratch file is reported.
T=$(mktemp -d /tmp/esa-docs-paths.XXXXXX); trap 'rm -rf "$T"' EXIT
ROOT_REAL=$ROOT
sample=tools/$(printf 'sample.txt')
made_up=tools/$(printf 'no_such_%s.c' file)
mkdir -p "$T/tools" "$T/uapi"
touch "$T/tools/x" "$T/uapi/esa_wire.h"
printf 'see %s and tools/, uapi/esa_wire.h\n' "$made_up" > "$T/$sample"
ROOT=$T
out=$(missing_in "$sample")
ROOT=$ROOT_REAL
if [ "$out" = "$sample:1: $made_up" ]; then
	ok "a made-up path is reported, with its file and line"
else
	not_ok "a made-up path is reported, with its file and line"
	diag "got: $out"
fi

total=0
mapfile -t files < <(tree_files)
# TOP: the files of the top-level folder TOP, or with "." those at the top.
group() {
	if [ "$1" = . ]; then
		printf '%s\n' "${files[@]}" | grep -v /
	else
		printf '%s\n' "${files[@]}" | grep "^$1/"
	fi | grep -vE '\.(png|jpg|gz|xz)$'
}

for top in . $(printf '%s\n' "${files[@]}" | sed -n 's|/.*||p' | sort -u); do
	name=$top/
	[ "$top" = . ] && name="the files at the top"
	mapfile -t mine < <(group "$top")
	[ "${#mine[@]}" -gt 0 ] || continue
	out=$(missing_in "${mine[@]}"; echo "#checked $checked")
	n=${out##*#checked }
	out=${out%#checked*}
	total=$((total + n))
	if [ -z "${out//[[:space:]]/}" ]; then
		ok "$name: every repository path it names exists ($n)"
	else
		not_ok "$name: names paths that are not in the tree"
		printf '%s' "$out" | diag
	fi
done
# A scan that finds nothing tests nothing.
if [ "$total" -gt 100 ]; then
	ok "$total path names read in the tree"
else
	not_ok "only $total path names read in the tree"
fi
tap_done
