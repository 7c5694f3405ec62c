#!/usr/bin/env python3
"""slow_http.py - a hostile client of the metrics endpoint, for tests/e2e/e2e_hostile_control.sh.

Usage: slow_http.py HOST PORT COUNT INTERVAL_S OUT_FILE

Keeps COUNT connections to HOST:PORT, each sending the start of a GET request and then one more
header line every INTERVAL_S seconds, never ending it; a connection the server closes is opened
again at once. Runs until killed; every second it writes to OUT_FILE one JSON object: how many
connections are open, and how many were opened and closed so far. Errors get one line on
stderr and exit status 2."""
import json
import os
import socket
import sys
import time


def main():
    if len(sys.argv) != 6:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    interval, out = float(sys.argv[4]), sys.argv[5]
    socks, stats = {}, {"opened": 0, "closed": 0}

    def connect():
        s = socket.create_connection((host, port), timeout=2)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        s.setblocking(False)
        socks[s] = 0
        stats["opened"] += 1

    for _ in range(count):
        connect()
    written = 0.0
    while True:
        for s in list(socks):
            try:
                closed = s.recv(4096) == b""
            except BlockingIOError:
                closed = False
            except OSError:
                closed = True
            if not closed:
                try:
                    s.sendall(b"X-Slow-%d: 1\r\n" % socks[s])
                    socks[s] += 1
                except OSError:
                    closed = True
            if closed:
                del socks[s]
                s.close()
                stats["closed"] += 1
                connect()
        if time.monotonic() - written >= 1:
            # Whole or not at all: the test may read it as the script is killed.
            with open(out + ".tmp", "w", encoding="ascii") as f:
                json.dump(dict(stats, open=len(socks)), f)
            os.replace(out + ".tmp", out)
            written = time.monotonic()
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main())
