#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl config save and aggctl -batch: a switch saved, taken down and
# applied again from the file is the same switch (switch show, policy show,
# job show as JSON), with the esa module (in the VM) or module-less (this
# host, or the VM without the module); and -batch stops at the first
# failing line, naming it, unless -force.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
need_root "config save"
MODULE=no
grep -q '^esa ' /proc/modules 2> /dev/null && MODULE=yes
PIN=/sys/fs/bpf/esa-cfg-$$
A="$AGGCTL -d $PIN"
P0=$(ifname p0)
P1=$(ifname p1)
DIR=$(mktemp -d)
cleanup() {
	$A switch detach dev $P0 dev $P1 > /dev/null 2>&1
	$A switch detach dev $P0 > /dev/null 2>&1
	$A switch detach dev $P1 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	[ $MODULE = yes ] && reset_module > /dev/null 2>&1
	rm -rf "$PIN" "$DIR"
}
stub_ports_add p0 p1 || bail "switch ports"
cleanup_add cleanup

# What the comparison sees: the switch, its policy, its jobs. The module's
# data plane generation names the aggregator array a load made, so a new
# load has a new one by design: state, not configuration.
state() {
	$A -j switch show | sed 's/"dp_generation":[0-9]*,\{0,1\}//'
	$A -j policy show
	$A -j job show
}

# Take the switch down: ports, data plane, and the module's jobs and
# settings (what a reboot loses).
take_down() {
	$A switch detach dev $P0 &&
	$A switch detach dev $P1 &&
	$A switch unload || return 1
	[ $MODULE = no ] || reset_module > /dev/null
}

if [ $MODULE = no ]; then
	expect "config save without a switch: says so" 3 'config save: .*not loaded' $A config save
else
	reset_module > /dev/null
	out=$($A config save 2>&1)
	grep -q '^switch set slots 4096 timeout 100000 aging 1000$' <<< "$out" &&
		! grep -q '^switch attach' <<< "$out" &&
		ok "config save with the module, no data plane: its settings, no attach" ||
		not_ok "config save with the module, no data plane: $(flat "$out")"
fi

# A switch with a port in each XDP mode, settings, a policy, and jobs
# with and without port bindings, fixed and automatic priorities.
expect "attach native" 0 '^$' $A switch attach dev $P0 mode native capacity 128
expect "attach generic" 0 '^$' $A switch attach dev $P1 mode generic
expect "switch set" 0 '^$' $A switch set slots 100 timeout 5000
[ $MODULE = yes ] && $A switch set aging 700
expect "policy set static" 0 '^$' $A policy set static
expect "job add bound" 0 '^$' $A job add id 4 ps 10.6.0.1:47000 dev $P0 \
	worker 10.6.0.2:5000 dev $P1 worker 10.6.0.3:5001 priority 9 quota 16
expect "job add first sight" 0 '^$' $A job add id 6 ps 10.6.0.1:47000 \
	worker 10.6.0.4:5000 quota 8
before=$(state)
grep -q '"id":6' <<< "$before" && grep -q '"policy":"static"' <<< "$before" &&
	ok "the switch to save shows its jobs and policy" ||
	not_ok "the switch to save shows its jobs and policy: $(flat "$before")"

$A config save > "$DIR/switch.conf"
same "config save exits 0" "$?" 0
want_set="switch set slots 100 timeout 5000"
[ $MODULE = yes ] && want_set="$want_set aging 700"
same "config save writes aggctl commands" "$(grep -v '^#' "$DIR/switch.conf")" \
"switch attach dev $P0 mode native capacity 128
switch attach dev $P1 mode generic
$want_set
policy set static
job add id 4 ps 10.6.0.1:47000 dev $P0 worker 10.6.0.2:5000 dev $P1 worker 10.6.0.3:5001 priority 9 quota 16
job add id 6 ps 10.6.0.1:47000 worker 10.6.0.4:5000 priority auto quota 8"

take_down
expect "taken down" 0 '"dataplane":false' $A -j switch show
expect "-batch applies the saved file" 0 '^$' $A -batch "$DIR/switch.conf"
after=$(state)
same "save, take down, -batch: the same switch, policy and jobs" "$after" "$before"

# -batch from standard input, with comments, blank lines and quotes.
take_down
out=$(printf '# a comment\n\n%s\n' "$(cat "$DIR/switch.conf")" |
	sed 's/^policy set static$/policy "set" '\''static'\''  # quoted/' |
	$A -batch - 2>&1)
same "-batch - reads stdin, skips comments and blank lines, unquotes" \
	"$out$(state)" "$before"

# The first failing line stops the batch and is named; -force goes on.
take_down
cat > "$DIR/bad.conf" <<EOF
switch attach dev $P0
# the next line is wrong
job add id 3 ps 10.6.0.1:47000 worker 10.6.0.9:0
job add id 5 ps 10.6.0.1:47000 worker 10.6.0.5:5000
EOF
expect "-batch stops at the first error, naming file and line" 2 \
	"bad.conf:3: command failed \\(exit 2\\); stopping \\(-force goes on\\)" \
	$A -batch "$DIR/bad.conf"
expect "the lines after the failing one did not run" 1 'no such job' $A job show id 5
expect "-force runs every line, exits with the failure's status" 2 \
	"bad.conf:3: command failed \\(exit 2\\)$" $A -force -batch "$DIR/bad.conf"
expect "-force ran the line after the failing one" 0 '^job 5 ' $A job show id 5
printf 'job show id "5\n' > "$DIR/quote.conf"
expect "an unterminated quote names the line" 2 'quote.conf:1: unterminated " quote' \
	$A -batch "$DIR/quote.conf"
printf -- '-j job show\n' > "$DIR/opt.conf"
expect "options inside a batch file are refused" 2 'opt.conf:1: "-j": options go before -batch' \
	$A -batch "$DIR/opt.conf"
expect "a missing batch file is named" 2 "\-batch $DIR/none.conf: No such file or directory" \
	$A -batch "$DIR/none.conf"
expect "-batch with a command too is refused" 2 'takes its commands from the file' \
	$A -batch "$DIR/bad.conf" job show
expect "-force alone is refused" 2 '\-force goes with -batch FILE' $A -force job show
tap_done
