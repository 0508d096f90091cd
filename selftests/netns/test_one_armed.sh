#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One-armed mode on real veth (Documentation/dataplane.rst, "One-armed
# ports"): the switch is a namespace with one port, eth0 at its own
# address, cabled to a Linux bridge (the top-of-rack switch) with a PS and
# eight workers behind it; aggctl attaches it "role one-armed" (module-less
# flavour here, the module's in the VM). The workers (veth_peer.py, raw
# aggregation packets) address the switch; its sums leave by the same port:
# COMPLETE to the PS, one RESULT per worker. Checks, for a 3- and an
# 8-worker job under esa and the 8-worker job under atp (the PS's RESULT
# fanned out): every sum exact at the PS and at every worker, each worker
# takes exactly one datagram per sum, the counters agree. Mixed switch:
# per-host ports of the same data plane carry a per-host job and pings
# as before, none of their floods leaves by the one-armed port, and
# aggregation traffic for the other mode is a counted drop (drop_mode)
# on either kind of port. The server stays a host: ping to its address.
# usage: test_one_armed.sh   (root; prints TAP)
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo_bridge.sh"

AGGCTL=$ROOT/build/tools/aggctl
PEER=$ROOT/selftests/bpf/veth_peer.py
NSEQ=${NSEQ:-20}
NVAL=${NVAL:-361}		# a job with a token: at most 361 values
[ "$(id -u)" = 0 ] || { skip "one-armed mode" "needs root"; tap_done; }
[ -x "$AGGCTL" ] || bail "missing $AGGCTL (run make)"
PIN=$(pin_path oa)
NET=198.18.$(($$ % 100 + 20))		# behind the ToR
PNET=198.18.$(($$ % 100 + 130))		# the per-host ports' hosts
SWADDR=$NET.2
TMP=$(mktemp -d)
cleanup_add rm -rf "$TMP"

# bridge_host NAME ADDR: namespace NAME with eth0 at ADDR/24 on the ToR.
bridge_host() {
	bridge_host_add "$1" "$2/24" || return 1
	in_ns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
}

bridge_add || bail "create the ToR"
switch_add sw || bail "create the switch namespace"
in_ns sw sysctl -qw net.ipv6.conf.all.disable_ipv6=1
# Not bridge_switch_add: IPv4 forwarding stays off, for aggctl to refuse.
bridge_cable sw eth0 sw && in_ns sw ip addr add "$SWADDR/24" dev eth0 ||
	bail "cable the switch to the ToR"
bridge_host ps "$NET.1" || bail "create the PS"
for w in 0 1 2 3 4 5 6 7; do
	bridge_host "w$w" "$NET.$((10 + w))" || bail "create worker $w"
