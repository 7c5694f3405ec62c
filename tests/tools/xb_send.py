#!/usr/bin/python3
"""xb_send.py - test traffic for the xdpban end-to-end tests, run inside a sender namespace.

  xb_send.py udp SRC DST PORT COUNT
      COUNT valid datagrams through an ordinary UDP socket bound to SRC (which the namespace
      must hold), so the kernel resolves the neighbour (ARP or NDP) from SRC like a real client.
  xb_send.py synfin IFACE DSTMAC SRC DST COUNT
      COUNT TCP segments with SYN and FIN set (malformed for xdpban), built with scapy and sent
      as raw Ethernet frames on IFACE to DSTMAC; SRC need not be held.
  xb_send.py tcp SRC DST PORT COUNT
      one TCP connection from SRC to an echo server (xb_tcp_echo.py) at DST:PORT, and COUNT
      exchanges on it, each a separate segment waiting for its echo: the established
      traffic from which xdpban learns (verifies) SRC's hop count.

Test support only: it must never be pointed at an interface the test did not create. Bad
arguments get one line on stderr and exit status 2.
"""
import ipaddress
import re
import socket
import sys

USAGE = ("usage: xb_send.py udp SRC DST PORT COUNT | synfin IFACE DSTMAC SRC DST COUNT"
         " | tcp SRC DST PORT COUNT")
MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
PAYLOAD = b"xdpban-e2e"


class BadArgs(Exception):
    pass


def parse_addr(text, what):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise BadArgs(f"{what} '{text}' is not an IPv4 or IPv6 address") from None


def parse_pair(src_text, dst_text):
    src, dst = parse_addr(src_text, "SRC"), parse_addr(dst_text, "DST")
    if src.version != dst.version:
        raise BadArgs(f"SRC {src} and DST {dst} are not of the same family")
    return src, dst


def parse_int(text, what, low, high):
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadArgs(f"{what} '{text}' is not a number from {low} to {high}")
    return int(text)


def send_udp(src, dst, port, count):
    family = socket.AF_INET if src.version == 4 else socket.AF_INET6
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((str(src), 0))
        for _ in range(count):
            s.sendto(PAYLOAD, (str(dst), port))


def send_synfin(iface, dstmac, src, dst, count):
    import logging

    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, TCP, Ether, IPv6, sendp

    l3 = IP if src.version == 4 else IPv6
    # Distinct source ports, so that every segment is a separate packet to any observer.
    frames = [Ether(dst=dstmac) / l3(src=str(src), dst=str(dst)) /
              TCP(sport=40000 + i, dport=7, flags="SF") for i in range(count)]
    sendp(frames, iface=iface, verbose=False)


def send_tcp(src, dst, port, count):
    with socket.create_connection((str(dst), port), timeout=10,
                                  source_address=(str(src), 0)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(count):
            s.sendall(PAYLOAD)
            echoed = b""
            while len(echoed) < len(PAYLOAD):
                chunk = s.recv(len(PAYLOAD) - len(echoed))
                if not chunk:
                    raise OSError("the echo server closed the connection")
                echoed += chunk


def main(argv):
    if len(argv) == 6 and argv[1] == "udp":
        src, dst = parse_pair(argv[2], argv[3])
        send_udp(src, dst, parse_int(argv[4], "PORT", 1, 65535),
                 parse_int(argv[5], "COUNT", 1, 100000))
    elif len(argv) == 6 and argv[1] == "tcp":
        src, dst = parse_pair(argv[2], argv[3])
        send_tcp(src, dst, parse_int(argv[4], "PORT", 1, 65535),
                 parse_int(argv[5], "COUNT", 1, 100000))
    elif len(argv) == 7 and argv[1] == "synfin":
        if not MAC_RE.match(argv[3]):
            raise BadArgs(f"DSTMAC '{argv[3]}' is not a MAC address like 02:00:00:00:00:01")
        try:
            socket.if_nametoindex(argv[2])
        except OSError:
            raise BadArgs(f"IFACE '{argv[2]}' does not exist in this network namespace") from None
        src, dst = parse_pair(argv[4], argv[5])
        send_synfin(argv[2], argv[3], src, dst, parse_int(argv[6], "COUNT", 1, 100000))
    else:
        raise BadArgs(USAGE)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except BadArgs as e:
        print(f"xb_send.py: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        print(f"xb_send.py: {e.strerror or e}", file=sys.stderr)
        sys.exit(1)
