#!/usr/bin/python3
"""xb_tcp_echo.py - a TCP echo server for the xdpban end-to-end tests and benchmarks: the peer
of `xb_send.py tcp`, whose established connection lets the data path verify a source's hop
count (docs/datapath.md, section 8, "Learning").

  xb_tcp_echo.py ADDR PORT READY

Binds ADDR:PORT, creates the file READY once it listens, then serves one connection at a time,
sending back every byte it reads, until it is killed. Bad arguments get one line on stderr and
exit status 2; a port it cannot bind, exit status 1.
"""
import ipaddress
import socket
import socketserver
import sys


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while data := self.request.recv(4096):
            self.request.sendall(data)


def server_for(addr, port):
    class Server(socketserver.TCPServer):
        address_family = socket.AF_INET if addr.version == 4 else socket.AF_INET6
        allow_reuse_address = True

    return Server((str(addr), port), Echo)


def main(argv):
    if len(argv) != 4 or not argv[2].isdigit() or not 1 <= int(argv[2]) <= 65535:
        print("usage: xb_tcp_echo.py ADDR PORT(1-65535) READY", file=sys.stderr)
        return 2
    try:
        addr = ipaddress.ip_address(argv[1])
    except ValueError as e:
        print(f"xb_tcp_echo.py: {e}", file=sys.stderr)
        return 2
    try:
        server = server_for(addr, int(argv[2]))
    except OSError as e:
        print(f"xb_tcp_echo.py: {argv[1]} port {argv[2]}: {e.strerror or e}", file=sys.stderr)
        return 1
    open(argv[3], "w").close()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
