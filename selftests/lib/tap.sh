# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The one TAP helper of the shell tests (sourced). Output is KTAP-compatible
# TAP 13, as kselftest prints it: "ok N - DESC", "not ok N - DESC",
# "ok N - DESC # SKIP REASON", "ok N - DESC # XFAIL BUG", "# diagnostics"
# and the plan "1..N" at the end. The kernel's ktap_helpers.sh (Linux 6.9
# and later) is not in the linux-source-6.1 this project builds against,
# so this file plays its part; selftests/run_tests.sh reads the same lines
# from the C tests (kselftest_harness.h).
#
#   . "$ROOT/selftests/lib/tap.sh"
#
#   ok DESC               a passed check
#   not_ok DESC           a failed check (the test then exits 1 at tap_done)
#   skip DESC REASON      not run here, and why
#   check DESC CMD...     run CMD (its output as "# " lines): ok if it succeeds
#   check_fails DESC CMD... ok if CMD fails
#   check_refused DESC WANT CMD...
#                         ok if CMD fails and its output holds WANT (the
#                         reason it must give); not ok if it succeeds or
#                         gives another reason
#   xfail DESC BUG CMD... a check that fails today because of a tracked bug:
#                         BUG names it ("issue 15: ..."). CMD failing is
#                         "ok ... # XFAIL BUG"; CMD succeeding is "not ok ...
#                         # XPASS" (the bug is gone: turn it into a check).
#                         The runner fails an XFAIL that names no issue.
#   diag TEXT...          a "# TEXT" line; with no TEXT, every line of stdin
#   bail DESC             not_ok DESC, then stop the test (exit traps run)
#   need_root DESC        unless run as root: skip DESC ("needs root") and
#                         end the test
#   tap_done              print the plan; exit 0 if nothing failed, else 1
# Results are numbered here; selftests/run_tests.sh renumbers them.

[ -n "${__TAP_SH:-}" ] && return 0
__TAP_SH=1
__tap_n=0
__tap_failed=0

diag() { if [ $# -gt 0 ]; then echo "# $*"; else sed 's/^/# /'; fi; }
ok() { __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $*"; }
not_ok() {
	__tap_n=$((__tap_n + 1)); __tap_failed=$((__tap_failed + 1))
	echo "not ok $__tap_n - $*"
}
skip() { __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $1 # SKIP $2"; }
bail() { not_ok "$*"; exit 1; }
need_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root"
		tap_done
	fi
}
tap_done() {
	echo "1..$__tap_n"
	[ "$__tap_failed" = 0 ]
	exit $?
}

# __tap_run CMD...: run CMD, its output as diagnostics; its status.
__tap_run() {
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	return "$rc"
}

check() {
	local desc=$1 rc=0
	shift
	__tap_run "$@" || rc=$?
	if [ "$rc" = 0 ]; then ok "$desc"; else not_ok "$desc (exit $rc)"; fi
	return "$rc"
}

check_fails() {
	local desc=$1 rc=0
	shift
	__tap_run "$@" || rc=$?
	if [ "$rc" != 0 ]; then ok "$desc"; else not_ok "$desc (unexpectedly succeeded)"; fi
	[ "$rc" != 0 ]
}

check_refused() {
	local desc=$1 want=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		not_ok "$desc: accepted"
	elif [[ "$out" == *"$want"* ]]; then
		ok "$desc: refused: $out"
	else
		not_ok "$desc: wrong message '$out', wanted '$want'"
	fi
}

xfail() {
	local desc=$1 bug=$2 rc=0
	shift 2
	__tap_run "$@" || rc=$?
	if [ "$rc" != 0 ]; then
		__tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $desc # XFAIL $bug"
	else
		not_ok "$desc # XPASS: passes although $bug is open: make it a check"
	fi
}
