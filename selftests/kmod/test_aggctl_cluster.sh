#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl cluster: one job on every switch server of a cluster file. Two
# module-less data planes pinned in two pin directories on this host are
# two servers reached through the "local" transport (the same aggctl
# -batch - that ssh runs on a remote server). job add puts the job on
# both; a second server that refuses (a job id it already has, a pin
# directory without a data plane, an ssh destination that refuses on
# loopback) fails the command naming it, and the job is gone from the
# first again; job del deletes on each and reports each.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh
DIR=$(mktemp -d)
cleanup_add rm -rf "$DIR"
C="$AGGCTL cluster file $DIR/cluster"

# refused NAME LINES DESC REGEX: cluster file $DIR/NAME holding LINES
# (backslash escapes as printf's) is refused: exit 2, output matching REGEX.
refused() {
	printf '%b' "$2" > "$DIR/$1"
	expect "$3" 2 "$4" $AGGCTL cluster file "$DIR/$1" job del id 1
}

# Cluster files: what is wrong is named with its line (no server needed).
refused twice 'a local\na ssh://root@127.0.0.1:1\n' "a server named twice" \
	"^aggctl: cluster: $DIR/twice:2: server \"a\" named twice$"
refused nodest '# servers\n\nalone\n' "a server without a destination" \
	"$DIR/nodest:3: server \"alone\" has no destination"
refused shell 'a local /tmp/x;reboot\n' "a pin directory with shell characters" \
	'bad pin directory "/tmp/x;reboot"'
refused name 'sw/1 local\n' "a server name with a slash" 'bad server name "sw/1"'
refused opt 'a -oProxyCommand=x\n' "a destination that ssh would take as an option" \
	'bad destination "-oProxyCommand=x"'
refused words 'a local /p extra\n' "a fourth word" \
	'"extra": a server line is NAME DEST \[PINDIR\]'
refused many "$(for i in $(seq 17); do echo "s$i local"; done)\n" \
	"17 servers are more than a job spans" "$DIR/many:17: more servers than 16"
refused empty '# none\n' "a file without servers" "$DIR/empty names no server"
expect "a missing file" 2 "$DIR/missing: No such file or directory" \
	$AGGCTL cluster file "$DIR/missing" job del id 1
expect "no file keyword" 2 'needs "file FILE"' $AGGCTL cluster job del id 1
printf 'a local\n' > "$DIR/one"
expect "a job without id" 2 'the job needs "id ID"' \
	$AGGCTL cluster file "$DIR/one" job add ps 10.6.0.1:47000 worker 10.6.0.2:5000
expect "job del takes only the id" 2 'job del takes only "id ID"' \
	$AGGCTL cluster file "$DIR/one" job del id 1 quota 3
expect "a timeout out of range" 2 "timeout \\(s\\): '0' is not a decimal integer in 1..300" \
	$AGGCTL cluster file "$DIR/one" timeout 0 job del id 1
expect "-d, which cannot say which server it is for" 2 \
	"-d /sys/fs/bpf/x does not apply; give each server's pin directory in the cluster file" \
	$AGGCTL -d /sys/fs/bpf/x cluster file "$DIR/one" job del id 1
expect "an unknown cluster command" 2 'unknown argument "show"' \
	$AGGCTL cluster file "$DIR/one" job show

if grep -q '^esa ' /proc/modules 2> /dev/null; then
	skip "cluster of module-less data planes" "the esa module is loaded here"
	tap_done
fi
if [ "$(id -u)" != 0 ]; then
	skip "cluster of module-less data planes" "needs root"
	tap_done
fi
PIN_A=$(pin_path cla)
PIN_B=$(pin_path clb)
PA=$(ifname cla)
PB=$(ifname clb)
stub_ports_add cla clb || bail "the two servers' ports"
cleanup_add $AGGCTL -d "$PIN_A" switch unload
cleanup_add $AGGCTL -d "$PIN_B" switch unload
check "server a: a module-less switch under its pin directory" \
	$AGGCTL -d "$PIN_A" switch attach dev $PA capacity 64
check "server b: another under another pin directory" \
	$AGGCTL -d "$PIN_B" switch attach dev $PB capacity 64
printf '# two switch servers on this host\na local %s\nb local %s\n' \
	"$PIN_A" "$PIN_B" > "$DIR/cluster"
JOB="id 7 ps 10.6.0.1:47000 worker 10.6.0.2:5000 worker 10.6.0.3:5000 quota 16"
# job ID on server PIN: its record, or nothing.
job_on() { $AGGCTL -d "$1" job show id "$2" 2> /dev/null; }

expect "job add on both servers, each reported with its shard" 0 \
	'^server a job 7 added shard 0 of 2.server b job 7 added shard 1 of 2$' \
	bash -c "$C job add $JOB | tr '\n' '.' | sed 's/\.$//'"
