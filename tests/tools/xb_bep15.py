#!/usr/bin/python3
"""xb_bep15.py - BitTorrent UDP tracker datagrams (BEP 15) for tests/e2e/e2e_tracker.sh, sent
through an ordinary UDP socket bound to SRC (which the namespace must hold), so they leave
from an ephemeral source port like a real client's.

  xb_bep15.py junk SRC DST PORT COUNT
      COUNT datagrams that break BEP 15, going round the ways a guard profile bep15 knows
      (docs/datapath.md, section 9): shorter than 16 bytes, an unknown action, a connect
      without the protocol ID, an announce shorter than 98 bytes, one with event 4, one with
      port 0, a scrape whose hashes are not whole. Prints nothing.
  xb_bep15.py connect SRC DST PORT WAIT_S
      one valid connect request; prints "reply" when the tracker's connect response (action
      0, the same transaction ID) comes back within WAIT_S seconds, else "none".

Test support only. Bad arguments get one line on stderr and exit status 2.
"""
import os
import socket
import struct

from xb_args import BadArgs, parse_int, parse_pair, run

USAGE = "usage: xb_bep15.py junk SRC DST PORT COUNT | connect SRC DST PORT WAIT_S"
MAGIC = 0x41727101980
CONNECT, ANNOUNCE, SCRAPE = 0, 1, 2


def announce(length, event=2, port=6881):
    """An announce of `length` bytes (98 is the whole request) with a made-up connection ID."""
    body = (struct.pack(">QII", 0x1122334455667788, ANNOUNCE, 7) + os.urandom(40)
            + struct.pack(">QQQIIIiH", 0, 0, 0, event, 0, 0, -1, port))
    return body[:length]


JUNK = [
    b"\x00" * 15,                                     # shorter than the 16-byte header
    struct.pack(">QII", MAGIC, 5, 7),                 # action 5: not a request
    struct.pack(">QII", MAGIC + 1, CONNECT, 7),       # connect without the protocol ID
    announce(97),                                     # an announce cut short
    announce(98, event=4),                            # event beyond stopped (3)
    announce(98, port=0),                             # port 0
    struct.pack(">QII", 1, SCRAPE, 7) + b"\xab" * 19,  # a scrape of 19 bytes of hash
]


def family_of(addr):
    return socket.AF_INET if addr.version == 4 else socket.AF_INET6


def junk(src, dst, port, count):
    with socket.socket(family_of(src), socket.SOCK_DGRAM) as s:
        s.bind((str(src), 0))
        for i in range(count):
            s.sendto(JUNK[i % len(JUNK)], (str(dst), port))


def connect(src, dst, port, wait_s):
    tid = int.from_bytes(os.urandom(4), "big")
    with socket.socket(family_of(src), socket.SOCK_DGRAM) as s:
        s.bind((str(src), 0))
        s.settimeout(wait_s)
        s.sendto(struct.pack(">QII", MAGIC, CONNECT, tid), (str(dst), port))
        try:
            reply = s.recv(2048)
        except socket.timeout:
            reply = b""
    ok = len(reply) >= 16 and struct.unpack(">II", reply[:8]) == (CONNECT, tid)
    print("reply" if ok else "none")


def main(argv):
    if len(argv) != 6 or argv[1] not in ("junk", "connect"):
        raise BadArgs(USAGE)
    src, dst = parse_pair(argv[2], argv[3])
    port = parse_int(argv[4], "PORT", 1, 65535)
    if argv[1] == "junk":
        junk(src, dst, port, parse_int(argv[5], "COUNT", 1, 100000))
    else:
        connect(src, dst, port, parse_int(argv[5], "WAIT_S", 1, 60))
    return 0


if __name__ == "__main__":
    run(main)
