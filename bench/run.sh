#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Datapath benchmarks (not tests).
# Usage: bench/run.sh [--sections=1,2,3,4,5] [--other=DIR] [BUILD_DIR] [SECONDS]
#
# --sections: run only these sections (default all).
# --other=DIR: section 4 also runs the same bench_rc (classic verbs modes)
#   on another libibverbs + libmana, e.g. rdma-core built in place
#   (DIR/lib holds its libibverbs.so.1 and libmana.so.1, and its
#   libibverbs finds its provider by its own configuration), under the same
#   emulator with --provider=system, and prints both and the ratio.
#
# 1. Instructions per frame, counted by callgrind (repeatable on a noisy
#    machine): only the application-side functions of bench_datapath.c are
#    collected; the doorbell trap handler and the device thread (the
#    emulator's work) are not.
# 2. Frames per second with 1 and 4 queue pairs, as ratios to the manadv
#    datapath measured in the same run.
set -euo pipefail
SECTIONS=1,2,3,4,5
OTHER=
while [ $# -gt 0 ]; do
	case $1 in
	--sections=*) SECTIONS=${1#--sections=} ;;
	--other=*) OTHER=${1#--other=} ;;
	--*) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
BUILD=${1:-build}
SECS=${2:-2}
section() { [[ ",$SECTIONS," == *",$1,"* ]]; }
if [ -n "$OTHER" ] && [ ! -e "$OTHER/lib/libibverbs.so.1" ]; then
	echo "bench/run.sh: --other=$OTHER has no lib/libibverbs.so.1" >&2
	exit 2
fi
EMU="$BUILD/bin/mana-emu"
BENCH="$BUILD/bin/bench_datapath"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# The trap needs exact registers at every store under valgrind.
VG_TRAP="--vex-guest-chase=no --px-default=allregs-at-mem-access --px-file-backed=allregs-at-mem-access"
COLLECT=""
for fn in a_post a_poll b_post b_poll c_post c_poll; do
	COLLECT="$COLLECT --toggle-collect=$fn"
done
# entering the trap's signal handler turns collection off until it returns
COLLECT="$COLLECT --toggle-collect=mana_trap_entry"

declare -A ir
frames=$(( 2000 * 32 ))
if section 1; then
	"$EMU" -- valgrind --tool=callgrind $VG_TRAP --collect-atstart=no $COLLECT \
		--callgrind-out-file="$OUT/cg.%p" "$BENCH" --callgrind >"$OUT/log" 2>&1 || {
		cat "$OUT/log" >&2
		exit 1
	}
	grep '^profile' "$OUT/log"

	for f in "$OUT"/cg.*; do
		mode=$(sed -n 's/^desc: Trigger: Client Request: mode-\(.\)$/\1/p' "$f")
		[ -n "$mode" ] || continue
		total=$(sed -n 's/^summary: \([0-9]*\).*/\1/p;s/^totals: \([0-9]*\).*/\1/p' "$f" | head -1)
		ir[$mode]=$total
	done
	for m in a b c; do
		[ -n "${ir[$m]:-}" ] || { echo "no profile for mode $m" >&2; exit 1; }
	done
	echo
	echo "instructions per frame (64 B, bursts of 32, callgrind, emulator excluded)"
	awk -v a="${ir[a]}" -v b="${ir[b]}" -v c="${ir[c]}" -v n="$frames" 'BEGIN {
		printf "  (a) post_send + post_wq_recv + poll_cq   %7.1f\n", a / n
		printf "  (b) ibv_wr_* + ibv_start_poll            %7.1f\n", b / n
		printf "  (c) manadv direct datapath               %7.1f\n", c / n
		printf "  (a)/(c) %.2f   (b)/(c) %.2f\n", a / c, b / c
	}'
fi
if section 2; then
	echo
	echo "throughput (loopback, emulator included, ${SECS}s per cell)"
	"$EMU" -- "$BENCH" --seconds "$SECS"
fi

