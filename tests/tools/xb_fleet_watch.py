#!/usr/bin/python3
"""xb_fleet_watch.py - times a ban's arrival on several xdpband daemons (tests/e2e/e2e_fleet.sh).

  xb_fleet_watch.py ADDR TIMEOUT READY SOCK...

Connects to each daemon's control socket, creates the file READY, and from then on asks the
first one alone (`query ADDR`, the node where the ban is made) until it reports ADDR banned,
then the others in turn until each does, or TIMEOUT seconds pass: so the first one's time is
not late by a round of the others. Prints one line per socket: "SOCK MS", the milliseconds
from READY to the first reply that said banned, or "SOCK never". Exit status 0 when all saw
the ban, 1 otherwise; bad arguments: 2.
"""
import json
import socket
import sys
import time


def ask(f, s, addr):
    s.sendall(json.dumps({"cmd": "query", "addr": addr}).encode() + b"\n")
    return json.loads(f.readline()).get("banned") is True


def main(argv):
    if len(argv) < 5:
        print("usage: xb_fleet_watch.py ADDR TIMEOUT READY SOCK...", file=sys.stderr)
        return 2
    addr, timeout, ready, paths = argv[1], float(argv[2]), argv[3], argv[4:]
    conns = []
    for p in paths:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(p)
        conns.append((p, s, s.makefile()))
    seen = {}
    open(ready, "w").close()
    start = time.monotonic()
    while len(seen) < len(conns) and time.monotonic() - start < timeout:
        for p, s, f in conns[:1] if conns[0][0] not in seen else conns[1:]:
            if p not in seen and ask(f, s, addr):
                seen[p] = (time.monotonic() - start) * 1000
        time.sleep(0.0002)
    for p, _, _ in conns:
        print(p, f"{seen[p]:.1f}" if p in seen else "never")
    return 0 if len(seen) == len(conns) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
