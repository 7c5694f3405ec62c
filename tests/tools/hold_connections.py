#!/usr/bin/env python3
"""hold_connections.py - a hostile client of the control socket, for tests/e2e/e2e_hostile_control.sh.

Usage: hold_connections.py SOCKET COUNT {hold|reconnect} OUT_FILE

Opens COUNT connections to SOCKET and sends nothing on them. With `reconnect`, every connection
the server closes is opened again at once, for as long as the script runs (it is killed by the
test); with `hold`, closed connections stay closed. Every few tenths of a second it writes to
OUT_FILE one JSON object: how many connections are open, how many were opened and closed so
far, and each distinct error line the server sent (with how often)."""
import json
import os
import selectors
import socket
import sys
import time


def main():
    path, count, mode, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    sel = selectors.DefaultSelector()
    open_socks = set()
    seen = {}
    stats = {"opened": 0, "closed": 0, "connect_failed": 0}

    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(path)
        except OSError:
            s.close()
            stats["connect_failed"] += 1
            return
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, b"")
        open_socks.add(s)
        stats["opened"] += 1

    for _ in range(count):
        connect()
    last = 0.0
    while True:
        if mode == "reconnect":
            while len(open_socks) < count:
                connect()
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            for line in data.decode(errors="replace").splitlines():
                seen[line] = seen.get(line, 0) + 1
            if not data:
                sel.unregister(s)
                s.close()
                open_socks.discard(s)
                stats["closed"] += 1
        if time.monotonic() - last > 0.3:
            last = time.monotonic()
            with open(out + ".new", "w") as f:
                json.dump(dict(stats, open=len(open_socks), seen=seen), f)
            os.replace(out + ".new", out)


if __name__ == "__main__":
    main()