# 3. The emulated device itself: loopback frames/s (mana-pktgen, native, 1
#    queue) and the device thread's instructions per frame (callgrind, every
#    mode of the profile above, 1 queue and 4 RSS queues) and system calls
#    per frame (the device's own count, mana_emu_device_syscalls()).
device_ir() {	# QUEUES SIZE -> "instr/frame syscalls/frame"
	local q=$1 size=$2 bursts=$((2000 / $1)) ir calls
	rm -f "$OUT"/dev.*
	"$EMU" -- valgrind --tool=callgrind $VG_TRAP --separate-threads=yes \
		--callgrind-out-file="$OUT/dev.%p" "$BENCH" --callgrind --size="$size" \
		--queues="$q" >"$OUT/dev.log" 2>&1 || { cat "$OUT/dev.log" >&2; exit 1; }
	# the device thread: the thread whose profile has device_main (which
	# number it has depends on which emulator threads started before it)
	ir=$(grep -l 'device_main' "$OUT"/dev.*-[0-9]* | xargs cat | \
		sed -n 's/^summary: \([0-9]*\).*/\1/p' | \
		awk '{ s += $1 } END { print s }')
	calls=$(sed -n 's/.* \([0-9.]*\) device syscalls\/frame/\1/p' "$OUT/dev.log" | \
		awk '{ s += $1; n++ } END { printf "%.3f", n ? s / n : -1 }')
	awk -v ir="$ir" -v m=$((3 * (bursts + 4) * q * 32)) -v c="$calls" \
		'BEGIN { printf "%.1f %s\n", ir / m, c }'
}
if section 3; then
	echo
	echo "emulated device, loopback (instr/frame: device thread, callgrind)"
	printf "  %-6s %-6s %12s %12s %16s\n" queues size frames/s instr/frame syscalls/frame
	for q in 1 4; do
		for size in 64 1500; do
			fps=-
			if [ "$q" = 1 ]; then
				n=200000
				t0=$(date +%s.%N)
				"$EMU" -- "$BUILD/bin/mana-pktgen" --frames=$n --size=$size \
					--queues=1 --flows=1 --quiet >/dev/null
				t1=$(date +%s.%N)
				fps=$(awk -v n=$n -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", n / (t1 - t0) }')
			fi
			read -r ipf spf < <(device_ir "$q" "$size")
			printf "  %-6s %-6s %12s %12s %16s\n" "$q" "$size" "$fps" "$ipf" "$spf"
		done
	done
fi

# 4. RC queue pairs (issue 12): two RC QPs of one process connected over the
#    loopback wire (bench_rc.c), 64-byte RDMA WRITE and SEND+RECV in bursts
#    of 32, the last signaled.  Instructions per operation as in 1. (only
#    bench_rc's own post/poll functions, the trap's entry excluded): the
#    classic verbs, ibv_wr_* + ibv_start_poll, the floor (bench_rc.c's
#    minimal RC datapath behind the same wrappers) and, with --other, the
#    classic verbs on another libmana; then operations/s with the device
#    running freely.
RC_EMU=("$EMU" --netdev-up --ip=10.0.0.1/24)
RC_BURSTS=1000
RC_COLLECT=""
for fn in wv_post wv_poll sv_post sv_poll wx_post wx_poll sx_post sx_poll; do
	RC_COLLECT="$RC_COLLECT --toggle-collect=$fn"
done
RC_COLLECT="$RC_COLLECT --toggle-collect=mana_trap_entry"
declare -A rcir

# rc_profile TAG [ENV...] -- [MANA-EMU OPTION...] -- [BENCH OPTION...]:
# callgrind counts per mode into rcir[TAG-MODE]
rc_profile() {
	local tag=$1 envs=() emuopts=() f mode
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	while [ "$1" != -- ]; do emuopts+=("$1"); shift; done
	shift
	rm -f "$OUT"/rc.*
	env "${envs[@]}" "${RC_EMU[@]}" "${emuopts[@]}" -- valgrind --tool=callgrind \
		$VG_TRAP --collect-atstart=no $RC_COLLECT --callgrind-out-file="$OUT/rc.%p" \
		"$BUILD/bin/bench_rc" --callgrind --bursts=$RC_BURSTS "$@" \
		>"$OUT/rc.log" 2>&1 || { cat "$OUT/rc.log" >&2; return 1; }
	grep '^profile' "$OUT/rc.log" | sed "s/^/  [$tag] /"
	for f in "$OUT"/rc.*; do
		mode=$(sed -n 's/^desc: Trigger: Client Request: rc-\(..\)$/\1/p' "$f")
		[ -n "$mode" ] || continue
		rcir[$tag-$mode]=$(sed -n 's/^summary: \([0-9]*\).*/\1/p;s/^totals: \([0-9]*\).*/\1/p' "$f" | head -1)
	done
}

# device_rc_ir MODE SIZE -> the device thread's instructions per operation
# of bench_rc's MODE (set-up and teardown included: under 1 % here)
device_rc_ir() {
	local ir
	rm -f "$OUT"/rcdev.*
	"${RC_EMU[@]}" -- valgrind --tool=callgrind $VG_TRAP --separate-threads=yes \
		--callgrind-out-file="$OUT/rcdev.%p" "$BUILD/bin/bench_rc" --callgrind \
		--bursts=$RC_BURSTS --modes="$1" --size="$2" >"$OUT/rcdev.log" 2>&1 ||
		{ cat "$OUT/rcdev.log" >&2; exit 1; }
	ir=$(grep -l 'device_main' "$OUT"/rcdev.*-[0-9]* | xargs cat | \
		sed -n 's/^summary: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }')
	awk -v ir="$ir" -v n=$((RC_BURSTS * 32)) 'BEGIN { printf "%.1f", ir / n }'
}

if section 4; then
	echo
	rc_profile ours -- -- || exit 1
	for m in wv sv wx sx wf sf; do
		[ -n "${rcir[ours-$m]:-}" ] || { echo "no profile for rc-$m" >&2; exit 1; }
	done
	if [ -n "$OTHER" ]; then
		# another libibverbs + provider: its lib/ first, our provider not preloaded
		rc_profile other LD_LIBRARY_PATH="$OTHER/lib" -- --provider=system -- \
			--modes=wv,sv ||
			echo "bench: bench_rc failed on $OTHER (above): no column for it" >&2
	fi
	echo
	echo "RC: instructions per operation (64 B, bursts of 32, signaled every 32, callgrind, emulator excluded)"
	awk -v n=$((RC_BURSTS * 32)) -v a="${ir[a]:-0}" -v fr="$frames" \
		-v wv="${rcir[ours-wv]}" -v sv="${rcir[ours-sv]}" \
		-v wx="${rcir[ours-wx]}" -v sx="${rcir[ours-sx]}" \
		-v wf="${rcir[ours-wf]}" -v sf="${rcir[ours-sf]}" \
		-v ow="${rcir[other-wv]:-0}" -v os="${rcir[other-sv]:-0}" -v other="$OTHER" 'BEGIN {
		wv /= n; sv /= n; wx /= n; sx /= n; wf /= n; sf /= n; ow /= n; os /= n
		printf "  %-48s %8s %8s %9s", "", "ours", "floor", "ours/flr"
		if (other != "")
			printf " %8s %9s", "other", "ours/oth"
		if (a)
			printf " %9s", "vs raw(a)"
		printf "\n"
		row("RDMA WRITE, ibv_post_send + ibv_poll_cq", wv, wf, ow)
		row("SEND+RECV, ibv_post_recv/send + ibv_poll_cq", sv, sf, os)
		row("RDMA WRITE, ibv_wr_* + ibv_start_poll", wx, 0, 0)
		row("SEND+RECV, ibv_post_recv + ibv_wr_* + start_poll", sx, 0, 0)
		printf "  ibv_wr_*/classic: WRITE %.3f, SEND+RECV %.3f\n", wx / wv, sx / sv
		if (other != "")
			printf "  other: %s\n", other
	}
	function row(name, v, f, o) {
		printf "  %-48s %8.1f", name, v
		if (f)
			printf " %8.1f %9.3f", f, v / f
		else
			printf " %8s %9s", "-", "-"
		if (other != "") {
			if (o)
				printf " %8.1f %9.3f", o, v / o
			else
				printf " %8s %9s", "-", "-"
		}
		if (a)
			printf " %9.2f", v / (a / fr)
		printf "\n"
	}'
	echo
	echo "RC: the emulated device's instructions per operation (device thread, callgrind; requester,"
	echo "    responder and ACK of both QPs, which share the one device; bursts of 32 as above)"
	printf "  %-6s %16s %16s\n" size "RDMA WRITE" "SEND+RECV"
	for size in 64 4096; do
		printf "  %-6s %16s %16s\n" "$size" "$(device_rc_ir wv "$size")" \
			"$(device_rc_ir sv "$size")"
	done
	echo
	echo "RC: operations/s in one process (loopback, emulator included, ${SECS}s per mode)"
	"${RC_EMU[@]}" -- "$BUILD/bin/bench_rc" --seconds="$SECS"
