#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Datapath benchmarks (not tests).  Usage: bench/run.sh [BUILD_DIR] [SECONDS]
#
# 1. Instructions per frame, counted by callgrind (repeatable on a noisy
#    machine): only the application-side functions of bench_datapath.c are
#    collected; the doorbell trap handler and the device thread (the
#    emulator's work) are not.
# 2. Frames per second with 1 and 4 queue pairs, as ratios to the manadv
#    datapath measured in the same run.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-2}
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

"$EMU" -- valgrind --tool=callgrind $VG_TRAP --collect-atstart=no $COLLECT \
	--callgrind-out-file="$OUT/cg.%p" "$BENCH" --callgrind >"$OUT/log" 2>&1 || {
	cat "$OUT/log" >&2
	exit 1
}
grep '^profile' "$OUT/log"

frames=$(( 2000 * 32 ))
declare -A ir
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
echo
echo "throughput (loopback, emulator included, ${SECS}s per cell)"
"$EMU" -- "$BENCH" --seconds "$SECS"

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
	# the device thread is the process's second thread
	ir=$(cat "$OUT"/dev.*-02 | sed -n 's/^summary: \([0-9]*\).*/\1/p' | \
		awk '{ s += $1 } END { print s }')
	calls=$(sed -n 's/.* \([0-9.]*\) device syscalls\/frame/\1/p' "$OUT/dev.log" | \
		awk '{ s += $1; n++ } END { printf "%.3f", n ? s / n : -1 }')
	awk -v ir="$ir" -v m=$((3 * (bursts + 4) * q * 32)) -v c="$calls" \
		'BEGIN { printf "%.1f %s\n", ir / m, c }'
}
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
