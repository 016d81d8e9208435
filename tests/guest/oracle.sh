#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The differential oracle (issue 23, M4): the same clients against two
# kernels, every difference printed.
#
#   oracle.sh collect OUTDIR [PART...]
#       Runs the clients (PARTs: probe, bad_inputs, devinfo, contract,
#       diag_up, diag_down; default all) here (under mana-emu, or in the
#       QEMU guest on the real mana_ib) and writes their answers to OUTDIR,
#       one file each:
#         probe.txt       tests/oracle_probe.c: device and port attributes,
#                         GID kinds, the RDMA device's control-path matrix
#         bad_inputs.txt  tests/test_bad_inputs.c's misuse matrix (errnos)
#         devinfo.txt     ibv_devinfo -v (Debian's ibverbs-utils)
#         contract.txt    tests/test_verbs_contract.c's cases caps, flags,
#                         busy, notify, shallow in report mode (errnos,
#                         caps and depths returned)
#         diag_up.txt     mana-diag --probe --oracle (verdicts, driver id,
#         diag_down.txt   port and netdev state, the probe's errno), keys
#                         diag.up.* and diag.down.*: the netdev's state
#       The binaries come from ORACLE_PROBE, ORACLE_BAD_INPUTS,
#       ORACLE_CONTRACT, ORACLE_DIAG (paths) and ibv_devinfo from PATH; a
#       missing one is written as "missing".  The RDMA parts and diag_up
#       want the netdev up with an IPv4 address (GIDs), the misuse matrix,
#       contract and diag_down want it down (a raw QP needs the vport):
#       collect them in two calls.  POSIX sh and awk only: the guest has
#       busybox.
#
#   oracle.sh diff A B [EXPLAINED]
#       Compares two collections key by key ("key = value" lines; devinfo
#       lines by their text; a part neither collected is skipped, one only
#       one side has differs) and prints each difference as
#         differs KEY: A-VALUE | B-VALUE
#       EXPLAINED holds "REGEX<TAB>reason" lines: a difference whose key
#       matches one is printed as "explained KEY: ... (reason)".  Exit 1 if
#       any difference is unexplained, else 0.
set -u

collect() {
	out=$1
	shift
	[ $# -gt 0 ] || set -- probe bad_inputs devinfo contract diag_up diag_down
	mkdir -p "$out" || exit 2
	for part; do
		case $part in
		probe) collect_probe "$out" ;;
		bad_inputs) collect_bad_inputs "$out" ;;
		devinfo) collect_devinfo "$out" ;;
		contract) collect_contract "$out" ;;
		diag_up) collect_diag "$out" up ;;
		diag_down) collect_diag "$out" down ;;
		*) echo "oracle.sh: unknown part $part" >&2; exit 2 ;;
		esac
	done
}

collect_probe() {
	out=$1
	if [ -n "${ORACLE_PROBE:-}" ] && [ -x "$ORACLE_PROBE" ]; then
		"$ORACLE_PROBE" >"$out/probe.txt" 2>"$out/probe.err"
		echo "exit = $?" >>"$out/probe.txt"
	else
		echo "missing" >"$out/probe.txt"
	fi
}

collect_bad_inputs() {
	out=$1
	if [ -n "${ORACLE_BAD_INPUTS:-}" ] && [ -x "$ORACLE_BAD_INPUTS" ]; then
		MANA_ORACLE=1 "$ORACLE_BAD_INPUTS" 2>"$out/bad_inputs.err" |
			grep '^bad_inputs\.' >"$out/bad_inputs.txt"
	else
		echo "missing" >"$out/bad_inputs.txt"
	fi
}

# the contract cases a real kernel can answer (overrun needs a device that
# reports a lapped CQ, which no mana_ib passes on); each case's exit status
# too, so a crash shows
collect_contract() {
	out=$1
	if [ -n "${ORACLE_CONTRACT:-}" ] && [ -x "$ORACLE_CONTRACT" ]; then
		: >"$out/contract.txt"
		: >"$out/contract.err"
		for c in caps flags busy notify shallow; do
			MANA_ORACLE=1 "$ORACLE_CONTRACT" $c >"$out/contract.$c" \
				2>>"$out/contract.err"
			echo "contract.$c.exit = $?" >>"$out/contract.$c"
			grep '^contract\.' "$out/contract.$c" >>"$out/contract.txt"
			rm -f "$out/contract.$c"
		done
	else
		echo "missing" >"$out/contract.txt"
	fi
}