done
for h in px0 px1 px2; do
	case $h in px0) a=$PNET.1 ;; *) a=$PNET.1${h#px} ;; esac
	host_add "$h" "$a/24" || bail "create per-host host $h"
	in_ns "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done

ag() { in_ns sw "$AGGCTL" -d "$PIN" "$@"; }
cleanup_add "$AGGCTL" -d "$PIN" switch unload
cleanup_add in_ns sw "$AGGCTL" -d "$PIN" switch detach dev eth0 dev p-px0 dev p-px1 dev p-px2

# Bad inputs, each a clear error and nothing attached.
out=$(ag switch attach dev eth0 role one-armed address "$NET.99" 2>&1)
check "an address that is not the port's is refused, naming it" \
	grep -q "address $NET.99 is not an address of eth0" <<< "$out"
out=$(ag switch attach dev eth0 role per-host address "$SWADDR" 2>&1)
check "address without role one-armed is refused" \
	grep -q "role one-armed" <<< "$out"
out=$(ag switch attach dev eth0 dev p-px0 role one-armed address "$SWADDR" 2>&1)
check "one address for two ports is refused" grep -q "give one dev with it" <<< "$out"
out=$(ag switch attach dev eth0 role sideways 2>&1)
check "an unknown role is refused, naming role" grep -q "role" <<< "$out"

out=$(ag switch attach dev eth0 role one-armed 2>&1)
check "a port without IPv4 forwarding is refused, saying how to turn it on" \
	grep -q "sysctl -w net.ipv4.conf.eth0.forwarding=1" <<< "$out"
in_ns sw sysctl -qw net.ipv4.conf.eth0.forwarding=1
check "aggctl switch attach dev eth0 role one-armed (its address by default)" \
	ag switch attach dev eth0 role one-armed
check "aggctl switch attach the per-host ports (default role)" \
	ag switch attach dev p-px0 dev p-px1 dev p-px2
ag -j switch show > "$TMP/show.json"
check "switch show -j: eth0 one-armed at $SWADDR, p-px1 per-host" python3 -c '
import json, sys
d = {p["port"]: p for p in json.load(open(sys.argv[1]))["port_state"]}
e, p = d["eth0"], d["p-px1"]
sys.exit(not (e["role"] == "one-armed" and e["address"] == sys.argv[2] and
              p["role"] == "per-host" and "address" not in p))' "$TMP/show.json" "$SWADDR"
ag switch show > "$TMP/show.txt"
check "switch show (text) says role one-armed and the address" \
	grep -q "port eth0 .*role one-armed address $SWADDR" "$TMP/show.txt"
check "switch show: the one-armed port is ready (its peer needs no GRO: it gets skbs)" \
	grep -q "port eth0 .* ready yes" "$TMP/show.txt"
ag config save > "$TMP/saved.conf"
check "config save writes the one-armed port with its role and address" \
	grep -qx "switch attach dev eth0 mode native role one-armed address $SWADDR" "$TMP/saved.conf"
check "the fan-out filter is on eth0's clsact ingress" \
	sh -c "nsenter --net=/run/netns/$(ns sw) tc filter show dev eth0 ingress | grep -q esa_fanout"
check "the server stays a host: ping its one-armed address" \
	in_ns w3 ping -c 2 -i 0.2 -W 2 -q "$SWADDR"
check "per-host hosts ping each other through the switch" \
	in_ns px1 ping -c 2 -i 0.2 -W 2 -q "$PNET.12"

# Neighbour entries (Documentation/deployment.rst): a job on a one-armed
# port gets a managed entry, marked the switch's, for each member the port
# reaches; one that was there already stays as it was, and job del
# removes only the switch's own. w7's is a static entry made beforehand;
# the rest of the cache is flushed, as if the switch had just started.
PROTO=$(sed -n 's/^#define ESA_NEIGH_PROTO[[:space:]]*\([0-9]*\).*/\1/p' "$ROOT/uapi/esa_switch.h")
mac() { in_ns "$1" ip link show dev eth0 | awk '$1 == "link/ether" { print $2 }'; }
# neigh_of ADDR: the switch's entry for ADDR on eth0, "STATE managed|- PROTO|-", or "none"
neigh_of() {
	in_ns sw ip -j neigh show dev eth0 to "$1" | python3 -c '
import json, sys
e = json.load(sys.stdin)
e = e[0] if e else None
print("none" if not e else " ".join((",".join(e.get("state", [])) or "-",
      "managed" if "managed" in e else "-", e.get("protocol", "-"))))'
}
# neigh_check WHAT WANT ADDR...: every ADDR's entry matches the regex WANT
neigh_check() {
	local what=$1 want=$2 a bad=
	shift 2
	for a in "$@"; do
		grep -qE "^($want)\$" <<< "$(neigh_of "$a")" || bad+=" $a: $(neigh_of "$a");"
	done
	check "$what${bad:+ (not:$bad)}" test -z "$bad"
}
OURS="[A-Z,]+ managed $PROTO"
W7_STATIC="PERMANENT - -"
in_ns sw ip neigh replace "$NET.17" dev eth0 lladdr "$(mac w7)" nud permanent
in_ns sw ip neigh flush dev eth0

# A one-armed port takes only jobs with a token (Documentation/security.rst).
declare -A TOKEN_OF=([3]=00000000000000a3 [8]=00000000000000a8)
jobspec() {	# jobspec ID FAN PORTBASE: aggctl job add arguments
	local a=(job add id "$1" ps "$NET.1:47000") w
	for ((w = 0; w < $2; w++)); do a+=(worker "$NET.$((10 + w)):$(($3 + w))"); done
	echo "${a[@]}" ${TOKEN_OF[$1]:+token ${TOKEN_OF[$1]}}
}
# shellcheck disable=SC2046
check "job 3 (3 workers) added" ag $(jobspec 3 3 41000)
# shellcheck disable=SC2046
check "job 8 (8 workers) added" ag $(jobspec 8 8 42000)
check "job 5 (per-host, 2 workers) added" ag job add id 5 ps "$PNET.1:47000" \
	worker "$PNET.11:43001" worker "$PNET.12:43002"
neigh_check "job add: a managed entry, proto $PROTO, for the PS and workers 0-6" "$OURS" \
	"$NET.1" "$NET.10" "$NET.11" "$NET.12" "$NET.13" "$NET.14" "$NET.15" "$NET.16"
neigh_check "job add: worker 7's static entry is left as it was" "$W7_STATIC" "$NET.17"

# Another data plane in the same namespace (another pin, its own port)
# marks its entries alike: its attach and detach must leave this one's
# entries alone (a switch that lost a worker's entry sends it no more
# copies: its job stalls). Module-less data planes only: the module is
# one data plane per kernel.
second_dataplane() {
	local pin2 all=("$NET.1" "$NET.10" "$NET.11" "$NET.12" "$NET.13" "$NET.14" "$NET.15" "$NET.16")

	pin2=$(pin_path oa2)
	cleanup_add "$AGGCTL" -d "$pin2" switch unload
	cleanup_add in_ns sw "$AGGCTL" -d "$pin2" switch detach dev o2a
	in_ns sw ip link add o2a type veth peer name o2b &&
		in_ns sw ip link set o2a up && in_ns sw ip link set o2b up ||
		bail "create the second data plane's port"
	check "a second data plane attached in the switch's namespace" \
		in_ns sw "$AGGCTL" -d "$pin2" switch attach dev o2a
	neigh_check "... leaves the first one's entries as they were" "$OURS" "${all[@]}"
	check "the second data plane detached" \
		in_ns sw "$AGGCTL" -d "$pin2" switch detach dev o2a
	neigh_check "... leaves the first one's entries as they were" "$OURS" "${all[@]}"
	"$AGGCTL" -d "$pin2" switch unload
	in_ns sw ip link del o2a
}
if [ -d /sys/module/esa ]; then
	skip "a second data plane leaves the first one's entries" "the esa module is one data plane per kernel"
else
	second_dataplane
fi
check "job add: no entry for the per-host job's members (not behind eth0)" \
	test -z "$(in_ns sw ip neigh show proto "$PROTO" | grep -F "$PNET.")"

cnt() {	# cnt JOB NAME: the data plane's counter NAME of JOB (0: totals)
	ag -j stats | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("job", "all") in (int(sys.argv[1]), "all" if sys.argv[1] == "0" else None):
        print(e["dataplane"][sys.argv[2]])' "$1" "$2"
}
udp_in() { in_ns "$1" nstat -az UdpInDatagrams | awk '/UdpInDatagrams/ { print $2 }'; }

# run JOB FAN PORTBASE POLICY PSNS PSADDR DST WORKER_NS_PREFIX ADDR_FN
# One job through the switch: PS and workers of veth_peer.py, the workers
# sending to DST (the switch's address one-armed, the PS's per-host).
run() {
	local job=$1 fan=$2 base=$3 pol=$4 psns=$5 psaddr=$6 dst=$7 what=$8
	local answer=() pids=() w wns waddr before=() pspid fails=0 r0 tok=()
	[ "$pol" = atp ] && answer=(answer "$dst")
	[ -n "${TOKEN_OF[$job]:-}" ] && tok=(--token "${TOKEN_OF[$job]}")
	ag policy set "$pol" || { not_ok "$what: policy $pol"; return; }
	r0=$(cnt "$job" results)
	in_ns "$psns" python3 "$PEER" "${tok[@]}" ps "$psaddr" "$NSEQ" "$NVAL" "$fan" "$job" \
		"${answer[@]}" > "$TMP/ps.out" 2>&1 &
	pspid=$!
	udp_bound_wait "$psns" 47000
	for ((w = 0; w < fan; w++)); do
		wns=$(wns_of "$what" "$w")
		before[w]=$(udp_in "$wns")
	done
	for ((w = 0; w < fan; w++)); do
		wns=$(wns_of "$what" "$w")
		waddr=$(waddr_of "$what" "$w")
		in_ns "$wns" python3 "$PEER" "${tok[@]}" worker "$w" "$waddr" $((base + w)) \
			"$dst" "$NSEQ" "$NVAL" "$fan" "$job" > "$TMP/w$w.out" 2>&1 &
		pids[w]=$!
	done
	for ((w = 0; w < fan; w++)); do
		wait "${pids[w]}" || { fails=$((fails + 1)); diag < "$TMP/w$w.out"; }
	done
	if [ "$fails" = 0 ]; then
		ok "$what $pol: all $fan workers: $NSEQ RESULT sums exact"
	else
		not_ok "$what $pol: $fails of $fan workers failed"
	fi
	if wait "$pspid"; then
		ok "$what $pol: $(tail -1 "$TMP/ps.out")"
	else
		not_ok "$what $pol: $(tr '\n' ' ' < "$TMP/ps.out")"
	fi
	fails=0
	for ((w = 0; w < fan; w++)); do
		wns=$(wns_of "$what" "$w")
		[ $(($(udp_in "$wns") - before[w])) = "$NSEQ" ] || fails=$((fails + 1))
	done
	check "$what $pol: each worker took exactly $NSEQ datagrams ($fails did not)" \
		test "$fails" = 0
	check "$what $pol: switch counted $NSEQ results" \
		test $(($(cnt "$job" results) - r0)) = "$NSEQ"
}
wns_of() { case $1 in per-host*) echo "px$(($2 + 1))" ;; *) echo "w$2" ;; esac; }
waddr_of() { case $1 in per-host*) echo "$PNET.1$(($2 + 1))" ;; *) echo "$NET.$((10 + $2))" ;; esac; }

