#!/usr/bin/python3
"""xb_udp_count.py - the receiving application of the xdpban end-to-end tests: binds UDP
sockets and writes the source address of every datagram that reaches them, one per line, to
LOG, so a test counts what got through the data path per source (grep -cx ADDR LOG).

  xb_udp_count.py PORT LOG READY ADDR...

Binds ADDR:PORT for each ADDR, creates the file READY once every socket is bound, then runs
until it is killed. It only listens: it never answers a datagram. Bad arguments get one line on
stderr and exit status 2.
"""
import ipaddress
import select
import socket
import sys

RCVBUF = 16 << 20


def bind_all(addrs, port):
    socks = []
    for addr in addrs:
        family = socket.AF_INET if addr.version == 4 else socket.AF_INET6
        s = socket.socket(family, socket.SOCK_DGRAM)
        # Room for a burst the reader falls behind on (a busy machine): a datagram the data
        # path passed must not be lost to a full buffer. Forced past rmem_max when root.
        try:
            s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), RCVBUF)
        except OSError:
            pass
        s.bind((str(addr), port))
        socks.append(s)
    return socks


def serve(socks, log):
    while True:
        readable, _, _ = select.select(socks, [], [])
        for s in readable:
            _, peer = s.recvfrom(65535)
            log.write(peer[0] + "\n")
        log.flush()


def main(argv):
    if len(argv) < 5 or not argv[1].isdigit() or not 1 <= int(argv[1]) <= 65535:
        print("usage: xb_udp_count.py PORT(1-65535) LOG READY ADDR...", file=sys.stderr)
        return 2
    try:
        addrs = [ipaddress.ip_address(a) for a in argv[4:]]
    except ValueError as e:
        print(f"xb_udp_count.py: {e}", file=sys.stderr)
        return 2
    try:
        socks = bind_all(addrs, int(argv[1]))
        with open(argv[2], "a") as log:
            open(argv[3], "w").close()
            serve(socks, log)
    except OSError as e:
        print(f"xb_udp_count.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