fi

# 5. perftest between two emulated VMs (two mana-emu processes joined by a
#    socket: wire, -x 1 = the IPv4 RoCE v2 GID) against the raw-packet path
#    over the same kind of wire in the same run: mana-pktgen --mode=send in
#    one process, --mode=recv in the other.  perftest reports its own rates
#    (setup excluded); the raw rate is (N - 1000) frames over the time of an
#    N-frame run minus a 1000-frame run, as bench/compare.sh does.
section 5 || exit 0
if ! command -v ib_write_bw >/dev/null || ! command -v ib_send_bw >/dev/null; then
	echo
	echo "perftest not installed (apt-get install perftest): section 5 skipped"
	exit 0
fi
PT_PORT=$((20000 + $$ % 20000))

# vm_pair NAME SERVER-CMD... -- CLIENT-CMD...: each under its own mana-emu
vm_pair() {
	local name=$1 wire="$OUT/$1.wire" srv=() cli=() spid i rc=0
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	rm -rf "$wire"
	"$EMU" --backend=socket:"$wire" --ip=10.0.0.1/24 --mac=00:0d:3a:00:00:01 \
		--netdev-up -- "${srv[@]}" >"$OUT/$name.srv" 2>&1 &
	spid=$!
	# Start the client once the server listens on its TCP port.  (Waiting
	# for the wire's socket instead cost a minute per pair: the emulator
	# opens the wire when the first QP is made, and perftest makes its QPs
	# only after the client has connected, so the socket came when the
	# wait gave up.  No side owns the wire: either may open it first.)
	for i in $(seq 1200); do
		{ ss -Hltn "sport = :$PT_PORT" | grep -q . ||
		  ! kill -0 "$spid" 2>/dev/null; } && break
		sleep 0.05
	done
	"$EMU" --backend=socket:"$wire" --ip=10.0.0.2/24 --mac=00:0d:3a:00:00:02 \
		--netdev-up -- "${cli[@]}" >"$OUT/$name.cli" 2>&1 || rc=1
	wait "$spid" || rc=1
	PT_PORT=$((PT_PORT + 1))
	if [ $rc != 0 ]; then
		echo "bench: $name failed:" >&2
		cat "$OUT/$name.srv" "$OUT/$name.cli" >&2
	fi
	return $rc
}