run 3 3 41000 esa ps "$NET.1" "$SWADDR" "one-armed job 3"
run 8 8 42000 esa ps "$NET.1" "$SWADDR" "one-armed job 8"
run 8 8 42000 atp ps "$NET.1" "$SWADDR" "one-armed job 8"
run 5 2 43001 esa px0 "$PNET.1" "$PNET.1" "per-host job 5"

# job del 8: the entries of its own members go, those job 3 shares stay.
check "job 8 deleted" ag job del id 8
neigh_check "job del 8: workers 3-6's entries are gone" "none" \
	"$NET.13" "$NET.14" "$NET.15" "$NET.16"
neigh_check "job del 8: the PS's and workers 0-2's stay for job 3" "$OURS" \
	"$NET.1" "$NET.10" "$NET.11" "$NET.12"
neigh_check "job del 8: worker 7's static entry is still there" "$W7_STATIC" "$NET.17"
# A job whose first frames come after the cache was flushed: the workers
# still know the switch's MAC and send without asking, so only the
# entries job add makes let the switch address their copies.
in_ns sw ip neigh flush dev eth0
# shellcheck disable=SC2046
check "job 8 added again, after ip neigh flush on the switch" ag $(jobspec 8 8 42000)
run 8 8 42000 esa ps "$NET.1" "$SWADDR" "one-armed job 8 after a flush"
check "no one-armed frame was dropped for want of a next hop" \
	test "$(cnt 0 drop_nexthop)" = 0

