#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A job's token through aggctl (Documentation/security.rst), with the esa
# module (in the VM: generic netlink) or module-less (this host: the data
# plane's maps): job add takes "token HEX16" or "token random" (drawn,
# printed once, as text and as JSON); job show and the module's replies
# say only whether a job has one; bad token strings are refused naming
# "token"; config save writes the token into a file of mode 0600, and the
# saved file gives the job back its token.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh
if [ "$(id -u)" != 0 ]; then
	skip "job token" "needs root"
	tap_done
fi
MODULE=no
grep -q '^esa ' /proc/modules 2> /dev/null && MODULE=yes
PIN=$(pin_path tok)
A="$AGGCTL -d $PIN"
P0=$(ifname tok)
DIR=$(mktemp -d)
TOK=0123456789abcdef
cleanup() {
	$A switch detach dev $P0 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	[ $MODULE = yes ] && reset_module > /dev/null 2>&1
	rm -rf "$DIR"
}
stub_ports_add tok || bail "the switch port"
cleanup_add cleanup
[ $MODULE = yes ] && reset_module > /dev/null
expect "switch attach" 0 '^$' $A switch attach dev $P0 capacity 128
# within the capacity, so that the saved settings apply again
expect "switch set" 0 '^$' $A switch set slots 100

# Bad token strings: usage errors naming the keyword, nothing added.
W="ps 10.6.0.1:47000 worker 10.6.0.2:5000"
expect "a short token is refused, naming token" 2 \
	"'0123' is not a token of 16 hexadecimal digits" $A job add id 3 $W token 0123
expect "a non-hex token is refused, naming token" 2 \
	"'0123456789abcdeg' is not a token of 16 hexadecimal digits" $A job add id 3 $W token 0123456789abcdeg
expect "17 hex digits are refused" 2 "'0123456789abcdef0' is not a token of 16 hexadecimal digits" \
	$A job add id 3 $W token 0123456789abcdef0
expect "a 0x prefix is refused" 2 "'0x23456789abcdef' is not a token of 16 hexadecimal digits" \
	$A job add id 3 $W token 0x23456789abcdef
expect "token 0 (none) is refused" 2 "token '0000000000000000': 0 means no token" \
	$A job add id 3 $W token 0000000000000000
expect "token without a value" 2 'token' $A job add id 3 $W token
expect "nothing was added" 1 'no such job' $A job show id 3

expect "job add with a token" 0 '^$' $A job add id 3 $W token $TOK priority 2
expect "job add without one" 0 '^$' $A job add id 4 ps 10.6.0.1:47000 worker 10.6.0.4:5000
expect "job show: token yes" 0 '^job 3 .* token yes ' $A job show id 3
expect "job show: token no" 0 '^job 4 .* token no ' $A job show id 4
expect "job show -j: has_token" 0 '"has_token":true' $A -j job show id 3
out=$($A job show; $A -j job show; $A -j -p job show)
grep -qi "$TOK\|81985529216486895" <<< "$out" &&
	not_ok "job show never shows the token's value: $(flat "$out")" ||
	ok "job show never shows the token's value"
if [ $MODULE = yes ]; then
	# The module: what aggctl's checks would stop, sent raw.
	RAW_JOB=(ps-addr:ip:10.6.0.1 ps-port:be16:47000 'workers:nest{' 'worker:nest{'
		 addr:ip:10.6.0.9 port:be16:5000 '}' '}')
	expect "module: token 0 is refused, pointing at it" 1 'out of range.* attr=token' \
		$RAW job-add job-id:u32:9 "${RAW_JOB[@]}" token:u64:0
	expect "module: a token on job change is refused" 1 'attr=token' \
		$RAW job-change job-id:u32:3 token:u64:5
	expect "module: has-token is read-only" 1 'attr=has-token' \
		$RAW job-add job-id:u32:9 "${RAW_JOB[@]}" has-token:u8:1
	expect "module: job token get needs the id" 1 'msg=job token get needs the job id' \
		$RAW job-token-get
	expect "module: job token get of a job" 0 '^ok 1' $RAW job-token-get job-id:u32:3
	expect "module: the data plane's job lookup has the token" 0 \
		"^prio 2 fan_in 1 base 0 quota 0 token $TOK\$" $PROBE lookup 3
	expect "module: and none for a job without" 0 '^prio [0-9]+ fan_in 1 base 0 quota 0$' \
		$PROBE lookup 4
fi
expect "token on job change is refused, naming token" 2 \
	'"token" is given on job add only' $A job change id 3 token $TOK
expect "token on job del is refused" 2 'token' $A job del id 3 token $TOK

out=$($A job add id 5 ps 10.6.0.1:47000 worker 10.6.0.5:5000 token random 2>&1)
r=$?
rand=$(sed -n 's/^job 5 token \([0-9a-f]\{16\}\)$/\1/p' <<< "$out")
[ $r = 0 ] && [ -n "$rand" ] && [ "$rand" != 0000000000000000 ] &&
	ok "token random: printed once, 16 hex digits" ||
	not_ok "token random: exit $r, output: $(flat "$out")"
out=$($A -j job add id 6 ps 10.6.0.1:47000 worker 10.6.0.6:5000 token random 2>&1)
rand6=$($PY -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["id"], d["token"])' <<< "$out" 2> /dev/null)
[[ "$rand6" =~ ^6\ [0-9a-f]{16}$ ]] && [ "${rand6#6 }" != "$rand" ] &&
	ok "token random -j: {id, token}, another token" ||
	not_ok "token random -j: $(flat "$out")"
expect "a random token shows as yes" 0 '^job 5 .* token yes ' $A job show id 5

# config save: the tokens, in a file only its owner reads.
$A config save file "$DIR/switch.conf"
same "config save file exits 0" "$?" 0
same "config save file is mode 0600" "$(stat -c %a "$DIR/switch.conf")" 600
grep -q "^job add id 3 .* token $TOK\$" "$DIR/switch.conf" &&
	grep -q "^job add id 5 .* token $rand\$" "$DIR/switch.conf" &&
	! grep -q '^job add id 4 .*token' "$DIR/switch.conf" &&
	ok "config save writes each token, and none for a job without" ||
	not_ok "config save tokens: $(flat "$(grep '^job' "$DIR/switch.conf")")"
(umask 022; $A config save > "$DIR/stdout.conf")
same "config save to a redirected stdout makes it mode 0600" \
	"$(stat -c %a "$DIR/stdout.conf")" 600
same "the same lines either way" "$(cat "$DIR/stdout.conf")" "$(cat "$DIR/switch.conf")"
touch "$DIR/old.conf"
chmod 644 "$DIR/old.conf"
$A config save file "$DIR/old.conf"
same "config save over an existing file makes it 0600" "$(stat -c %a "$DIR/old.conf")" 600
expect "config save file without a name" 2 'file' $A config save file
expect "config save file in a missing directory is named" 1 "file $DIR/none/x.conf: No such file" \
	$A config save file "$DIR/none/x.conf"

# The saved file gives the jobs back their tokens.
for id in 3 4 5 6; do $A job del id $id; done
$A switch detach dev $P0 > /dev/null
$A switch unload > /dev/null
[ $MODULE = yes ] && reset_module > /dev/null
expect "-batch applies the saved file" 0 '^$' $A -batch "$DIR/switch.conf"
expect "the restored job has its token" 0 '^job 3 .* token yes ' $A job show id 3
$A config save file "$DIR/again.conf"
same "saved again: the same tokens" "$(grep '^job' "$DIR/again.conf")" \
	"$(grep '^job' "$DIR/switch.conf")"
tap_done
