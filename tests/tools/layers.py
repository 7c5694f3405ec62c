#!/usr/bin/python3
"""layers.py - checks the layering of user/ from what the build really did (`make layers`).

The rules (the Makefile's comment on the two libraries):
  - user/lib (the application library) calls and includes nothing of user/ above it;
  - user/common (what the programs share) calls and includes user/lib and nothing above it;
  - a program's folder user/PROG is linked into $(BUILD)/PROG alone: no other program, test,
    fuzzer or bench links one of its objects;
  - no circle of calls or includes between the modules of user/ (a module is x.c with x.h).

Calls are read from the objects' symbol tables (nm: who defines, who needs), includes from the
sources, and what each binary was linked from from the linker's map (-Wl,-Map) beside it.
Prints what each binary holds of user/, then one line per broken rule; exits 1 if any.

usage: layers.py BUILD [TREE]   (TREE: the checkout, by default the one holding this script)
"""
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBS = ("lib", "common")  # bottom first: a folder may depend only on those before it
# Where `#include "x.h"` is looked for after the including file's own folder (CFLAGS -I).
INCLUDE_DIRS = ("include", "tests/harness", "user/lib", "user/common")


def folders():
    return sorted(d for d in os.listdir(os.path.join(ROOT, "user"))
                  if os.path.isdir(os.path.join(ROOT, "user", d)))


def rank(folder):
    """0 for user/lib, 1 for user/common, 2 for every program."""
    return LIBS.index(folder) if folder in LIBS else len(LIBS)


def may_use(a, b):
    """Whether a module of folder a may call or include one of folder b."""
    return a == b or (b in LIBS and rank(b) < rank(a))


def module_of(path):
    """'user/common/conf_load.c' -> 'common/conf_load'; None outside user/."""
    rel = os.path.relpath(path, ROOT)
    m = re.match(r"user/([^/]+)/([^/]+)\.[ch]$", rel)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def call_edges(build):
    """Module -> {module: [symbols]} from the objects of user/."""
    defined, needed = {}, collections.defaultdict(set)
    for folder in folders():
        d = os.path.join(build, "user", folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            # An object whose source has gone is a leftover of an earlier build.
            if not name.endswith(".o") or not os.path.exists(
                    os.path.join(ROOT, "user", folder, name[:-2] + ".c")):
                continue
            mod = f"{folder}/{name[:-2]}"
            out = subprocess.run(["nm", os.path.join(d, name)], check=True,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TDBRVWG":
                    defined.setdefault(f[2], mod)
                elif len(f) == 2 and f[0] == "U":
                    needed[mod].add(f[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for mod, syms in needed.items():
        for s in sorted(syms):
            to = defined.get(s)
            if to and to != mod:
                edges[mod][to].append(s)
    return edges


def include_edges():
    """Module -> {module: [headers]} from the sources of user/."""
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for folder in folders():
        d = os.path.join(ROOT, "user", folder)
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            mod = module_of(path)
            with open(path, encoding="utf-8") as f:
                for hdr in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                    for cand in [d] + [os.path.join(ROOT, i) for i in INCLUDE_DIRS]:
                        target = os.path.join(cand, hdr)
                        if os.path.exists(target):
                            to = module_of(target)
                            if to and to != mod:
                                edges[mod][to].append(hdr)
                            break
    return edges


def circles(edges):
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
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

    sys.setrecursionlimit(100000)
    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in index:
            visit(v)
    return found


def linked(build):
    """Binary -> set of modules of user/ it was linked from, from the maps beside the binaries."""
    held = {}
    for top, _, files in os.walk(build):
        for name in files:
            if not name.endswith(".map"):
                continue
            path = os.path.join(top, name)
            mods = set()
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            # LOAD lines name objects; archive members appear as lib.a(member.o).
            for obj in re.findall(r"^LOAD (\S+\.o)$", text, re.M):
                m = re.search(r"(?:user|fuzz/obj)/([^/]+)/([^/]+)\.o$", obj)
                if m:
                    mods.add(f"{m.group(1)}/{m.group(2)}")
            for arch, member in re.findall(r"(\S*libxbcommon\.a)\((\S+)\.o\)", text):
                mods.add(f"common/{member}")
            held[os.path.relpath(path[:-4], build)] = mods
    return held


def program_of(binary):
    """'xdpband' -> 'xdpband' for a program's own binary, None for tests, fuzz, bench, kcheck."""
    return binary if "/" not in binary and binary in folders() else None


def main():
    global ROOT
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: layers.py BUILD [TREE]")
    build = sys.argv[1]
    if len(sys.argv) == 3:
        ROOT = os.path.abspath(sys.argv[2])
    broken = []

    held = linked(build)
    if not held:
        sys.exit(f"layers: no link maps under {build}: build first (make all)")
    for binary in sorted(held):
        by_folder = collections.defaultdict(list)
        for mod in held[binary]:
            by_folder[mod.split("/")[0]].append(mod.split("/")[1])
        print(f"{binary}: " + "; ".join(f"{f} {len(v)}" for f, v in sorted(by_folder.items())))
        own = program_of(binary)
        for folder, mods in sorted(by_folder.items()):
            if folder not in LIBS and folder != own:
                broken.append(f"{binary} links {', '.join(sorted(mods))} of user/{folder}, "
                              f"a program's own sources")

    calls, incs = call_edges(build), include_edges()
    for kind, edges in (("calls", calls), ("includes", incs)):
        for a, tos in sorted(edges.items()):
            for b, what in sorted(tos.items()):
                fa, fb = a.split("/")[0], b.split("/")[0]
                if not may_use(fa, fb):
                    broken.append(f"user/{a} {kind} user/{b} ({', '.join(what[:4])}): "
                                  f"user/{fa} may not depend on user/{fb}")
    both = collections.defaultdict(lambda: collections.defaultdict(list))
    for edges in (calls, incs):
        for a, tos in edges.items():
            for b, what in tos.items():
                both[a][b] += what
    for comp in circles(both):
        inside = [f"{a}->{b} ({', '.join(both[a][b][:3])})"
                  for a in comp for b in sorted(both[a]) if b in comp]
        broken.append(f"circle of {len(comp)} modules: {' '.join(comp)}: {'; '.join(inside)}")

    for b in broken:
        print(f"layers: {b}")
    print(f"layers: {len(held)} binaries, {len(calls)} calling modules, "
          f"{len(broken)} broken rule(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