want='^job 7 fan-in 2 .*quota 16 .*worker 10.6.0.2:5000 .*worker 10.6.0.3:5000'
grep -qE "$want" <<< "$(job_on "$PIN_A" 7)" && ok "server a has job 7" ||
	not_ok "server a: $(flat "$(job_on "$PIN_A" 7)")"
grep -qE "$want" <<< "$(job_on "$PIN_B" 7)" && ok "server b has job 7" ||
	not_ok "server b: $(flat "$(job_on "$PIN_B" 7)")"
expect "job del deletes on both, each reported" 0 \
	'^server a job 7 deleted shard 0 of 2.server b job 7 deleted shard 1 of 2$' \
	bash -c "$C job del id 7 | tr '\n' '.' | sed 's/\.$//'"
[ -z "$(job_on "$PIN_A" 7)$(job_on "$PIN_B" 7)" ] && ok "job 7 is on neither server" ||
	not_ok "job 7 left: $(flat "$(job_on "$PIN_A" 7)$(job_on "$PIN_B" 7)")"
out=$($AGGCTL -j cluster file "$DIR/cluster" job add $JOB)
json_ok <<< "$out" && grep -q '"server":"b","job":7,"result":"added","shard":1,"shards":2' <<< "$out" &&
	ok "cluster -j is JSON, with each server's shard" || not_ok "cluster -j: $(flat "$out")"
$C job del id 7 > /dev/null

# Rollback: server b refuses (it has a job 9 of its own already).
check "server b alone gets a job 9" \
	$AGGCTL -d "$PIN_B" job add id 9 ps 10.6.0.1:47000 worker 10.6.0.9:5000
b9=$(job_on "$PIN_B" 9)
expect "job add refused by server b fails naming it, after rolling a back" 1 \
	"^aggctl: cluster: server b \\(local\\): job add failed: aggctl: job add: File exists: job already exists \\(exit 1\\)$" \
	$C job add id 9 ps 10.6.0.1:47000 worker 10.6.0.2:5000
out=$($C job add id 9 ps 10.6.0.1:47000 worker 10.6.0.2:5000 2> /dev/null)
same "the report says a was added, then rolled back" "$out" \
	"$(printf 'server a job 9 added shard 0 of 2\nserver a job 9 rolled-back shard 0 of 2')"
[ -z "$(job_on "$PIN_A" 9)" ] && ok "rollback: server a has no job 9" ||
	not_ok "rollback: server a still has $(flat "$(job_on "$PIN_A" 9)")"
same "server b's own job 9 is untouched" "$(job_on "$PIN_B" 9)" "$b9"
expect "job del where one server lacks the job: fails naming it, deletes on the other" 1 \
	"server a \\(local\\): job del failed: .*no such job \\(exit 1\\)" \
	$C job del id 9
[ -z "$(job_on "$PIN_B" 9)" ] && ok "job del went on to server b" ||
	not_ok "server b still has job 9"

# Rollback: server b's pin directory holds no data plane.
printf 'a local %s\nb local %s-none\n' "$PIN_A" "$PIN_B" > "$DIR/nodp"
expect "a server without a data plane fails naming it" 1 \
	"server b \\(local\\): job add failed: .*not loaded" \
	$AGGCTL cluster file "$DIR/nodp" job add $JOB
[ -z "$(job_on "$PIN_A" 7)" ] && ok "rollback: server a has no job 7" ||
	not_ok "rollback: server a still has job 7"

# A server that is down: ssh on loopback to a port nobody listens on
# refuses at once; BatchMode so that nothing prompts.
printf 'a local %s\ndown ssh://root@127.0.0.1:1\n' "$PIN_A" > "$DIR/down"
expect "a server that is down fails naming it and ssh's reason" 1 \
	'server down \(ssh://root@127.0.0.1:1\): job add failed: ssh: connect to host 127.0.0.1 port 1: Connection refused \(ssh exit 255: server unreachable or login refused\)' \
	$AGGCTL cluster file "$DIR/down" timeout 2 job add $JOB < /dev/null
[ -z "$(job_on "$PIN_A" 7)" ] && ok "rollback: server a has no job 7 after the down server" ||
	not_ok "rollback: server a still has job 7"
check "server a alone gets a job 7" $AGGCTL -d "$PIN_A" job add $JOB
expect "job del with a server down fails naming it" 1 \
	'server down \(ssh://root@127.0.0.1:1\): job del failed: ssh: connect to host 127.0.0.1 port 1: Connection refused' \
	$AGGCTL cluster file "$DIR/down" timeout 2 job del id 7
[ -z "$(job_on "$PIN_A" 7)" ] && ok "job del still deleted on server a" ||
	not_ok "server a still has job 7 after job del"
tap_done
