#!/usr/bin/python3
"""xb_maps.py - reads and writes xdpban's pinned maps for the end-to-end tests, through bpftool
only (JSON output, BTF-formatted), so a test sees exactly what an operator with bpftool sees.

  xb_maps.py pins DIR                  the pin of every map of the data path, one a line
  xb_maps.py stats DIR                 every statistic summed over CPUs: "NAME PACKETS BYTES"
  xb_maps.py ban DIR ADDR[/LEN]        the ban of a key: "COUNT REASON" ("11 errors"), or "none"
  xb_maps.py ban-length DIR ADDR[/LEN] its length, expires_ns - start_ns ("none": no ban)
  xb_maps.py live DIR bans|counts      live bans, or live counters holding errors or a dispute
  xb_maps.py counter DIR ADDR[/LEN]    the error count of a key: "COUNT", or "none"
  xb_maps.py policy DIR CIDR deny|trusted LIST_ID
                                       adds a permanent policy prefix (bpftool map update)
  xb_maps.py digest DIR FIELD...       "FIELD SHA256" of each named mmapable map's memory, read
                                       whole through mmap: equal digests, equal contents

DIR is the pin directory (e.g. /sys/fs/bpf/xdp/globals). A key is an IPv4 address (/32) or an
IPv6 prefix at the length the data path counted it with (e.g. 2001:db8:1::/64). The names of
the maps (the rows of XDPBAN_MAPS), statistics (XDPBAN_STATS), the slot layout
(include/xdpban_table.h) and policy verdicts are read from include/, never repeated here; the
ban and counter tables are searched slot by slot in the buckets bpftool shows, as an operator
reads them (docs/datapath.md, "Tables and memory"). Which buckets hold anything is read from
the table's memory (mmap): parsing a whole BTF dump takes seconds (counts alone about 10 s),
the memory a fraction of one, and a bucket of zero bytes holds no live slot. Only digest reads
nothing through bpftool, and only compares. Test support only: it never deletes anything.
Errors get one line on stderr and a non-zero exit status.
"""
import contextlib
import ctypes
import hashlib
import ipaddress
import json
import mmap
import os
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


def define_value(header, name):
    """The integer a '#define NAME value' in an include/ header stands for (simple values)."""
    text = (INCLUDE / header).read_text()
    found = re.search(rf"^#define {name}\s+\(?([0-9a-fx]+)(?:ull|u)?\s*(?:<<\s*(\d+)\))?", text,
                      re.M)
    if not found:
        raise Error(f"no {name} in {INCLUDE / header}")
    value = int(found.group(1), 0)
    return value << int(found.group(2)) if found.group(2) else value


def stat_names():
    """The statistics' names by slot: the rows of XDPBAN_STATS in xdpban_stats.h, in order."""
    text = (INCLUDE / "xdpban_stats.h").read_text()
    rows = re.findall(r"\b[VE]\(\s*[A-Z0-9_]+\s*,\s*\"([a-z0-9_]+)\"", text)
    if not rows:
        raise Error(f"no XDPBAN_STATS rows in {INCLUDE / 'xdpban_stats.h'}")
    return dict(enumerate(rows))


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


def table_formatted(pin):
    """The BTF-formatted buckets of the mmapable table at pin, through bpftool, that hold any
    byte but zero: a live slot's ctl is not zero (XDPBAN_SLOT_LIVE), so no other holds one."""
    live = enum_values("xdpban_table.h", "XDPBAN_SLOT_")["live"]
    if live == 0:
        raise Error("XDPBAN_SLOT_LIVE is 0: a bucket of zeros may hold a live slot")
    with map_memory(pin) as (mem, stride, count):
        zero = bytes(stride)
        held = [i for i in range(count) if mem[i * stride:(i + 1) * stride] != zero]
    if not held:
        return []
    # One bpftool for every lookup: a process each would cost more than the whole dump.
    cmds = "".join(f"map lookup pinned {pin} key hex {' '.join(hexbytes(struct.pack('=I', i)))}\n"
                   for i in held)
    cmd = ["bpftool", "-j", "batch", "file", "-"]
    done = subprocess.run(cmd, input=cmds, capture_output=True, text=True)
    if done.returncode != 0:
        msg = (done.stdout + done.stderr).strip().replace("\n", " ")[:300]
        raise Error(f"'{' '.join(cmd)}' with {len(held)} lookups of {pin} failed: {msg}")
    entries = [r["output"] for r in json.loads(done.stdout)]
    if entries and "formatted" not in entries[0]:
        raise Error(f"{pin} has no BTF, cannot read its fields")
    return [e["formatted"] for e in entries]


