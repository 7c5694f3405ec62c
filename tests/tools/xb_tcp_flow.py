#!/usr/bin/python3
"""xb_tcp_flow.py - a real TCP conversation for the xdpban end-to-end tests, so that a client's
segments reach the protected host inside an established connection (the spoof defence learns
hop counts from them) and a test can see that the conversation keeps working.

  xb_tcp_flow.py server ADDR PORT READY
      Listens on ADDR:PORT and echoes every byte of every connection back; creates the file
      READY once it listens, then runs until it is killed.
  xb_tcp_flow.py client SRC DST PORT STATUS
      Connects from SRC (which the namespace must hold) to DST:PORT, then every 10 ms sends 32
      bytes and waits up to 2 s for their echo. After each round trip it rewrites STATUS with
      the number of round trips so far; when the connection fails it writes "failed: WHY"
      there and exits 1. Runs until it is killed.

Test support only. Bad arguments get one line on stderr and exit status 2.
"""
import os
import socket
import threading
import time

from xb_args import BadArgs, parse_addr, parse_int, parse_pair, run

USAGE = "usage: xb_tcp_flow.py server ADDR PORT READY | client SRC DST PORT STATUS"
CHUNK = b"xdpban-e2e-tcp-flow-32-bytes...."


def family_of(addr):
    return socket.AF_INET if addr.version == 4 else socket.AF_INET6


def write_status(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def echo(conn):
    with conn:
        while True:
            data = conn.recv(4096)
            if not data:
                return
            conn.sendall(data)


def serve(addr, port, ready):
    with socket.socket(family_of(addr), socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((str(addr), port))
        s.listen(16)
        open(ready, "w").close()
        while True:
            conn, _ = s.accept()
            threading.Thread(target=echo, args=(conn,), daemon=True).start()


def round_trip(s, chunk):
    """Sends chunk on the connected socket s and waits for all of its echo."""
    s.sendall(chunk)
    got = b""
    while len(got) < len(chunk):
        part = s.recv(len(chunk) - len(got))
        if not part:
            raise OSError("the server closed the connection")
        got += part


def converse(src, dst, port, status):
    rounds = 0
    try:
        with socket.socket(family_of(src), socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.bind((str(src), 0))
            s.connect((str(dst), port))
            while True:
                round_trip(s, CHUNK)
                rounds += 1
                write_status(status, str(rounds))
                time.sleep(0.01)
    except OSError as e:
        write_status(status, f"failed: {e} (after {rounds} round trips)")
        return 1


def main(argv):
    if len(argv) == 5 and argv[1] == "server":
        serve(parse_addr(argv[2], "ADDR"), parse_int(argv[3], "PORT", 1, 65535), argv[4])
    elif len(argv) == 6 and argv[1] == "client":
        src, dst = parse_pair(argv[2], argv[3])
        return converse(src, dst, parse_int(argv[4], "PORT", 1, 65535), argv[5])
    else:
        raise BadArgs(USAGE)
    return 0


if __name__ == "__main__":
    run(main)
