#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Include-graph check: no include circle, and the emulator's layers.

Reads the #include "..." lines of every .c and .h under the given trees.
A module is a file without its extension (x.c and x.h are one module), so
"a.c includes b.h and b.c includes a.h" is a circle even though no header
includes itself.  Fails (exit 1) on:
  - a circle between modules anywhere in the trees;
  - in emulator/, an include that points up the layers
        host -> kernel -> device -> core -> wire -> lib
    (a layer may include its own and any lower layer; lib/ and the test
    API header emulator/mana_emu.h are leaves);
  - a provider, diagnostic or example file that includes the emulator;
  - an installed API header (INTERFACES) that includes a project header;
  - in vfio/ (mana-vfio), an include of anything but vfio/ itself and
    VFIO_MAY_INCLUDE; anywhere else, an include of vfio/.
The few known upward includes are listed in KNOWN with the reason; they
are left out of both checks and printed on every run, and a KNOWN entry
that no longer occurs is an error (so the list only shrinks).

With --objects, the same layers at link level instead (lint.link_graph):
nm reads the emulator's object files, and an object may not reference a
symbol that only objects of higher layers define -- what an include check
cannot see: a function declared in a low header but defined up in host/,
or a libc name (write, close, ...) that inside libmana-emu.so binds to
host/'s interposer.  A KNOWN include exception also allows its file's
object the symbols of the included file's layer; LINK_KNOWN lists the
other exceptions, with the same rules (printed, and an error once gone).

Usage: check_includes.py [--root DIR] [--self-test [--cc CC] [--nm NM]]
                         [TREE...]
       check_includes.py [--root DIR] --build-root DIR [--nm NM]
                         --objects OBJ[;OBJ...]...
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

TREES = ["providers", "emulator", "mana-diag", "examples", "vfio"]
LAYERS = ["lib", "wire", "core", "device", "kernel", "host"]	# low to high
INCLUDE_DIRS = ["", "kernel-headers"]	# -I roots, besides the file's folder

# Installed API headers: included by their implementation and by users, they
# stand alone (not one module with their .c) and include no project header.
INTERFACES = ["providers/mana/manadv.h", "emulator/mana_emu.h"]

# mana-vfio (vfio/) stands beside the emulator, not on it: it shares the
# GDMA wire formats and may reach the emulator's two lowest layers (wire/,
# lib/: where its frames will go), never the kernel, device, core or host
# layers, whose state is a preloaded process's.  No other tree includes
# vfio/ (its tests and fuzzers live in tests/ and fuzz/).
VFIO_MAY_INCLUDE = ["providers/mana/gdma.h", "emulator/wire/", "emulator/lib/"]


def vfio_error(src, dst, where):
    """Why the include src -> dst breaks vfio/'s rule, or None."""
    s_in, d_in = src.startswith("vfio" + os.sep), dst.startswith("vfio" + os.sep)
    if d_in and not s_in:
        return "%s: only mana-vfio (vfio/) includes vfio/" % where
    if s_in and not d_in and not any(
            dst == a or (a.endswith("/") and dst.startswith(a))
            for a in VFIO_MAY_INCLUDE):
        return "%s: vfio/ may include only %s" % (where,
                                                  ", ".join(VFIO_MAY_INCLUDE))
    return None


# (from, to): why it is still there and when it goes.
KNOWN = {
}

# (object's source, layer it may reach up to): why, and when it goes.
LINK_KNOWN = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root, trees):
    for tree in trees:
        for d, _, files in os.walk(os.path.join(root, tree)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, src, name):
    """Path of an included file relative to root, or None if outside."""
    for base in [os.path.dirname(src)] + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def module(path):
    if path in INTERFACES:
        return path
    return os.path.splitext(path)[0]


