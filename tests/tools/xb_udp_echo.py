#!/usr/bin/python3
"""xb_udp_echo.py - a UDP conversation for the xdpban end-to-end tests: a server that answers,
and a client asking from a connected or an unconnected socket, so a test can see which
answers reach the host (tests/e2e/e2e_allow.sh: allow-only mode lets through only what a
connected socket takes).

  xb_udp_echo.py server ADDR PORT READY
      Binds ADDR:PORT and sends every datagram back to where it came from; creates the file
      READY once it is bound, then runs until it is killed.
  xb_udp_echo.py ask SRC DST PORT connected|unconnected WAIT_S
      Sends one datagram from SRC (which the namespace must hold) to DST:PORT, from a socket
      connect()ed to DST:PORT or not, and prints "reply" when its echo comes back within
      WAIT_S seconds, else "none".

Test support only. Bad arguments get one line on stderr and exit status 2.
"""
import socket

from xb_args import BadArgs, parse_addr, parse_int, parse_pair, run

USAGE = ("usage: xb_udp_echo.py server ADDR PORT READY | "
         "ask SRC DST PORT connected|unconnected WAIT_S")
PAYLOAD = b"xdpban-e2e-udp-echo"


def family_of(addr):
    return socket.AF_INET if addr.version == 4 else socket.AF_INET6


def serve(addr, port, ready):
    with socket.socket(family_of(addr), socket.SOCK_DGRAM) as s:
        s.bind((str(addr), port))
        open(ready, "w").close()
        while True:
            data, peer = s.recvfrom(65535)
            s.sendto(data, peer)


def ask(src, dst, port, connected, wait_s):
    with socket.socket(family_of(src), socket.SOCK_DGRAM) as s:
        s.bind((str(src), 0))
        s.settimeout(wait_s)
        if connected:
            s.connect((str(dst), port))
            s.send(PAYLOAD)
        else:
            s.sendto(PAYLOAD, (str(dst), port))
        try:
            print("reply" if s.recv(65535) == PAYLOAD else "none")
        except (socket.timeout, ConnectionRefusedError):
            print("none")


def main(argv):
    if len(argv) == 5 and argv[1] == "server":
        serve(parse_addr(argv[2], "ADDR"), parse_int(argv[3], "PORT", 1, 65535), argv[4])
    elif len(argv) == 7 and argv[1] == "ask" and argv[5] in ("connected", "unconnected"):
        src, dst = parse_pair(argv[2], argv[3])
        ask(src, dst, parse_int(argv[4], "PORT", 1, 65535), argv[5] == "connected",
            parse_int(argv[6], "WAIT_S", 1, 60))
    else:
        raise BadArgs(USAGE)
    return 0


if __name__ == "__main__":
    run(main)