# perftest TOOL SIZE ITERS [OPTION...] -> "Mmsg/s MB/s" (perftest's MsgRate
# and BW average)
perftest() {
	local tool=$1 size=$2 iters=$3 name="pt_$1_$2_${4:-}"
	shift 3
	vm_pair "$name" "$tool" -d mana_0 -x 1 -s "$size" -n "$iters" -p "$PT_PORT" "$@" -- \
		"$tool" -d mana_0 -x 1 -s "$size" -n "$iters" -p "$PT_PORT" "$@" 127.0.0.1 || return 1
	awk -v s="$size" '$1 == s && NF == 5 { print $5, $4; found = 1 }
		END { exit !found }' "$OUT/$name.cli"
}

# raw_secs SIZE FRAMES -> "SECONDS RECEIVED": a mana-pktgen send -> recv run
# over socket:.  The raw path may drop frames (no receive buffer posted in
# time); the receiver then stops 1 s after its last frame, a second that is
# not counted.
raw_secs() {
	local size=$1 n=$2 t0 t1 got name="raw_$1_$2" spid i rc=0
	t0=$(date +%s.%N)
	rm -rf "$OUT/$name.wire"
	# the raw path needs the netdev down (the vport is the VF's otherwise)
	"$EMU" --backend=socket:"$OUT/$name.wire" --mac=00:0d:3a:00:00:01 -- \
		"$BUILD/bin/mana-pktgen" --mode=recv --frames="$n" --size="$size" \
		--queues=1 --flows=1 --timeout=1 --quiet >"$OUT/$name.srv" 2>&1 &
	spid=$!
	for i in $(seq 1200); do
		[ -e "$OUT/$name.wire" ] || ! kill -0 "$spid" 2>/dev/null && break
		sleep 0.05
	done
	"$EMU" --backend=socket:"$OUT/$name.wire" --mac=00:0d:3a:00:00:02 -- \
		"$BUILD/bin/mana-pktgen" --mode=send --frames="$n" --size="$size" \
		--queues=1 --flows=1 --quiet >"$OUT/$name.cli" 2>&1 || rc=1
	wait "$spid" || true
	t1=$(date +%s.%N)
	got=$(sed -n 's/^sent [0-9]* received \([0-9]*\) bad 0 errors 0.*/\1/p' "$OUT/$name.srv")
	if [ $rc != 0 ] || [ -z "$got" ] || [ "$got" = 0 ]; then
		echo "bench: mana-pktgen $size B x $n over socket: failed:" >&2
		cat "$OUT/$name.srv" "$OUT/$name.cli" >&2
		return 1
	fi
	awk -v a="$t0" -v b="$t1" -v got="$got" -v n="$n" 'BEGIN {
		printf "%.6f %d\n", b - a - (got < n ? 1 : 0), got }'
}

