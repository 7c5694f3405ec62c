#!/usr/bin/python3
"""xb_maps.py - reads and writes xdpban's pinned maps for the end-to-end tests, through bpftool
only (JSON output, BTF-formatted), so a test sees exactly what an operator with bpftool sees.

  xb_maps.py pins DIR                  the pin of every map of the data path, one a line
  xb_maps.py stats DIR                 every statistic summed over CPUs: "NAME PACKETS BYTES"
  xb_maps.py ban DIR ADDR[/LEN]        the ban of a key: "COUNT REASON" ("11 errors"), or "none"
  xb_maps.py counter DIR ADDR[/LEN]    the error count of a key: "COUNT", or "none"
  xb_maps.py policy DIR CIDR deny|trusted LIST_ID
                                       adds a permanent policy prefix (bpftool map update)

DIR is the pin directory (e.g. /sys/fs/bpf/xdp/globals). A key is an IPv4 address (/32) or an
IPv6 prefix at the length the data path counted it with (e.g. 2001:db8:1::/64). The names of
the maps (the rows of XDPBAN_MAPS), statistics and policy verdicts are read from include/,
never repeated here. Test support only:
it never deletes anything. Errors get one line on stderr and a non-zero exit status.
"""
import ipaddress
import json
import pathlib
import re
import struct
import subprocess
import sys

INCLUDE = pathlib.Path(__file__).resolve().parents[2] / "include"
POLICY_VALUE = struct.Struct("=IIQ")  # struct xdpban_policy: verdict, list_id, expires_ns


class Error(Exception):
    pass


def enum_values(header, prefix):
    """{'name': value} of the 'PREFIXNAME = N' enumerators in an include/ header."""
    text = (INCLUDE / header).read_text()
    found = re.findall(rf"\b{prefix}([A-Z][A-Z0-9_]*)\s*=\s*(\d+)", text)
    if not found:
        raise Error(f"no {prefix}* values in {INCLUDE / header}")
    return {name.lower(): int(value) for name, value in found}


def map_pins(pin_dir):
    """{'field': 'DIR/name'}: the pin of every map in the XDPBAN_MAPS rows of xdpban_maps.h,
    by its field column (the fd's name in struct xb_maps)."""
    text = (INCLUDE / "xdpban_maps.h").read_text()
    body = re.search(r"^#define XDPBAN_MAPS\(X\)((?:.*\\\n)*.*)", text, re.M)
    if not body:
        raise Error(f"no XDPBAN_MAPS in {INCLUDE / 'xdpban_maps.h'}")
    rows = re.findall(r"\bX\(\s*(\w+)\s*,\s*(\w+)\s*,", re.sub(r"/\*.*?\*/", "", body.group(1)))
    return {field: f"{pin_dir}/{name}" for name, field in rows}


def bpftool_json(*args):
    cmd = ["bpftool", "-j", *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        msg = (done.stdout + done.stderr).strip().replace("\n", " ")
        raise Error(f"'{' '.join(cmd)}' failed: {msg}")
    return json.loads(done.stdout) if done.stdout.strip() else None


def dump_formatted(pin):
    entries = bpftool_json("map", "dump", "pinned", pin)
    if entries and "formatted" not in entries[0]:
        raise Error(f"{pin} has no BTF, cannot read its fields")
    return [e["formatted"] for e in entries]


def parse_key(text):
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as e:
        raise Error(f"bad key '{text}': {e}") from None
    return net.version, net.prefixlen, list(net.network_address.packed)


def find_entry(pin, text):
    """The formatted value stored under an xdpban_key, or None."""
    version, plen, addr = parse_key(text)
    addr16 = addr + [0] * (16 - len(addr))
    for e in dump_formatted(pin):
        k = e["key"]
        if k["family"] == version and k["prefixlen"] == plen and k["addr"] == addr16:
            return e["value"]
    return None


def cmd_pins(pin_dir):
    for pin in map_pins(pin_dir).values():
        print(pin)


def cmd_stats(pin_dir):
    names = {v: n for n, v in enum_values("xdpban_stats.h", "XDPBAN_STAT_").items()}
    for e in dump_formatted(map_pins(pin_dir)["stats"]):
        cpus = e["values"]
        packets = sum(c["value"]["packets"] for c in cpus)
        nbytes = sum(c["value"]["bytes"] for c in cpus)
        print(names.get(e["key"], str(e["key"])), packets, nbytes)


def cmd_ban(pin_dir, key):
    reasons = {v: n for n, v in enum_values("xdpban_state.h", "XDPBAN_REASON_").items()}
    ban = find_entry(map_pins(pin_dir)["bans"], key)
    if ban is None:
        print("none")
    else:
        print(ban["count"], reasons.get(ban["reason"], str(ban["reason"])))


def cmd_counter(pin_dir, key):
    counter = find_entry(map_pins(pin_dir)["counts"], key)
    print("none" if counter is None else counter["state"] & 0xFFFFFFFF)


def hexbytes(data):
    return [f"{b:02x}" for b in data]


def cmd_policy(pin_dir, cidr, verdict_name, list_id):
    verdicts = enum_values("xdpban_policy.h", "XDPBAN_POLICY_")
    if verdict_name not in ("deny", "trusted"):
        raise Error(f"verdict '{verdict_name}' is not deny or trusted")
    if not list_id.isdigit() or int(list_id) > 0xFFFFFFFE:
        raise Error(f"LIST_ID '{list_id}' is not a number from 0 to 4294967294")
    version, plen, addr = parse_key(cidr)
    pin = map_pins(pin_dir)[f"policy{version}"]
    size = bpftool_json("map", "show", "pinned", pin)["bytes_value"]
    if size != POLICY_VALUE.size:
        raise Error(f"{pin} values are {size} bytes, struct xdpban_policy is {POLICY_VALUE.size}")
    key = struct.pack("=I", plen) + bytes(addr)
    value = POLICY_VALUE.pack(verdicts[verdict_name], int(list_id), 0)
    bpftool_json("map", "update", "pinned", pin,
                 "key", "hex", *hexbytes(key), "value", "hex", *hexbytes(value))


COMMANDS = {"pins": (cmd_pins, 1), "stats": (cmd_stats, 1), "ban": (cmd_ban, 2),
            "counter": (cmd_counter, 2), "policy": (cmd_policy, 4)}


def main(argv):
    if len(argv) < 2 or argv[1] not in COMMANDS or len(argv) - 2 != COMMANDS[argv[1]][1]:
        raise Error("usage: xb_maps.py pins DIR | stats DIR | ban DIR KEY | counter DIR KEY | "
                    "policy DIR CIDR deny|trusted LIST_ID")
    COMMANDS[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Error, OSError, KeyError, ValueError) as e:
        print(f"xb_maps.py: {e}", file=sys.stderr)
        sys.exit(1)