# A copy to a member that never answers ARP (job 7's worker 1) has no
# next hop: a counted drop_nexthop. The PS's RESULT under atp is fanned
# out to both workers. (The module's statistics of it: e2e_one_armed.sh,
# whose aggctl runs where the module's family answers.)
check "job 7 (worker 0 and a worker nobody answers for) added" ag job add id 7 \
	ps "$NET.1:47000" worker "$NET.10:44100" worker "$NET.98:44101" token 00000000000000a7
ag policy set atp
n0=$(cnt 7 drop_nexthop)
in_ns ps python3 -c '
import socket, sys
sys.path.insert(0, sys.argv[1])
import esa_wire as wire
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 47000))
s.sendto(wire.pack([1] * 8, token=0xa7, flags=wire.FLAGS["F_RESULT"], fan_in=2,
                   job_id=7, seq=0, worker_bitmap=3), (sys.argv[3], wire.UDP_PORT))' \
	"$ROOT/selftests/lib" "$NET.1" "$SWADDR"
for _ in $(seq 100); do
	[ "$(cnt 7 drop_nexthop)" != "$n0" ] && break
	sleep 0.1
done
check "a copy to a member without a neighbour is drop_nexthop (data plane)" \
	test $(($(cnt 7 drop_nexthop) - n0)) = 1

