#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Frames/s of the emulated device, a reference commit against this tree
# (a benchmark, not a test: nothing here asserts a time).
#
#   bench/compare.sh [--ref=COMMIT] [--rounds=N] [--frames=N] [--size=B]
#                    [--queues=N] [--build=DIR]
#
# The reference (default 570cb4e, main when issue 11 was filed) is checked
# out as a detached git worktree under build-ref/ (gitignored) and built
# there; this tree is built into --build (default build/).  Each round runs
# `mana-emu -- mana-pktgen` loopback of each build in turn (alternating, so
# a change of machine load hits both alike), each build with its own
# emulator and provider.  A run of --frames frames minus a run of 1000
# frames (setup and teardown) gives the frames/s of a round; the medians
# and their ratio are printed, with the device's doorbells per frame (from
# its --stats file) and the load average.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
REF=570cb4e
ROUNDS=5
FRAMES=200000
SIZE=64
QUEUES=1
BUILD=build
for arg in "$@"; do
	case "$arg" in
	--ref=*) REF=${arg#*=} ;;
	--rounds=*) ROUNDS=${arg#*=} ;;
	--frames=*) FRAMES=${arg#*=} ;;
	--size=*) SIZE=${arg#*=} ;;
	--queues=*) QUEUES=${arg#*=} ;;
	--build=*) BUILD=${arg#*=} ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "compare.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
	esac
done
for n in "$ROUNDS" "$FRAMES" "$SIZE" "$QUEUES"; do
	case "$n" in
	''|*[!0-9]*|0) echo "compare.sh: '$n' is not a positive number" >&2; exit 2 ;;
	esac
done
[ "$FRAMES" -gt 1000 ] || { echo "compare.sh: --frames must exceed 1000" >&2; exit 2; }

SHA=$(git -C "$TOP" rev-parse --verify "$REF^{commit}")
REF_SRC=$TOP/build-ref/src-${SHA:0:12}
REF_BUILD=$TOP/build-ref/build-${SHA:0:12}
case "$BUILD" in /*) CUR_BUILD=$BUILD ;; *) CUR_BUILD=$TOP/$BUILD ;; esac
TARGETS=(--target mana-emu mana mana-pktgen)

build_tree() { # build_tree SRC DIR
	cmake -S "$1" -B "$2" >/dev/null
	cmake --build "$2" -j "$(nproc)" "${TARGETS[@]}" >/dev/null
}

if [ ! -d "$REF_SRC" ]; then
	# -f: a worktree once registered there and since deleted is fine
	git -C "$TOP" worktree add -f --detach "$REF_SRC" "$SHA" >/dev/null
fi
echo "building reference ${SHA:0:12} in ${REF_BUILD#$TOP/}"
build_tree "$REF_SRC" "$REF_BUILD"
echo "building this tree ($(git -C "$TOP" describe --always --dirty)) in ${CUR_BUILD#$TOP/}"
build_tree "$TOP" "$CUR_BUILD"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# run BUILD_DIR FRAMES: seconds of one loopback run; the device's
# doorbells and frames go to $OUT/last.stats
run() {
	local t0 t1
	t0=$(date +%s.%N)
	"$1/bin/mana-emu" --stats="$OUT/last.stats" -- "$1/bin/mana-pktgen" \
		--frames="$2" --size="$SIZE" --queues="$QUEUES" --flows="$QUEUES" \
		--quiet >"$OUT/last.out" 2>&1 || {
		echo "compare.sh: run of $1 failed:" >&2
		cat "$OUT/last.out" >&2
		exit 1
	}
	t1=$(date +%s.%N)
	grep -q "^sent $2 received $2 bad 0 errors 0" "$OUT/last.out" || {
		echo "compare.sh: run of $1 lost frames:" >&2
		cat "$OUT/last.out" >&2
		exit 1
	}
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}

doorbells_per_frame() {
	awk '$1 == "device" { printf "%.4f\n", $2 / ($5 ? $5 : 1) }' "$OUT/last.stats"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "mana-pktgen loopback, $FRAMES frames of $SIZE B, $QUEUES queue(s), $ROUNDS rounds;" \
	"load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %14s %14s %10s %10s\n" round ref-frames/s cur-frames/s ref-db/fr cur-db/fr
for r in $(seq "$ROUNDS"); do
	for which in ref cur; do
		dir=$REF_BUILD
		[ "$which" = cur ] && dir=$CUR_BUILD
		small=$(run "$dir" 1000)
		big=$(run "$dir" "$FRAMES")
		db=$(doorbells_per_frame)
		rate=$(awk -v n="$FRAMES" -v b="$big" -v s="$small" \
			'BEGIN { d = b - s; printf "%.0f\n", (d > 0 ? (n - 1000) / d : n / b) }')
		echo "$rate" >>"$OUT/$which.rate"
		echo "$db" >>"$OUT/$which.db"
		eval "${which}_rate=\$rate ${which}_db=\$db"
	done
	printf "%-6s %14s %14s %10s %10s\n" "$r" "$ref_rate" "$cur_rate" "$ref_db" "$cur_db"
done
ref_med=$(median <"$OUT/ref.rate")
cur_med=$(median <"$OUT/cur.rate")
printf "%-6s %14.0f %14.0f %10s %10s\n" median "$ref_med" "$cur_med" \
	"$(median <"$OUT/ref.db")" "$(median <"$OUT/cur.db")"
awk -v a="$ref_med" -v b="$cur_med" 'BEGIN { printf "ratio (this tree / reference): %.2f\n", b / a }'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