def parse_key(text):
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as e:
        raise Error(f"bad key '{text}': {e}") from None
    return net.version, net.prefixlen, list(net.network_address.packed)


def find_slot(pin, text):
    """(index of the slot, ctl, val) of the live slot holding an xdpban_key, or None."""
    version, plen, addr = parse_key(text)
    addr16 = bytes(addr + [0] * (16 - len(addr)))
    live = enum_values("xdpban_table.h", "XDPBAN_SLOT_")["live"]
    v6 = define_value("xdpban_table.h", "XDPBAN_CTL_V6")
    for e in table_formatted(pin):
        for i, slot in enumerate(e["value"]["slot"]):
            ctl = slot["ctl"]
            if ctl & 3 != live or ((ctl & v6) != 0) != (version == 6):
                continue
            # addr holds the address as the data path wrote it: 32-bit words of bytes in
            # network order, which bpftool prints as numbers of this (little-endian) host
            got = b"".join(struct.pack("<I", w) for w in slot["addr"])
            if (ctl >> 24) & 0xFF == plen and got == addr16:
                return e["key"] * len(e["value"]["slot"]) + i, ctl, slot["val"]
    return None
def cmd_pins(pin_dir):
    for pin in map_pins(pin_dir).values():
        print(pin)


def cmd_stats(pin_dir):
    names = stat_names()
    for e in dump_formatted(map_pins(pin_dir)["stats"]):
        cpus = e["values"]
        packets = sum(c["value"]["packets"] for c in cpus)
        nbytes = sum(c["value"]["bytes"] for c in cpus)
        print(names.get(e["key"], str(e["key"])), packets, nbytes)


def cmd_ban(pin_dir, key):
    reasons = {v: n for n, v in enum_values("xdpban_state.h", "XDPBAN_REASON_").items()}
    pins = map_pins(pin_dir)
    found = find_slot(pins["bans"], key)
    if found is None:
        print("none")
        return
    index, ctl, _ = found
    reason = (ctl >> 32) & 0xFF  # the slot's aux: reason, then classes
    info = bpftool_json("map", "lookup", "pinned", pins["baninfo"],
                        "key", "hex", *hexbytes(struct.pack("=I", index)))
    print(info["formatted"]["value"]["count"], reasons.get(reason, str(reason)))


def cmd_ban_length(pin_dir, key):
    pins = map_pins(pin_dir)
    found = find_slot(pins["bans"], key)
    if found is None:
        print("none")
        return
    info = bpftool_json("map", "lookup", "pinned", pins["baninfo"],
                        "key", "hex", *hexbytes(struct.pack("=I", found[0])))
    print(found[2] - info["formatted"]["value"]["start_ns"])  # val of a ban: expires_ns


def cmd_live(pin_dir, table):
    """Bans, or counters with a window (errors or a dispute; no window ends in the tests)."""
    if table not in ("bans", "counts"):
        raise Error(f"table '{table}' is not bans or counts")
    live = enum_values("xdpban_table.h", "XDPBAN_SLOT_")["live"]
    disputed = enum_values("xdpban_table.h", "XDPBAN_CTR_")["disputed"]

    def counts(slot):
        aux_flags = (slot["ctl"] >> 40) & 0xFF  # aux = hop | flags << 8 | stamp << 16
        return table == "bans" or slot["val"] & 0xFFFFFFFF or aux_flags & disputed

    print(sum(1 for e in table_formatted(map_pins(pin_dir)[table])
              for slot in e["value"]["slot"] if slot["ctl"] & 3 == live and counts(slot)))


