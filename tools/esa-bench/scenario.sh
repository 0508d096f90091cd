# SPDX-License-Identifier: GPL-2.0
# Scenario files of esa-bench: parsing and validation (sourced, bash).
#
# A scenario is one directive per line; '#' starts a comment:
#
#   switch slots=N [timeout_us=N] [loss=PCT] [interval_ms=N] [values=N]
#          [window=N] [policies=esa,atp,static]
#   job id=N workers=N size=BYTES[K|M] iterations=N [compute_ms=N]
#       [arrival_ms=N] [priority=N|auto]
#
# Exactly one `switch` line and 1..ESA_BENCH_MAX_JOBS `job` lines. Every
# error names the file, line and key. Documentation/esa-bench.rst has the
# meaning of each key.
#
# After scn_load FILE (returns non-zero and prints the reason on error):
#   SW_SLOTS SW_TIMEOUT_US SW_LOSS SW_INTERVAL_MS SW_VALUES SW_WINDOW
#   SW_POLICIES (array)   JOB_IDS (array, in file order)
#   JOB_WORKERS[id] JOB_SIZE[id] (bytes) JOB_ITERS[id] JOB_COMPUTE_MS[id]
#   JOB_ARRIVAL_MS[id] JOB_PRIO[id] ("auto" or 0..255)

ESA_BENCH_MAX_JOBS=8
ESA_BENCH_MAX_WORKERS=8		# one namespace each: bound the topology
# esa-bench attaches its switch with aggctl's default capacity
# (ESA_AGG_CAPACITY_DEFAULT in uapi/esa_switch.h), not the 1 << 20 maximum:
# a scenario's slots must fit that array.
ESA_BENCH_MAX_SLOTS=65536

scn_err() { echo "esa-bench: $SCN_FILE:$SCN_LINE: $*" >&2; return 1; }

# scn_uint KEY VALUE MIN MAX -> echo the number
scn_uint() {
	[[ "$2" =~ ^[0-9]+$ ]] || { scn_err "$1 must be a whole number, not '$2'"; return 1; }
	(( 10#$2 >= $3 && 10#$2 <= $4 )) ||
		{ scn_err "$1=$2 is out of range $3..$4"; return 1; }
	echo $((10#$2))
}

# scn_size KEY VALUE -> bytes; a multiple of 4 (int32 values), 4 B..1 GiB
scn_size() {
	local n mult=1
	[[ "$2" =~ ^([0-9]+)([KkMmGg]?)$ ]] ||
		{ scn_err "$1 must be bytes with an optional K/M/G suffix, not '$2'"; return 1; }
	case ${BASH_REMATCH[2]} in
	[Kk]) mult=1024 ;; [Mm]) mult=1048576 ;; [Gg]) mult=1073741824 ;;
	esac
	n=$((10#${BASH_REMATCH[1]} * mult))
	(( n >= 4 && n <= 1073741824 && n % 4 == 0 )) ||
		{ scn_err "$1=$2 must be 4 B..1 GiB and a multiple of 4"; return 1; }
	echo $n
}

scn_reset() {
	SW_SLOTS= SW_TIMEOUT_US=2000 SW_LOSS=0 SW_INTERVAL_MS=100 SW_VALUES=363
	SW_WINDOW=32 SW_POLICIES=(esa atp static)
	JOB_IDS=()
	declare -gA JOB_WORKERS=() JOB_SIZE=() JOB_ITERS=() JOB_COMPUTE_MS=() \
		JOB_ARRIVAL_MS=() JOB_PRIO=()
}

# scn_policies LIST: "esa,atp" -> SW_POLICIES
scn_policies() {
	local p
	IFS=, read -ra SW_POLICIES <<< "$1"
	[ ${#SW_POLICIES[@]} -gt 0 ] || { scn_err "policies is empty"; return 1; }
	for p in "${SW_POLICIES[@]}"; do
		case $p in esa|atp|static) ;;
		*) scn_err "unknown policy '$p' (esa, atp, static)"; return 1 ;;
		esac
	done
}

scn_switch_line() {
	local kv k v seen_switch=${SCN_SEEN_SWITCH:-0}
	(( seen_switch )) && { scn_err "a second 'switch' line"; return 1; }
	SCN_SEEN_SWITCH=1
	for kv in "$@"; do
		[[ "$kv" == *=* ]] || { scn_err "expected KEY=VALUE, not '$kv'"; return 1; }
		k=${kv%%=*} v=${kv#*=}
		case $k in
		slots) SW_SLOTS=$(scn_uint slots "$v" 1 $ESA_BENCH_MAX_SLOTS) || return 1 ;;
		timeout_us) SW_TIMEOUT_US=$(scn_uint timeout_us "$v" 100 10000000) || return 1 ;;
		loss) SW_LOSS=$(scn_uint loss "$v" 0 50) || return 1 ;;
		interval_ms) SW_INTERVAL_MS=$(scn_uint interval_ms "$v" 10 10000) || return 1 ;;
		values) SW_VALUES=$(scn_uint values "$v" 64 363) || return 1 ;;
		window) SW_WINDOW=$(scn_uint window "$v" 1 4096) || return 1 ;;
		policies) scn_policies "$v" || return 1 ;;
		*) scn_err "unknown switch key '$k'"; return 1 ;;
		esac
	done
	[ -n "$SW_SLOTS" ] || { scn_err "switch needs slots=N"; return 1; }
}

