"""xb_args.py - what the test tools (xb_send.py, xb_tcp_flow.py) share for their command lines:
the parsers of addresses and numbers, and the exit convention. Bad arguments raise BadArgs;
run() turns that into one line on stderr and exit status 2.

Test support only; imported, never run.
"""
import ipaddress
import os
import sys


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


def run(main):
    """Exits with main(sys.argv): 2 and one line for BadArgs, 1 and one line for OSError."""
    name = os.path.basename(sys.argv[0])
    try:
        sys.exit(main(sys.argv))
    except BadArgs as e:
        print(f"{name}: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        print(f"{name}: {e.strerror or e}", file=sys.stderr)
        sys.exit(1)
