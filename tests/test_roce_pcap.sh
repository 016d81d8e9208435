#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tshark must read our RoCEv2 packets (RC and UC) as InfiniBand over UDP
# 4791 (opcode, PSN, destination QP), and the ICRC it shows must be the CRC-32 that an
# independent computation (Python's zlib) gives over the masked packet.
set -euo pipefail
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$prog" "$dir/roce.pcap" >/dev/null
command -v tshark >/dev/null || { echo "tshark missing (build.sh PACKAGES)"; exit 1; }
tshark -r "$dir/roce.pcap" -T fields -e infiniband.bth.opcode \
	-e infiniband.bth.psn -e infiniband.bth.destqp \
	-e infiniband.invariant.crc >"$dir/fields" 2>"$dir/err" || {
	cat "$dir/err"; exit 1; }
cat "$dir/fields"
expect='4 1193046 0x000203
17 1193046 0x000104
11 16 0x000303
37 16 0x000203
38 16777214 0x000104
0 16777214 0x000203
1 16777215 0x000203
3 0 0x000203'
got=$(awk '{print $1, $2, $3}' "$dir/fields")
if [ "$got" != "$expect" ]; then
	echo "tshark fields differ; want:"; echo "$expect"; exit 1
fi
/usr/bin/python3 - "$dir/roce.pcap" "$dir/fields" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
shown = [l.rstrip('\n').split('\t')[3] for l in open(sys.argv[2])]
checked = 0
off, i = 24, 0
while off < len(data):
    _, _, incl, _ = struct.unpack_from('<IIII', data, off)
    f = bytearray(data[off + 16:off + 16 + incl])
    off += 16 + incl
    v6 = f[12:14] == b'\x86\xdd'
    ip = f[14:]
    ihl = 40 if v6 else 20
    if v6:
        ip[0] |= 0x0f; ip[1] = ip[2] = ip[3] = 0xff; ip[7] = 0xff
        end = ihl + struct.unpack_from('!H', ip, 4)[0]
    else:
        ip[1] = 0xff; ip[8] = 0xff; ip[10] = ip[11] = 0xff
        end = struct.unpack_from('!H', ip, 2)[0]
    ip[ihl + 6] = ip[ihl + 7] = 0xff
    ip[ihl + 12] = 0xff
    want = zlib.crc32(b'\xff' * 8 + bytes(ip[:end - 4]))
    have = struct.unpack_from('<I', f, 14 + end - 4)[0]
    assert have == want, f'packet {i}: ICRC {have:#x}, want {want:#x}'
    # tshark shows the 4 ICRC bytes as a big-endian number, where it
    # finds them (not after a payload it hands to another dissector)
    if shown[i]:
        ts = int(shown[i], 16)
        assert ts == struct.unpack_from('>I', f, 14 + end - 4)[0], f'packet {i}: tshark {ts:#x}'
        checked += 1
    i += 1
assert i == 8 and checked >= 6, (i, checked)
print(f'{i} packets: ICRC verified, {checked} of them where tshark shows it')
PY
