#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Judge a `run_tests.py -v` log of rdma-core's test suite.

usage: unittest_verdict.py SUITE EXPECTED_FILE LOG

Prints unittest's summary line, then every test that errored or failed,
each marked "expected" (with the reason from EXPECTED_FILE) or
"UNEXPECTED" with the last exception line of its traceback.  Exit status:
0 when the run ended with a summary and nothing unexpected failed, 1
otherwise (a run that died without a summary, e.g. of a signal, is 1).
"""
import re
import sys

SEP = '=' * 70


def load_expected(path, suite):
    rules = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0] == suite:
                rules.append((re.compile(parts[1]), parts[2]))
    return rules


def failures(text):
    """(kind, test id, last exception line) of every ERROR/FAIL block."""
    out = []
    for block in text.split('\n' + SEP + '\n')[1:]:
        head = re.match(r'(ERROR|FAIL): \S+ \((\S+)\)', block)
        if not head:
            continue
        lines = [l for l in block.split('\n') if l.strip()]
        exc = [l for l in lines if re.match(r'[\w.]+(Error|Exception)\b', l)]
        out.append((head.group(1), head.group(2),
                    (exc[-1] if exc else lines[-1]).strip()))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    suite, exp_path, log = sys.argv[1:]
    rules = load_expected(exp_path, suite)
    with open(log, errors='replace') as f:
        text = f.read()
    ran = re.search(r'^Ran (\d+) tests? in .*$', text, re.M)
    result = re.search(r'^(OK|FAILED)( \(.*\))?$', text, re.M)
    if not ran or not result:
        print('  no summary line: the run died (see %s)' % log)
        return 1
    print('  %s; %s' % (ran.group(0), result.group(0)))
    bad = 0
    for kind, test, exc in failures(text):
        why = next((r for p, r in rules if p.fullmatch(test)), None)
        if why:
            print('  expected   %s %s: %s' % (kind, test, why))
        else:
            bad += 1
            print('  UNEXPECTED %s %s: %s' % (kind, test, exc[:160]))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
