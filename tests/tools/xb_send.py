#!/usr/bin/python3
"""xb_send.py - test traffic for the xdpban end-to-end tests, run inside a sender namespace.

  xb_send.py udp SRC DST PORT COUNT
      COUNT valid datagrams through an ordinary UDP socket bound to SRC (which the namespace
      must hold), so the kernel resolves the neighbour (ARP or NDP) from SRC like a real client.
  xb_send.py synfin IFACE DSTMAC SRC[,SRC...] DST COUNT [TTL]
      COUNT TCP segments with SYN and FIN set (malformed for xdpban) from each SRC, built with
      scapy and sent as raw Ethernet frames on IFACE to DSTMAC; no SRC need be held. @FILE in
      place of the list reads the sources from FILE, comma-separated or one a line. TTL (or
      the IPv6 hop limit; default 64) is what the frames leave with: a forger who does not
      know a host's distance picks one that the host's own packets do not arrive with.
  xb_send.py burst IFACE DSTMAC FIRST COUNT
      one TCP segment with SYN and FIN from each of COUNT sources, numbers FIRST to
      FIRST+COUNT-1, source N being 2001:db8:e000::1 plus N << 64 (2001:db8:e000:N::1 below
      65536; each its own /64, all in 2001:db8::/32), to 2001:db8::1, as raw Ethernet frames
      on IFACE to DSTMAC. The frames are built from bytes, without scapy:
      a burst of thousands of bans goes out in well under a second.
  xb_send.py spray IFACE DSTMAC DST PORT STOPFILE OUT SRC[,SRC...]
      valid UDP datagrams to DST:PORT from each SRC in turn, round after round (about 1 ms
      apart), as raw Ethernet frames on IFACE to DSTMAC, until the file STOPFILE exists; then
      writes "SRC COUNT" lines (what was sent from each) to OUT. The frames are built once, so
      it keeps up a steady stream while a test changes the data path under it.
  xb_send.py tcp SRC DST PORT COUNT
      one TCP connection from SRC to an echo server (`xb_tcp_flow.py server`) at DST:PORT, and COUNT
      exchanges on it, each a separate segment waiting for its echo: the established
      traffic from which xdpban learns (verifies) SRC's hop count.

Test support only: it must never be pointed at an interface the test did not create. Bad
arguments get one line on stderr and exit status 2.
"""
import ipaddress
import re
import socket
import struct

from xb_args import BadArgs, parse_int, parse_pair, run
from xb_tcp_flow import round_trip

USAGE = ("usage: xb_send.py udp SRC DST PORT COUNT | "
         "synfin IFACE DSTMAC SRC[,SRC...] DST COUNT [TTL] | burst IFACE DSTMAC FIRST COUNT | "
         "spray IFACE DSTMAC DST PORT STOPFILE OUT SRC[,SRC...] | tcp SRC DST PORT COUNT")
MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
PAYLOAD = b"xdpban-e2e"


def send_udp(src, dst, port, count):
    family = socket.AF_INET if src.version == 4 else socket.AF_INET6
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((str(src), 0))
        for _ in range(count):
            s.sendto(PAYLOAD, (str(dst), port))


def read_srcs(arg):
    """The sources of a SRC[,SRC...] argument, or of the file it names as @FILE."""
    if arg.startswith("@"):
        try:
            with open(arg[1:], encoding="ascii") as f:
                arg = f.read()
        except (OSError, ValueError) as e:
            raise BadArgs(f"cannot read the sources in {arg[1:]}: {e}") from e
    return [src for src in arg.replace("\n", ",").split(",") if src]


