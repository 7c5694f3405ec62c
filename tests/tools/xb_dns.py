#!/usr/bin/python3
"""xb_dns.py - a stub resolver for tests/e2e/e2e_probe.sh: the protected host's own DNS queries,
whose answers come back from port 53 to an ephemeral port of the host.

  xb_dns.py query SRC SERVER NAME COUNT
      COUNT queries for the A record of NAME to SERVER:53, each from a new UDP socket bound
      to SRC and an ephemeral port (every other one connected to the server, as glibc's
      resolver does, the others not), each waiting up to 2 s for its answer. Prints the
      number of answers that carried the query's ID and at least one A record, then the
      last address answered ("20 203.0.113.7").

Test support only. Bad arguments get one line on stderr and exit status 2.
"""
import os
import socket
import struct

from xb_args import BadArgs, parse_int, parse_pair, run

USAGE = "usage: xb_dns.py query SRC SERVER NAME COUNT"
TYPE_A, CLASS_IN = 1, 1


def question(qid, name):
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.strip(".").split("."))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\x00" + struct.pack(
        ">HH", TYPE_A, CLASS_IN)


def skip_name(msg, off):
    while True:
        n = msg[off]
        if n & 0xC0 == 0xC0:
            return off + 2
        if n == 0:
            return off + 1
        off += 1 + n


def first_a(msg, qid):
    """The first A record of the answer section, or None (wrong ID, no answer, bad reply)."""
    try:
        rid, flags, qd, an = struct.unpack(">HHHH", msg[:8])
        if rid != qid or not flags & 0x8000:
            return None
        off = 12
        for _ in range(qd):
            off = skip_name(msg, off) + 4
        for _ in range(an):
            off = skip_name(msg, off)
            rtype, _, _, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
            off += 10
            if rtype == TYPE_A and rdlen == 4:
                return socket.inet_ntoa(msg[off:off + 4])
            off += rdlen
    except (IndexError, struct.error):
        return None
    return None


def query(src, server, name, count):
    answered, last = 0, "-"
    for i in range(count):
        qid = int.from_bytes(os.urandom(2), "big")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((str(src), 0))
            s.settimeout(2)
            if i % 2:
                s.connect((str(server), 53))
                s.send(question(qid, name))
            else:
                s.sendto(question(qid, name), (str(server), 53))
            try:
                addr = first_a(s.recv(4096), qid)
            except socket.timeout:
                addr = None
        if addr:
            answered, last = answered + 1, addr
    print(answered, last)


def main(argv):
    if len(argv) != 6 or argv[1] != "query":
        raise BadArgs(USAGE)
    src, server = parse_pair(argv[2], argv[3])
    if src.version != 4:
        raise BadArgs("SRC and SERVER must be IPv4 addresses")
    query(src, server, argv[4], parse_int(argv[5], "COUNT", 1, 1000))
    return 0


if __name__ == "__main__":
    run(main)
