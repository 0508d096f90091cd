#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-switch, what esa-switch.service runs (tools/service): start applies
# the configuration file and stop takes back what start added and nothing
# else (a port, a job and the data plane set up by hand stay); a file with
# a failing line leaves the switch as it was. Module-less on this host,
# with the module where it is loaded.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
need_root "esa-switch"
PIN=/sys/fs/bpf/esa-svc-$$
A="$AGGCTL -d $PIN"
P0=$(ifname p0)
P1=$(ifname p1)
DIR=$(mktemp -d)
export AGGCTL="$A" ESA_SWITCH_CONF=$DIR/switch.conf ESA_SWITCH_STATE=$DIR/run/switch.state
SVC=tools/service/esa-switch
cleanup() {
	$A job del id 4 > /dev/null 2>&1
	$A job del id 1 > /dev/null 2>&1
	$A switch detach dev $P0 > /dev/null 2>&1
	$A switch detach dev $P1 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	rm -rf "$PIN" "$DIR"
}
stub_ports_add p0 p1 || bail "switch ports"
cleanup_add cleanup
ports() { $A -j switch show | sed -n 's/.*"ports":\[\([^]]*\)\].*/\1/p'; }
ids() { $A job show | awk '$1 == "job" { print $2 }' | tr '\n' ' '; }

cat > "$ESA_SWITCH_CONF" <<EOT
switch attach dev $P1
job add id 4 ps 10.7.0.1:47000 worker 10.7.0.2:5000
EOT
expect "start without a configuration file is refused" 1 'no configuration file' \
	env ESA_SWITCH_CONF=$DIR/none $SVC start

# On a switch from nothing: start builds it, stop removes all of it.
expect "start" 0 '^$' $SVC start
same "start: the file's port and job" "$(ports) $(ids)" "\"$P1\" 4 "
expect "start twice is refused" 1 'already started' $SVC start
expect "stop" 0 '^$' $SVC stop
expect "stop: the data plane it loaded is gone" 0 '"dataplane":false' $A -j switch show

# Beside a port, a job and a data plane set up by hand: stop keeps them.
$A switch attach dev $P0 && $A job add id 1 ps 10.7.0.1:47000 worker 10.7.0.3:5000
expect "start beside a switch set up by hand" 0 '^$' $SVC start
same "start: both ports, both jobs" "$(ports) $(ids)" "\"$P0\",\"$P1\" 1 4 "
expect "stop" 0 '^$' $SVC stop
same "stop: the port and job set up by hand stay" "$(ports) $(ids)" "\"$P0\" 1 "

# A failing line: what start added is taken back, the rest stays.
echo "job add id 5 ps 10.7.0.1:47000 worker 10.7.0.9:0" >> "$ESA_SWITCH_CONF"
expect "start with a failing line fails, naming it" 2 'switch.conf:3: command failed' $SVC start
same "the switch is as it was" "$(ports) $(ids)" "\"$P0\" 1 "
expect "nothing is left to stop" 0 '^$' $SVC stop
tap_done
