#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bad arguments to esa-job and esa-ps: each is refused with exit status 2
# and a message that names the problem, before any socket is opened.
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$TMP"' EXIT
require_tools

JOB_OK=(--job 1 --worker 0 --fan-in 2 --ps 127.0.0.1 --bind 127.0.0.1 --slots 64)

expect_usage() { # tool "expected message" args...
	local tool=$1 msg=$2 rc
	shift 2
	"$tool" "$@" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	if [ $rc = 2 ] && grep -qF -- "$msg" "$TMP/err"; then
		ok "$(basename "$tool") $*: '$msg'"
	else
		not_ok "$(basename "$tool") $*: want exit 2 and '$msg', got $rc"
		diag < "$TMP/err"
	fi
}

expect_usage "$ESA_JOB" "missing --worker, --fan-in, --ps, --bind, --slots" --job 1
expect_usage "$ESA_JOB" "--job: '0' is not a decimal integer in 1..1023" "${JOB_OK[@]}" --job 0
expect_usage "$ESA_JOB" "--job: '1x' is not a decimal integer" "${JOB_OK[@]}" --job 1x
expect_usage "$ESA_JOB" "--fan-in: '33' is not a decimal integer in 1..32" "${JOB_OK[@]}" --fan-in 33
expect_usage "$ESA_JOB" "--worker 2 not below --fan-in 2" "${JOB_OK[@]}" --worker 2
expect_usage "$ESA_JOB" "--ps: bad IPv4 address '10.0.0'" "${JOB_OK[@]}" --ps 10.0.0
expect_usage "$ESA_JOB" "--bind: bad port in '127.0.0.1:70000': '70000' is not a decimal integer in 1..65535" "${JOB_OK[@]}" --bind 127.0.0.1:70000
expect_usage "$ESA_JOB" "--slots: '0' is not a decimal integer in 1..1048576" "${JOB_OK[@]}" --slots 0
expect_usage "$ESA_JOB" "--values: '364' is not a decimal integer in 1..363" "${JOB_OK[@]}" --values 364
expect_usage "$ESA_JOB" "--size: 6 is not a multiple of 4 bytes" "${JOB_OK[@]}" --size 6
expect_usage "$ESA_JOB" "--size: '1T' is not a size" "${JOB_OK[@]}" --size 1T
expect_usage "$ESA_JOB" "--type: 'int8' is not int32 or float32" "${JOB_OK[@]}" --type int8
expect_usage "$ESA_JOB" "--priority: '256' is not a decimal integer in 0..255" "${JOB_OK[@]}" --priority 256
expect_usage "$ESA_JOB" "--amplitude: 'inf' is not a decimal number" "${JOB_OK[@]}" --amplitude inf
expect_usage "$ESA_JOB" "--scale-log2: '63' is not a decimal integer" "${JOB_OK[@]}" --scale-log2 63
expect_usage "$ESA_JOB" "aggregator offset 64 not below slots 64" "${JOB_OK[@]}" --agg-offset 64
expect_usage "$ESA_JOB" "aggregator span 65 above slots 64" "${JOB_OK[@]}" --agg-span 65
expect_usage "$ESA_JOB" "unexpected argument 'extra'" "${JOB_OK[@]}" extra
expect_usage "$ESA_JOB" "Try 'esa-job --help'" "${JOB_OK[@]}" --no-such-option
# Decimal only, in every tool: 0x10 is no number, 010 is ten (never 8).
expect_usage "$ESA_JOB" "--job: '0x10' is not a decimal integer in 1..1023" "${JOB_OK[@]}" --job 0x10
expect_usage "$ESA_JOB" "--ps: bad port in '127.0.0.1:0x10': '0x10' is not a decimal integer" "${JOB_OK[@]}" --ps 127.0.0.1:0x10
expect_usage "$ESA_JOB" "--worker 10 not below --fan-in 2" "${JOB_OK[@]}" --worker 010
expect_usage "$ESA_JOB" "--bind: bad port in '127.0.0.1:0': '0' is not a decimal integer in 1..65535" "${JOB_OK[@]}" --bind 127.0.0.1:0
# A one-armed switch and a job token: the option (or variable) named.
TOK=0123456789abcdef
expect_usage "$ESA_JOB" "--switch: bad IPv4 address 'sw'" "${JOB_OK[@]}" --switch sw
expect_usage "$ESA_JOB" "--switch: switch port 47001 is not 47000" "${JOB_OK[@]}" --switch 10.0.0.9:47001
expect_usage "$ESA_JOB" "--switch: switch address 0.0.0.0 is not a host" "${JOB_OK[@]}" --switch 0.0.0.0
expect_usage "$ESA_JOB" "--token: '0123' is not a token of 16 hexadecimal digits" "${JOB_OK[@]}" --token 0123
expect_usage "$ESA_JOB" "--token: token '0000000000000000': 0 means no token" "${JOB_OK[@]}" --token 0000000000000000
expect_usage "$ESA_JOB" "--values 363 above 361: a job with a token" "${JOB_OK[@]}" --token $TOK --values 363
ESA_SWITCH=10.0.0.256 expect_usage "$ESA_JOB" "ESA_SWITCH: bad IPv4 address '10.0.0.256'" "${JOB_OK[@]}"
ESA_TOKEN=0x23456789abcdef expect_usage "$ESA_JOB" "ESA_TOKEN: '0x23456789abcdef' is not a token" "${JOB_OK[@]}"
ESA_TOKEN=$TOK expect_usage "$ESA_JOB" "--values 363 above 361: a job with a token" "${JOB_OK[@]}" --values 363
expect_usage "$ESA_PS" "--job: job 1: TOKEN: 'xyz' is not a token of 16 hexadecimal digits" --job 1:2:xyz
expect_usage "$ESA_PS" "--job: job 1: TOKEN: '${TOK}0' is not a token" --job 1:2:${TOK}0@10.0.0.1,10.0.0.2
expect_usage "$ESA_PS" "--switch: switch port 1 is not 47000" --job 1:2 --switch 10.0.0.9:1
expect_usage "$ESA_PS" "--host-only and a switch address (--switch, ESA_SWITCH) exclude each other" --job 1:2 --host-only --switch 10.0.0.9
ESA_SWITCH=10.0.0.9 expect_usage "$ESA_PS" "--host-only and a switch address" --job 1:2 --host-only
ESA_SWITCH=x expect_usage "$ESA_PS" "ESA_SWITCH: bad IPv4 address 'x'" --job 1:2
ESA_TOKEN=1 expect_usage "$ESA_PS" "ESA_TOKEN: '1' is not a token" --job 1:2
expect_usage "$ESA_PS" "--values 363 above 361: job 2 has a token" --job 1:2 --job 2:2:$TOK --values 363