# mana-diag's answers with the netdev in state $2 (up, down)
collect_diag() {
	out=$1 st=$2
	if [ -n "${ORACLE_DIAG:-}" ] && [ -x "$ORACLE_DIAG" ]; then
		"$ORACLE_DIAG" --probe --oracle >"$out/diag_$st.raw" 2>"$out/diag_$st.err"
		# whether it ran (2: it could not): its 0 or 1 also counts the
		# checks left out (hugepages, libibverbs), which are the machine's
		rc=$?
		[ $rc -le 1 ] && rc=ran
		echo "diag.exit = $rc" >>"$out/diag_$st.raw"
		sed "s/^diag\./diag.$st./" "$out/diag_$st.raw" >"$out/diag_$st.txt"
		rm -f "$out/diag_$st.raw"
	else
		echo "missing" >"$out/diag_$st.txt"
	fi
}

collect_devinfo() {
	out=$1
	if command -v ibv_devinfo >/dev/null 2>&1; then
		# keys: "device.field" from ibv_devinfo's indented "field: value"
		ibv_devinfo -v 2>&1 | awk '
			/^hca_id:/ { dev = $2; port = ""; print "devinfo." dev " = present"; next }
			/^[ \t]+port:/ { port = "port" $2; next }
			/^[ \t]+[A-Za-z_ ]+:/ {
				line = $0
				sub(/^[ \t]+/, "", line)
				k = line; sub(/:.*/, "", k); gsub(/ /, "_", k)
				v = line; sub(/^[^:]*:[ \t]*/, "", v)
				# values of this device only, not of its kernel
				if (k ~ /^(node_guid|sys_image_guid|fw_ver|GID)$/)
					next
				print "devinfo." dev "." (port ? port "." : "") k " = " v
			}' >"$out/devinfo.txt"
	else
		echo "missing" >"$out/devinfo.txt"
	fi
}

compare() {
	a=$1 b=$2 explained=${3:-/dev/null}
	rc=0
	for f in probe.txt bad_inputs.txt devinfo.txt contract.txt diag_up.txt diag_down.txt; do
		# a part neither side collected is not compared
		[ -f "$a/$f" ] || [ -f "$b/$f" ] || continue
		[ -f "$a/$f" ] && [ -f "$b/$f" ] || {
			echo "differs $f: missing in $a or $b"
			rc=1
			continue
		}
		awk -F '\t' -v A="$a/$f" -v B="$b/$f" -v file="$f" '
			FILENAME == ARGV[1] { if ($0 !~ /^#/ && NF >= 2) { re[++n] = $1; why[n] = $2 } next }
			function key(l) { sub(/ = .*/, "", l); return l }
			function val(l) { if (l !~ / = /) return l; sub(/^[^=]* = /, "", l); return l }
			FILENAME == A { k = key($0); if (!(k in va)) order[++m] = k; va[k] = val($0); next }
			FILENAME == B { k = key($0); if (!(k in va) && !(k in vb)) order[++m] = k; vb[k] = val($0); next }
			END {
				bad = 0
				for (i = 1; i <= m; i++) {
					k = order[i]
					x = (k in va) ? va[k] : "(absent)"
					y = (k in vb) ? vb[k] : "(absent)"
					if (x == y)
						continue
					for (j = 1; j <= n; j++)
						if (k ~ re[j])
							break
					if (j <= n)
						printf "explained %s: %s | %s (%s)\n", k, x, y, why[j]
					else {
						printf "differs %s: %s | %s\n", k, x, y
						bad = 1
					}
				}
				exit bad
			}' "$explained" "$a/$f" "$b/$f" || rc=1
	done
	return $rc
}

case ${1:-} in
collect) [ $# -ge 2 ] || exit 2; shift; collect "$@" ;;
diff) [ $# -ge 3 ] || exit 2; compare "$2" "$3" "${4:-/dev/null}" ;;
*) echo "usage: oracle.sh collect OUTDIR [PART...] | diff A B [EXPLAINED]" >&2; exit 2 ;;
esac