def cmd_counter(pin_dir, key):
    found = find_slot(map_pins(pin_dir)["counts"], key)
    print("none" if found is None else found[2] & 0xFFFFFFFF)


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


BPF_OBJ_GET, BPF_OBJ_GET_INFO_BY_FD, BPF_F_MMAPABLE = 7, 15, 1 << 10
SYS_BPF = {"x86_64": 321, "aarch64": 280}  # the bpf(2) syscall's number
LIBC = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    machine = os.uname().machine
    if machine not in SYS_BPF:
        raise Error(f"digest: no bpf(2) syscall number known for {machine}")
    ret = LIBC.syscall(SYS_BPF[machine], cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if ret < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return ret


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class MapInfo(ctypes.Structure):  # the head of struct bpf_map_info
    _fields_ = [("type", ctypes.c_uint32), ("id", ctypes.c_uint32),
                ("key_size", ctypes.c_uint32), ("value_size", ctypes.c_uint32),
                ("max_entries", ctypes.c_uint32), ("map_flags", ctypes.c_uint32)]


class InfoByFd(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32),
                ("info", ctypes.c_uint64)]


def cmd_digest(pin_dir, *fields):
    pins = map_pins(pin_dir)
    for field in fields:
        if field not in pins:
            raise Error(f"no map '{field}' in XDPBAN_MAPS")
        with map_memory(pins[field]) as (mem, _, _):
            print(field, hashlib.sha256(mem).hexdigest())


@contextlib.contextmanager
def map_memory(pin):
    """(memory, stride, elements) of the mmapable array map at pin, read-only."""
    path = ctypes.create_string_buffer(pin.encode())
    fd = bpf(BPF_OBJ_GET, ObjGet(pathname=ctypes.addressof(path)))
    try:
        info = MapInfo()
        bpf(BPF_OBJ_GET_INFO_BY_FD, InfoByFd(bpf_fd=fd, info_len=ctypes.sizeof(info),
                                             info=ctypes.addressof(info)))
        if not info.map_flags & BPF_F_MMAPABLE:
            raise Error(f"{pin} is not mmapable: compare its bpftool map dump")
        stride = (info.value_size + 7) // 8 * 8  # array elements, 8-aligned
        size = stride * info.max_entries
        size = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
        with mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ) as mem:
            yield mem, stride, info.max_entries
    finally:
        os.close(fd)


COMMANDS = {"pins": (cmd_pins, 1), "stats": (cmd_stats, 1), "ban": (cmd_ban, 2),
            "ban-length": (cmd_ban_length, 2), "live": (cmd_live, 2),
            "counter": (cmd_counter, 2), "policy": (cmd_policy, 4), "digest": (cmd_digest, 2)}
VARIADIC = {"digest"}  # these take at least their count of arguments


def main(argv):
    cmd, args = (argv[1], len(argv) - 2) if len(argv) >= 2 else (None, 0)
    if cmd not in COMMANDS or args < COMMANDS[cmd][1] or \
            (cmd not in VARIADIC and args != COMMANDS[cmd][1]):
        raise Error("usage: xb_maps.py pins DIR | stats DIR | ban DIR KEY | ban-length DIR KEY | "
                    "live DIR bans|counts | counter DIR KEY | policy DIR CIDR deny|trusted LIST_ID"
                    " | digest DIR FIELD...")
    COMMANDS[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Error, OSError, KeyError, ValueError) as e:
        print(f"xb_maps.py: {e}", file=sys.stderr)
        sys.exit(1)