expect_usage "$ESA_PS" "missing --job"
expect_usage "$ESA_PS" "--job: '1' is not ID:FANIN" --job 1
expect_usage "$ESA_PS" "--job: FANIN: '0' is not a decimal integer in 1..32" --job 1:0
expect_usage "$ESA_PS" "--job: job 1: 1 worker addresses for fan-in 2" --job 1:2@10.0.0.1
expect_usage "$ESA_PS" "--job: job 1: more worker addresses than fan-in 1" --job 1:1@10.0.0.1,10.0.0.2
expect_usage "$ESA_PS" "--job: job 1: bad IPv4 address 'x'" --job 1:1@x
expect_usage "$ESA_PS" "--job: job 1 given twice" --job 1:2 --job 1:3
expect_usage "$ESA_PS" "--iterations and --size go together" --job 1:2 --iterations 3
expect_usage "$ESA_PS" "--results and --iterations/--size exclude each other" --job 1:2 --iterations 3 --size 1M --results 5
expect_usage "$ESA_PS" "--cache: '8' is not a decimal integer in 16..1048576" --job 1:2 --cache 8
expect_usage "$ESA_PS" "--bind: bad IPv4 address 'localhost'" --job 1:2 --bind localhost
expect_usage "$ESA_PS" "--job: ID: '0x10' is not a decimal integer" --job 0x10:2
expect_usage "$ESA_PS" "--linger-ms: '1e3' is not a decimal integer" --job 1:2 --linger-ms 1e3

# --help succeeds and documents every option the parser knows; --version
# names the tool and the version of ESA (the top-level VERSION file).
version=$(cat "$ROOT/VERSION")
for t in "$ESA_JOB" "$ESA_PS"; do
	if "$t" --help > "$TMP/help" && grep -q "^usage: $(basename "$t")" "$TMP/help"; then
		ok "$(basename "$t") --help"
	else
		not_ok "$(basename "$t") --help"
	fi
	for v in --version -V; do
		out=$("$t" $v 2>&1)
		if [ $? = 0 ] && [[ "$out" == "$(basename "$t") (ESA) $version"* ]]; then
			ok "$(basename "$t") $v"
		else
			nok "$(basename "$t") $v: $out"
		fi
	done
done
tap_done