def emu_layer(path):
    """Layer index of an emulator file, -1 for the leaf API header."""
    parts = path.split(os.sep)
    if parts[0] != "emulator":
        return None
    if len(parts) == 2:
        return -1 if path in INTERFACES else None
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def edges(root, trees):
    out = []
    for src in sources(root, trees):
        with open(os.path.join(root, src), errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                dst = resolve(root, src, m.group(1))
                if dst:
                    out.append((src, n, dst))
    return out


def circles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check(root, trees, out=sys.stdout):
    errors = []
    graph = {}
    seen_known = set()
    all_edges = edges(root, trees)
    layer_counts = {}
    for src, line, dst in all_edges:
        if (src, dst) in KNOWN:
            seen_known.add((src, dst))
            continue
        a, b = emu_layer(src), emu_layer(dst)
        where = "%s:%d includes %s" % (src, line, dst)
        if src in INTERFACES:
            errors.append("%s: an API header includes no project header" %
                          where)
        verr = vfio_error(src, dst, where)
        if verr:
            errors.append(verr)
        if src.startswith("vfio" + os.sep):
            pass	# vfio_error() judged it
        elif a is None and src.startswith("emulator" + os.sep):
            msg = "%s: not in a layer folder (%s)" % (src, ", ".join(LAYERS))
            if msg not in errors:
                errors.append(msg)
        elif a is None and b is not None:
            errors.append("%s: only the emulator and its tests may "
                          "include the emulator" % where)
        elif a is not None and b is not None:
            if b > a:
                errors.append("%s: %s may not include %s (layers, low to "
                              "high: %s)" % (where, LAYERS[a] if a >= 0
                                             else "the API header",
                                             LAYERS[b], " -> ".join(LAYERS)))
            key = (LAYERS[a] if a >= 0 else "api",
                   LAYERS[b] if b >= 0 else "api")
            layer_counts[key] = layer_counts.get(key, 0) + 1
        if module(src) != module(dst):
            graph.setdefault(module(src), set()).add(module(dst))
    for comp in circles(graph):
        errors.append("include circle: " + " <-> ".join(comp))
    for k in sorted(set(KNOWN) - seen_known):
        errors.append("KNOWN lists %s -> %s, which no longer occurs: "
                      "remove it" % k)

    nfiles = len(set(s for s, _, _ in all_edges) |
                 set(d for _, _, d in all_edges))
    print("include graph: %d files with includes, %d #include \"...\" "
          "lines, %d modules" % (nfiles, len(all_edges), len(graph)),
          file=out)
    print("emulator includes by layer (from -> to):", file=out)
    for (a, b), n in sorted(layer_counts.items()):
        print("  %-6s -> %-6s %3d" % (a, b, n), file=out)
    for (a, b), why in sorted(KNOWN.items()):
        if (a, b) in seen_known:
            print("known: %s -> %s: %s" % (a, b, why), file=out)
    for e in errors:
        print("ERROR: " + e, file=out)
    print("include check: %s" % ("FAILED" if errors else "ok"), file=out)
    return not errors


def object_source(build_root, obj):
    """Source of a CMake object file, relative to the source root.

    CMake puts the object of SRC (relative to the target's source folder
    REL) at BUILD/REL/CMakeFiles/TARGET.dir/SRC.o, with ".." spelled "__".
    """
    rel = os.path.relpath(os.path.abspath(obj), os.path.abspath(build_root))
    parts = rel.split(os.sep)
    try:
        i = parts.index("CMakeFiles")
    except ValueError:
        return None
    if i + 2 >= len(parts) or not parts[i + 1].endswith(".dir"):
        return None
    src = parts[:i] + [".." if p == "__" else p for p in parts[i + 2:]]
    path = os.path.normpath(os.path.join(*src))
    return path[:-2] if path.endswith(".o") else path


def symbols(nm, obj):
    """(defined, undefined) external symbols of an object file."""
    out = subprocess.run([nm, "-P", "-g", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        (undefined if f[1] in ("U", "w", "v") else defined).add(f[0])
    return defined, undefined


def link_allowed(src, layer):
    """Exceptions that let src's object reach up to layer."""
    if (src, layer) in LINK_KNOWN:
        return (src, layer)
    for (a, b) in KNOWN:
        if a == src and emu_layer(b) is not None and \
                emu_layer(b) >= 0 and LAYERS[emu_layer(b)] == layer:
            return (a, b)
    return None


def check_links(build_root, objects, nm="nm", out=sys.stdout):
    errors, used = [], set()
    objs = {}
    for o in sorted(set(objects)):
        src = object_source(build_root, o)
        if src is None:
            errors.append("%s: not a CMake object file under %s" %
                          (o, build_root))
            continue
        objs[src] = symbols(nm, o)
    definers = {}
    for src, (defined, _) in objs.items():
        for sym in defined:
            definers.setdefault(sym, set()).add(src)
    counts, refs = {}, 0
    for src, (_, undefined) in sorted(objs.items()):
        a = emu_layer(src)
        if a is None or a < 0:
            continue
        for sym in sorted(undefined):
            where = [d for d in definers.get(sym, ()) if d != src]
            if not where:
                continue	# libc, or nothing we build
            layers = [emu_layer(d) for d in where]
            refs += 1
            low = min(99 if b is None or b < 0 else b for b in layers)
            if None in layers or -1 in layers:
                continue	# also defined outside the layers: not upward
            key = (LAYERS[a], LAYERS[low])
            counts[key] = counts.get(key, 0) + 1
            if low <= a:
                continue
            exc = link_allowed(src, LAYERS[low])
            if exc:
                used.add(exc)
                continue
            errors.append("%s references %s, defined only in %s (%s layer; "
                          "layers, low to high: %s)" %
                          (src, sym, ", ".join(sorted(where)), LAYERS[low],
                           " -> ".join(LAYERS)))
    for k in sorted(LINK_KNOWN):
        if k not in used:
            errors.append("LINK_KNOWN lists %s -> %s, which no longer "
                          "occurs: remove it" % k)
    print("link graph: %d object files, %d references between them" %
          (len(objs), refs), file=out)
    print("emulator references by layer (from -> to):", file=out)
    for (a, b), n in sorted(counts.items()):
        print("  %-6s -> %-6s %3d" % (a, b, n), file=out)
    for k in sorted(used):
        why = LINK_KNOWN.get(k) or KNOWN.get(k)
        print("known: %s -> %s: %s" % (k[0], k[1], why), file=out)
    for e in errors:
        print("ERROR: " + e, file=out)
    print("link check: %s" % ("FAILED" if errors else "ok"), file=out)
    return not errors


def self_test_links(cc, nm):
    """The link check must fail on a reference up the layers."""
    cases = {
        "kernel calls into host": {
            "emulator/kernel/k.c": "void h(void);\nvoid k(void) { h(); }\n",
            "emulator/host/h.c": "void h(void) {}\n",
        },
        "wire calls an interposed libc name": {
            "emulator/wire/w.c": "int close(int);\n"
                                 "int w(void) { return close(0); }\n",
            "emulator/host/i.c": "int close(int fd) { return fd; }\n",
        },
    }
    good = {
        "emulator/host/h.c": "void k(void);\nvoid h(void) { k(); }\n",
        "emulator/kernel/k.c": "void l(void);\nvoid k(void) { l(); }\n",
        "emulator/lib/l.c": "int close(int);\n"
                            "void l(void) { close(0); }\n",
        "providers/mana/p.c": "void p(void) {}\n",
        "emulator/device/d.c": "void p(void);\nvoid d(void) { p(); }\n",
    }
    ok = True
    for name, files in list(cases.items()) + [("clean objects", good)]:
        d = tempfile.mkdtemp(prefix="check_links.")
        try:
            objects = []
            for p, text in files.items():
                c = os.path.join(d, "src", p)
                os.makedirs(os.path.dirname(c), exist_ok=True)
                with open(c, "w") as f:
                    f.write(text)
                # as CMake lays it out for a target in emulator/
                rel = os.path.relpath(p, "emulator").replace("..", "__")
                o = os.path.join(d, "build", "emulator", "CMakeFiles",
                                 "t.dir", rel + ".o")
                os.makedirs(os.path.dirname(o), exist_ok=True)
                subprocess.run([cc, "-c", "-o", o, c], check=True)
                objects.append(o)
            sink = open(os.devnull, "w")
            saved = dict(LINK_KNOWN)
            LINK_KNOWN.clear()
            passed = check_links(os.path.join(d, "build"), objects, nm, sink)
            LINK_KNOWN.update(saved)
            sink.close()
        finally:
            shutil.rmtree(d)
        want = name == "clean objects"
        print("self-test %-36s %s (%s)" % (name, "passes" if passed
                                            else "fails",
                                            "right" if passed == want
                                            else "WRONG"))
        ok &= passed == want
    return ok


def self_test():
    """The check must fail on a circle and on an upward include."""
    cases = {
        "module circle": {
            "providers/a.c": '#include "b.h"\n', "providers/a.h": "",
            "providers/b.c": '#include "a.h"\n', "providers/b.h": "",
        },
        "upward include": {
            "emulator/wire/w.c": '#include "emulator/host/h.h"\n',
            "emulator/host/h.h": "",
        },
        "provider includes the emulator": {
            "providers/p.c": '#include "emulator/lib/l.h"\n',
            "emulator/lib/l.h": "",
        },
        "vfio includes the device layer": {
            "vfio/s.c": '#include "emulator/device/d.h"\n',
            "emulator/device/d.h": "",
        },
        "emulator includes vfio": {
            "emulator/wire/w.c": '#include "vfio/v.h"\n',
            "vfio/v.h": "",
        },
    }
    good = {
        "emulator/host/h.c": '#include "emulator/kernel/k.h"\n',
        "emulator/kernel/k.c": '#include "k.h"\n#include "emulator/lib/l.h"\n',
        "emulator/kernel/k.h": "", "emulator/lib/l.h": "",
        "vfio/s.c": '#include "v.h"\n#include "emulator/lib/l.h"\n',
        "vfio/v.h": '#include "providers/mana/gdma.h"\n',
        "providers/mana/gdma.h": "",
    }
    ok = True
    for name, files in list(cases.items()) + [("clean tree", good)]:
        d = tempfile.mkdtemp(prefix="check_includes.")
        try:
            for p, text in files.items():
                os.makedirs(os.path.join(d, os.path.dirname(p)),
                            exist_ok=True)
                with open(os.path.join(d, p), "w") as f:
                    f.write(text)
            sink = open(os.devnull, "w")
            saved = dict(KNOWN)
            KNOWN.clear()
            passed = check(d, TREES, sink)
            KNOWN.update(saved)
            sink.close()
        finally:
            shutil.rmtree(d)
        want = name == "clean tree"
        print("self-test %-32s %s (%s)" % (name, "passes" if passed
                                            else "fails",
                                            "right" if passed == want
                                            else "WRONG"))
        ok &= passed == want
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--cc", default="cc",
                    help="C compiler for the link check's self-test")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--build-root", help="CMake build tree (--objects)")
    ap.add_argument("--objects", nargs="+",
                    help="object files for the link check (';' lists too)")
    ap.add_argument("trees", nargs="*", default=TREES)
    args = ap.parse_args()
    if args.self_test:
        ok = self_test()
        return 0 if self_test_links(args.cc, args.nm) and ok else 1
    if args.objects:
        if not args.build_root:
            ap.error("--objects needs --build-root")
        objects = [o for a in args.objects for o in a.split(";") if o]
        return 0 if check_links(args.build_root, objects, args.nm) else 1
    return 0 if check(os.path.abspath(args.root), args.trees) else 1


if __name__ == "__main__":
    sys.exit(main())