scn_job_line() {
	local kv k v id= workers= size= iters= compute=0 arrival=0 prio=auto
	for kv in "$@"; do
		[[ "$kv" == *=* ]] || { scn_err "expected KEY=VALUE, not '$kv'"; return 1; }
		k=${kv%%=*} v=${kv#*=}
		case $k in
		id) id=$(scn_uint id "$v" 1 1023) || return 1 ;;
		workers) workers=$(scn_uint workers "$v" 1 $ESA_BENCH_MAX_WORKERS) || return 1 ;;
		size) size=$(scn_size size "$v") || return 1 ;;
		iterations) iters=$(scn_uint iterations "$v" 1 100000) || return 1 ;;
		compute_ms) compute=$(scn_uint compute_ms "$v" 0 600000) || return 1 ;;
		arrival_ms) arrival=$(scn_uint arrival_ms "$v" 0 3600000) || return 1 ;;
		priority)
			if [ "$v" != auto ]; then
				prio=$(scn_uint priority "$v" 0 255) || return 1
			fi ;;
		*) scn_err "unknown job key '$k'"; return 1 ;;
		esac
	done
	for k in id workers size iterations; do
		case $k in
		id) v=$id ;; workers) v=$workers ;; size) v=$size ;; iterations) v=$iters ;;
		esac
		[ -n "$v" ] || { scn_err "job needs $k=..."; return 1; }
	done
	[ -z "${JOB_WORKERS[$id]:-}" ] || { scn_err "job id=$id is defined twice"; return 1; }
	(( ${#JOB_IDS[@]} < ESA_BENCH_MAX_JOBS )) ||
		{ scn_err "more than $ESA_BENCH_MAX_JOBS jobs"; return 1; }
	JOB_IDS+=("$id")
	JOB_WORKERS[$id]=$workers JOB_SIZE[$id]=$size JOB_ITERS[$id]=$iters
	JOB_COMPUTE_MS[$id]=$compute JOB_ARRIVAL_MS[$id]=$arrival JOB_PRIO[$id]=$prio
}

scn_load() {
	local line words
	SCN_FILE=$1 SCN_LINE=0 SCN_SEEN_SWITCH=0
	scn_reset
	[ -r "$SCN_FILE" ] || { echo "esa-bench: cannot read scenario '$SCN_FILE'" >&2; return 1; }
	while IFS= read -r line || [ -n "$line" ]; do
		SCN_LINE=$((SCN_LINE + 1))
		line=${line%%#*}
		read -ra words <<< "$line"
		[ ${#words[@]} -eq 0 ] && continue
		case ${words[0]} in
		switch) scn_switch_line "${words[@]:1}" || return 1 ;;
		job) scn_job_line "${words[@]:1}" || return 1 ;;
		*) scn_err "unknown directive '${words[0]}' (switch, job)"; return 1 ;;
		esac
	done < "$SCN_FILE"
	SCN_LINE=end
	(( SCN_SEEN_SWITCH )) || { scn_err "no 'switch' line"; return 1; }
	(( ${#JOB_IDS[@]} > 0 )) || { scn_err "no 'job' line"; return 1; }
}