# raw SIZE FRAMES -> "Mframes/s MB/s delivered%" (frames received per second)
raw() {
	local small big
	small=$(raw_secs "$1" 1000) || return 1
	big=$(raw_secs "$1" "$2") || return 1
	echo "$small $big" | awk -v n="$2" -v size="$1" '{
		d = $3 - $1; r = d > 0 ? ($4 - $2) / d : $4 / $3
		printf "%.6f %.2f %.1f\n", r / 1e6, r * size / 1e6, 100 * $4 / n }'
}

echo
echo "perftest between two emulated VMs (socket: wire) vs the raw path (mana-pktgen send -> recv, same wire)"
printf "  %-22s %12s %10s %14s %10s\n" test Mmsg/s MB/s "vs raw msg/s" "vs raw BW"
raw64=$(raw 64 100000) || exit 1
raw1500=$(raw 1500 50000) || exit 1
printf "  %-22s %12s %10s   (%s%% of the frames delivered)\n" "raw 64 B frames" $raw64
printf "  %-22s %12s %10s   (%s%% of the frames delivered)\n" "raw 1500 B frames" $raw1500
for t in ib_write_bw ib_send_bw; do
	for size in 64 4096; do
		iters=5000
		[ "$size" = 64 ] || iters=2000
		res=$(perftest "$t" "$size" "$iters") || exit 1
		ref=$raw64
		[ "$size" = 64 ] || ref=$raw1500
		echo "$res $ref" | awk -v name="$t $size B" '{
			printf "  %-22s %12.6f %10.2f %14.3f %10.3f\n", name, $1, $2, $1 / $3, $2 / $4 }'
	done
done
# perftest rings a doorbell per WR by default (-l 1), the raw path once per
# burst of 32, and every doorbell is a trapped store in the emulator: the
# same 64 B runs with a post list of 32, as the raw path posts
for t in ib_write_bw ib_send_bw; do
	res=$(perftest "$t" 64 5120 -l 32) || exit 1
	echo "$res $raw64" | awk -v name="$t 64 B -l 32" '{
		printf "  %-22s %12.6f %10.2f %14.3f %10.3f\n", name, $1, $2, $1 / $3, $2 / $4 }'
done
# The raw rate is a steady one (N frames minus 1000); perftest's 5000
# iterations above include its start, where the threads of four processes
# are still being placed on the CPUs: the same 64 B tests measured over
# the middle second of three (-D 3 -f 1), for a like comparison
for t in ib_write_bw ib_send_bw; do
	res=$(perftest "$t" 64 5000 -D 3 -f 1) || exit 1
	echo "$res $raw64" | awk -v name="$t 64 B -D 3" '{
		printf "  %-22s %12.6f %10.2f %14.3f %10.3f\n", name, $1, $2, $1 / $3, $2 / $4 }'
done
echo "  (4096 B messages are compared with 1500 B raw frames: the largest the raw path carries;"
echo "   -l 32: perftest posts lists of 32 WRs, one doorbell per list, as the raw path does;"
echo "   -D 3: the middle second of a 3 s run, a steady rate as the raw path's is)"
