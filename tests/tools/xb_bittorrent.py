#!/usr/bin/python3
"""xb_bittorrent.py - the real BitTorrent clients of tests/e2e/e2e_tracker.sh, on Debian's
python3-libtorrent (libtorrent-rasterbar), run inside a client namespace.

  xb_bittorrent.py make DIR TRACKER COUNT
      writes COUNT torrents DIR/NN.torrent, v1 only, each of one 64 KiB file of its own
      (DIR/seed/NN/xdpban-e2e-NN.bin) and with TRACKER (udp://ADDR:PORT/announce) as its one
      tracker; prints their info hashes in hex, one a line: what a whitelisting tracker
      (Debian's opentracker) must be given.
  xb_bittorrent.py seed ADDR PORT DIR READY
      a session on ADDR:PORT seeding every torrent of DIR; once each has its data checked and
      a reply from the tracker, creates READY; then runs until it is killed.
  xb_bittorrent.py leech ADDR PORT DIR ROUNDS RESULT
      a session on ADDR:PORT downloading every torrent of DIR into DIR/leech/NN: each torrent
      is announced when added (started) and when whole (completed), then ROUNDS times more
      (force_reannounce, each round once every torrent has its reply to the last). Then
      writes RESULT, one JSON object: "torrents", "replies" (tracker replies) and
      "replies_min" (the fewest one torrent had), "errors" (tracker errors and warnings, as
      text), "peers_min" (the fewest peers a torrent's replies ever held at most), "finished"
      (torrents downloaded whole and verified) and "timed_out". Exit status 0 if it wrote
      RESULT.

libtorrent announces a torrent at most once a second, so the announces are many because the
torrents are. DHT, local peer discovery, UPnP and NAT-PMP are off: the tracker is the only way
a client finds a peer, so a finished download proves the tracker's replies held the seeder.
Every wait is bounded (DEADLINE_S). Test support only. Bad arguments get one line on stderr
and exit status 2.
"""
import glob
import hashlib
import json
import os
import time

import libtorrent as lt
from xb_args import BadArgs, parse_addr, parse_int, run

USAGE = ("usage: xb_bittorrent.py make DIR TRACKER COUNT | seed ADDR PORT DIR READY | "
         "leech ADDR PORT DIR ROUNDS RESULT")
SIZE = 64 * 1024
PIECE = 16 * 1024
DEADLINE_S = 40.0


def make(d, tracker, count):
    for i in range(count):
        seed = os.path.join(d, "seed", f"{i:02d}")
        os.makedirs(seed, exist_ok=True)
        path = os.path.join(seed, f"xdpban-e2e-{i:02d}.bin")
        # Incompressible content of its own: a hash chain from the torrent's number.
        block, data = f"xdpban-{i}".encode(), bytearray()
        while len(data) < SIZE:
            block = hashlib.sha256(block).digest()
            data += block
        with open(path, "wb") as f:
            f.write(data[:SIZE])
        fs = lt.file_storage()
        lt.add_files(fs, path)
        ct = lt.create_torrent(fs, PIECE, flags=lt.create_torrent.v1_only)
        ct.add_tracker(tracker)
        lt.set_piece_hashes(ct, seed)
        torrent = os.path.join(d, f"{i:02d}.torrent")
        with open(torrent, "wb") as f:
            f.write(lt.bencode(ct.generate()))
        print(lt.torrent_info(torrent).info_hashes().v1)


def session(addr, port):
    host = f"[{addr}]" if addr.version == 6 else str(addr)
    return lt.session({
        "listen_interfaces": f"{host}:{port}",
        "outgoing_interfaces": str(addr),
        "enable_dht": False,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        # Peers over TCP only: uTP shares the UDP socket with the tracker's replies, and
        # between two sessions on one host it fills that socket's buffer until the kernel
        # drops a reply (UdpRcvbufErrors), which libtorrent then reports as a timed out
        # announce.
        "enable_outgoing_utp": False,
        "enable_incoming_utp": False,
        # Every torrent active at once: queued ones would not announce.
        "active_downloads": -1,
        "active_seeds": -1,
        "active_limit": -1,
        "active_checking": -1,
        "alert_mask": lt.alert.category_t.status_notification
        | lt.alert.category_t.tracker_notification
        | lt.alert.category_t.error_notification,
    })


