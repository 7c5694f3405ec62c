#!/usr/bin/python3
"""profile.py VM_MD RELEASE [HOST_MD] - the "Instructions per packet" section of the bench
report, from what the pipeline workload printed in the counting VM of bench/profile.sh (VM_MD,
where its "ns" are instructions) and, when given, on this machine (HOST_MD, the pipeline
workload's own section of the same run): per traffic class, the instructions xdpban executes
beyond a bare drop, by stage, beside the nanoseconds they take here."""
import re
import sys

MAIN_HEAD = "| traffic (IPv4) | verdict |"
STAGES_HEAD = "| traffic (IPv4) | bare drop | parse |"


def number(cell):
    m = re.match(r"\s*(-?[0-9.]+)", cell)
    return float(m.group(1)) if m else None


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def header(lines, head):
    """The cells of the first header line starting with head."""
    return next((cells(line) for line in lines if line.startswith(head)), [])


def table(lines, head):
    """The rows under the first header line starting with head, as lists of cells."""
    rows, inside = [], False
    for line in lines:
        if line.startswith(head):
            inside = True
            continue
        if inside:
            if not line.startswith("|"):
                break
            if not line.startswith("|---"):
                rows.append(cells(line))
    return rows


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: profile.py VM_MD RELEASE [HOST_MD]")
    vm = read(sys.argv[1])
    release = sys.argv[2]
    main_rows = table(vm, MAIN_HEAD)
    stage_rows = {r[0]: r for r in table(vm, STAGES_HEAD)}
    # The stages after the bare drop, the full program's column named "statistics".
    stages = header(vm, STAGES_HEAD)[2:-1] + ["statistics"]
    if not main_rows or not stage_rows:
        sys.exit("profile.py: the pipeline's tables are not in " + sys.argv[1])
    host = {r[0]: r for r in table(read(sys.argv[3]), MAIN_HEAD)} if len(sys.argv) == 4 else {}

    print("## Instructions per packet\n")
    print("Counted, not timed, by bench/profile.sh: the pipeline workload's static build "
          "(build/bench/pipeline.static), with the same state, sources and checks, run in "
          f"Debian 12's kernel {release} under QEMU with TCG and `-icount shift=0`, where the "
          "guest's clock advances one nanosecond per instruction executed: the pipeline's "
          "ns per packet there are x86-64 instructions per packet, the JIT's code, the "
          "helpers and the kernel's test-run loop together (one sample: the count does not "
          "vary). The same program on the same frames gives the same count on any machine. "
          "QEMU models no cache, so the counts hold no misses; this machine's kernel inlines a "
          "few helpers that 6.1 calls (the per-CPU array lookup among them) and executes "
          "somewhat fewer. Stages as in \"Where the time goes\" above: each step is what the "
          "stage adds to the one before, the last what the statistics add to the cut after "
          "counting.\n")
    print("| traffic (IPv4) | xdpban | bare drop | xdpban - bare drop | " + " | ".join(stages) + " |")
    print("|---" * (4 + len(stages)) + "|")
    for r in main_rows:
        traffic, x, b = r[0], number(r[2]), number(r[3])
        if x is None or b is None:
            print(f"| {traffic} | not measured |" + " |" * (2 + len(stages)))
            continue
        steps = [number(c) for c in stage_rows.get(traffic, [])[1:]]
        added = ["-"] * len(stages)
        if len(steps) == len(stages) + 1 and None not in steps:
            added = [f"{steps[i] - steps[i - 1]:+.0f}" for i in range(1, len(steps))]
        print(f"| {traffic} | {x:.0f} | {b:.0f} | {x - b:.0f} | " + " | ".join(added) + " |")
    print()
    if not host:
        return
    print("Beside this machine's time (the pipeline's medians above): what xdpban adds to a "
          "bare drop, in instructions and in ns, and ns per 100 of those instructions. The "
          "first row has every table in the cache: it shows what the instructions alone cost "
          "here; a class far above it waits on memory.\n")
    print("| traffic (IPv4) | instructions over bare drop | ns over bare drop, this machine "
          "| ns per 100 instructions |")
    print("|---|---|---|---|")
    for r in main_rows:
        h = host.get(r[0])
        x, b = number(r[2]), number(r[3])
        if not h or x is None or b is None or number(h[2]) is None or number(h[3]) is None:
            continue
        ins, ns = x - b, number(h[2]) - number(h[3])
        print(f"| {r[0]} | {ins:.0f} | {ns:.1f} | {100 * ns / ins:.2f} |")
    print()


if __name__ == "__main__":
    main()