def send_synfin(iface, dstmac, srcs, dst, count, ttl):
    import logging

    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, TCP, Ether, IPv6, sendp

    def l3(src):
        if src.version == 4:
            return IP(src=str(src), dst=str(dst), ttl=ttl)
        return IPv6(src=str(src), dst=str(dst), hlim=ttl)

    # Distinct source ports, so that every segment is a separate packet to any observer.
    frames = [Ether(dst=dstmac) / l3(src) / TCP(sport=40000 + i, dport=7, flags="SF")
              for src in srcs for i in range(count)]
    sendp(frames, iface=iface, verbose=False)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def burst_frame(dstmac, src, dst):
    tcp = struct.pack("!HHIIBBHHH", 40000, 7, 0, 0, 5 << 4, 0x03, 1024, 0, 0)  # SYN|FIN
    pseudo = src + dst + struct.pack("!IxxxB", len(tcp), socket.IPPROTO_TCP)
    tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
    ip6 = struct.pack("!IHBB", 6 << 28, len(tcp), socket.IPPROTO_TCP, 64) + src + dst
    eth = bytes.fromhex(dstmac.replace(":", "")) + bytes.fromhex("020000000002") + b"\x86\xdd"
    return eth + ip6 + tcp


def send_burst(iface, dstmac, first, count):
    base = ipaddress.IPv6Address("2001:db8:e000::1")
    dst = ipaddress.IPv6Address("2001:db8::1").packed
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((iface, 0))
        for n in range(first, first + count):
            s.send(burst_frame(dstmac, (base + (n << 64)).packed, dst))


def send_spray(iface, dstmac, dst, port, stopfile, out, srcs):
    import logging
    import os
    import time

    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, UDP, Ether

    frames = [bytes(Ether(dst=dstmac) / IP(src=str(src), dst=str(dst)) /
                    UDP(sport=40000, dport=port) / PAYLOAD) for src in srcs]
    sent = [0] * len(srcs)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((iface, 0))
        while not os.path.exists(stopfile):
            for i, frame in enumerate(frames):
                s.send(frame)
                sent[i] += 1
            time.sleep(0.001)
    with open(out, "w") as f:
        for src, n in zip(srcs, sent):
            f.write(f"{src} {n}\n")


def check_iface(iface):
    try:
        socket.if_nametoindex(iface)
    except OSError:
        raise BadArgs(f"IFACE '{iface}' does not exist in this network namespace") from None


def check_mac(mac):
    if not MAC_RE.match(mac):
        raise BadArgs(f"DSTMAC '{mac}' is not a MAC address like 02:00:00:00:00:01")


def send_tcp(src, dst, port, count):
    with socket.create_connection((str(dst), port), timeout=10,
                                  source_address=(str(src), 0)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(count):
            round_trip(s, PAYLOAD)


def main(argv):
    if len(argv) == 6 and argv[1] == "udp":
        src, dst = parse_pair(argv[2], argv[3])
        send_udp(src, dst, parse_int(argv[4], "PORT", 1, 65535),
                 parse_int(argv[5], "COUNT", 1, 100000))
    elif len(argv) == 6 and argv[1] == "tcp":
        src, dst = parse_pair(argv[2], argv[3])
        send_tcp(src, dst, parse_int(argv[4], "PORT", 1, 65535),
                 parse_int(argv[5], "COUNT", 1, 100000))
    elif len(argv) == 9 and argv[1] == "spray":
        check_mac(argv[3])
        check_iface(argv[2])
        pairs = [parse_pair(src, argv[4]) for src in argv[8].split(",")]
        send_spray(argv[2], argv[3], pairs[0][1], parse_int(argv[5], "PORT", 1, 65535),
                   argv[6], argv[7], [src for src, _ in pairs])
    elif len(argv) == 6 and argv[1] == "burst":
        check_mac(argv[3])
        check_iface(argv[2])
        send_burst(argv[2], argv[3], parse_int(argv[4], "FIRST", 0, 2**32 - 1),
                   parse_int(argv[5], "COUNT", 1, 2**20))
    elif len(argv) in (7, 8) and argv[1] == "synfin":
        check_mac(argv[3])
        check_iface(argv[2])
        pairs = [parse_pair(src, argv[5]) for src in read_srcs(argv[4])]
        ttl = parse_int(argv[7], "TTL", 1, 255) if len(argv) == 8 else 64
        send_synfin(argv[2], argv[3], [src for src, _ in pairs], pairs[0][1],
                    parse_int(argv[6], "COUNT", 1, 100000), ttl)
    else:
        raise BadArgs(USAGE)
    return 0


if __name__ == "__main__":
    run(main)