# A job without a token cannot use the one-armed port: its frames are
# drop_token there, though they come from a member.
check "job 9 (1 worker, no token) added" ag job add id 9 ps "$NET.1:47000" \
	worker "$NET.10:44000"
t0=$(cnt 0 drop_token)
in_ns w0 python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 44000))
# version 1, fan_in 1, job 9, 1 value, seq 0, index 0, worker 0
s.sendto(struct.pack("!BBBBHHIIIi", 1, 0, 1, 0, 9, 1, 0, 0, 1, 7), (sys.argv[2], 47000))' \
	"$NET.10" "$SWADDR"
check "one-armed port: a frame of a job without a token is drop_token" \
	test $(($(cnt 0 drop_token) - t0)) = 1

# Frames for the other mode: counted drops, on either kind of port.
m0=$(cnt 0 drop_mode)
in_ns w1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.sendto(b"x" * 64, (sys.argv[1], 47000))' "$NET.255"
check "one-armed port: UDP to 47000 not at its address is drop_mode" \
	test $(($(cnt 0 drop_mode) - m0)) = 1
in_ns px1 ip route add "$NET.0/24" dev eth0
in_ns px1 ip neigh add "$SWADDR" lladdr 02:00:00:00:00:01 dev eth0
in_ns px1 python3 -c '
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x" * 64, (sys.argv[1], 47000))' "$SWADDR"
check "per-host port: UDP to the one-armed address is drop_mode" \
	test $(($(cnt 0 drop_mode) - m0)) = 2

# Nothing of the per-host ports leaves by the one-armed port: a sniffer
# on its cable (the ToR's side) sees no frame from px1 or px2 while they
# broadcast (ping -b, ARP for an address nobody has), and sees the
# switch's own answers to w3's pings (the sniffer sees what passes).
in_ns tor env SNIFF_DEV="$(bridge_port sw)" python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((os.environ["SNIFF_DEV"], 3))
s.settimeout(0.2)
sw = bytes.fromhex(sys.argv[1].replace(":", ""))
px = {bytes.fromhex(m.replace(":", "")) for m in sys.argv[2:]}
print("ready", flush=True)
own = other = 0
end = time.time() + 3
while time.time() < end:
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    own += f[6:12] == sw
    other += f[6:12] in px
print(own, other)' "$(mac sw)" "$(mac px1)" "$(mac px2)" \
	> "$TMP/sniff.out" &
sniff=$!
for _ in $(seq 30); do grep -qs ready "$TMP/sniff.out" && break; sleep 0.1; done
in_ns w3 ping -c 3 -i 0.2 -W 1 -q "$SWADDR" > /dev/null 2>&1
in_ns px1 ping -b -c 3 -i 0.2 -W 1 -q "$PNET.255" > /dev/null 2>&1
in_ns px2 ping -c 2 -i 0.2 -W 1 -q "$PNET.77" > /dev/null 2>&1
wait "$sniff"
read -r own other < <(tail -1 "$TMP/sniff.out")
check "the sniffer on the one-armed port's cable sees the switch's own frames ($own)" \
	test "${own:-0}" -ge 3
check "no per-host frame left by the one-armed port ($other seen)" \
	test "${other:-1}" = 0

for j in 3 7 8 9; do ag job del id "$j" || not_ok "job del $j"; done
check "every job deleted: no entry of the switch's is left" \
	test -z "$(in_ns sw ip neigh show proto "$PROTO")"
neigh_check "... and worker 7's static entry is still there" "$W7_STATIC" "$NET.17"
check "aggctl switch detach dev eth0" ag switch detach dev eth0
check "the fan-out filter is gone with the port" \
	sh -c "! nsenter --net=/run/netns/$(ns sw) tc filter show dev eth0 ingress | grep -q esa_fanout"
run 5 2 43001 esa px0 "$PNET.1" "$PNET.1" "per-host job 5 (alone)"
tap_done