def add_all(ses, d, save):
    """The torrents of d, added to ses with their data in d/save/NN: {name: handle}."""
    handles = {}
    for torrent in sorted(glob.glob(os.path.join(d, "*.torrent"))):
        ti = lt.torrent_info(torrent)
        nn = os.path.basename(torrent)[:2]
        handles[ti.name()] = ses.add_torrent({"ti": ti, "save_path": os.path.join(d, save, nn)})
    return handles


def alerts(ses, wait_s=0.1):
    ses.wait_for_alert(int(wait_s * 1000))
    return ses.pop_alerts()


def seed(addr, port, d, ready):
    ses = session(addr, port)
    handles = add_all(ses, d, "seed")
    replied = set()
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        for a in alerts(ses):
            if isinstance(a, lt.tracker_reply_alert):
                replied.add(a.torrent_name)
        if len(replied) == len(handles) and all(h.status().is_seeding for h in handles.values()):
            open(ready, "w").close()
            break
    else:
        return 1
    while True:
        alerts(ses, 1.0)


def leech(addr, port, d, rounds, result):
    ses = session(addr, port)
    handles = add_all(ses, d, "leech")
    replies = {name: 0 for name in handles}
    peers = {name: 0 for name in handles}
    errors = []
    deadline = time.monotonic() + DEADLINE_S

    def pump():
        for a in alerts(ses):
            if isinstance(a, lt.tracker_reply_alert):
                replies[a.torrent_name] += 1
                peers[a.torrent_name] = max(peers[a.torrent_name], a.num_peers)
            elif isinstance(a, (lt.tracker_error_alert, lt.tracker_warning_alert)):
                errors.append(a.message())
        return time.monotonic() < deadline

    # The downloads: a torrent's first announce (started) finds the seeder, and once it is
    # whole libtorrent announces it again (completed).
    while pump():
        if min(replies.values()) >= 2 and all(h.status().is_finished for h in handles.values()):
            break
    # Then the rounds, each once every torrent has its reply to the last: libtorrent is never
    # asked for an announce while one of the same torrent is still in flight.
    for _ in range(rounds):
        want = {name: n + 1 for name, n in replies.items()}
        for h in handles.values():
            h.force_reannounce(0, -1, lt.reannounce_flags_t.ignore_min_interval)
        while pump() and any(replies[name] < want[name] for name in handles):
            pass
    finished = sum(1 for h in handles.values()
                   if h.status().is_finished and h.status().total_wanted_done == SIZE)
    with open(result, "w") as f:
        json.dump({"torrents": len(handles), "replies": sum(replies.values()),
                   "replies_min": min(replies.values()), "errors": errors[:5],
                   "peers_min": min(peers.values()), "finished": finished,
                   "timed_out": time.monotonic() >= deadline}, f)
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "make":
        make(argv[2], argv[3], parse_int(argv[4], "COUNT", 1, 99))
        return 0
    if len(argv) == 6 and argv[1] == "seed":
        return seed(parse_addr(argv[2], "ADDR"), parse_int(argv[3], "PORT", 1, 65535),
                    argv[4], argv[5])
    if len(argv) == 7 and argv[1] == "leech":
        return leech(parse_addr(argv[2], "ADDR"), parse_int(argv[3], "PORT", 1, 65535),
                     argv[4], parse_int(argv[5], "ROUNDS", 1, 100), argv[6])
    raise BadArgs(USAGE)


if __name__ == "__main__":
    run(main)
