"""The flash store (mémoire flash): the last rotor direction, spin counter, spin in progress,
last games and learnt figures, kept across power loss.

One small record, written whole: JSON behind a header line `CYL<version> <crc32 hex> <length>`.
Two files take the saves in turn (the record's path and `<path>.b`), each record numbered
(`seq`, which the store stamps into it); loading takes the intact record with the highest
number. littlefs commits a file's new contents at its close, so a power cut during a save leaves
that file as it was: the newest record is either the one being written or the one before. A
record whose CRC or length does not match (flash damage) is refused, and the other file holds
the record before it. (No rename: on littlefs a rename rewrites the directory, several times
the cost of a file written in place, at every launch and result.)

A flash written by the earlier scheme (the record, `.tmp` and `.bak`, no `<path>.b` yet) is read
as it was; its record counts as number 0, so the first save goes to `<path>.b` and leaves it.
"""

import json
import os
from binascii import crc32

VERSION = 1


def encode(record):
    body = json.dumps(record).encode()
    head = ("CYL%d %08x %d\n" % (VERSION, crc32(body) & 0xFFFFFFFF, len(body))).encode()
    return head + body


def decode(data):
    """The record from the file's bytes, or None when it is not a whole, intact record."""
    nl = data.find(b"\n")
    if nl < 0:
        return None
    parts = data[:nl].split(b" ")
    if len(parts) != 3 or parts[0] != ("CYL%d" % VERSION).encode():
        return None
    body = data[nl + 1:]
    try:
        crc = int(parts[1], 16)
        n = int(parts[2])
    except ValueError:
        return None
    if n != len(body) or (crc32(body) & 0xFFFFFFFF) != crc:
        return None
    try:
        rec = json.loads(body)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


class FlashStore:
    """`load()` -> dict or None, `save(dict)`: the controller's store on the Pico's littlefs.

    `fs` is the `os` module (or a stand-in in tests); paths are plain strings.
    """

    def __init__(self, path="/cylindre.rec", fs=None):
        self.path = path
        self.other = path + ".b"
        self.tmp = path + ".tmp"            # the earlier scheme's files (read only)
        self.bak = path + ".bak"
        self.fs = fs if fs is not None else os
        # files are opened with the built-in open unless a stand-in file system brings its own
        self._open = open if fs is None else getattr(fs, "open", open)
        self.seq = None                     # the newest record's number (None: not loaded yet)

    def _read(self, path):
        try:
            f = self._open(path, "rb")
        except OSError:
            return None
        try:
            return f.read()
        finally:
            f.close()

    def _record(self, path):
        data = self._read(path)
        return decode(data) if data is not None else None

    def load(self):
        """The newest intact record, or None."""
        best = None
        found = False
        for path in (self.path, self.other):
            data = self._read(path)
            if data is None:
                continue
            if path == self.other:
                found = True
            rec = decode(data)
            if rec is not None and (best is None or _seq(rec) > _seq(best)):
                best = rec
        if best is None and not found:
            # the earlier scheme: a complete temporary file (the power went between its two
            # renames), else the previous record
            for path in (self.tmp, self.bak):
                best = self._record(path)
                if best is not None:
                    break
        self.seq = _seq(best) if best is not None else 0
        return best

    def save(self, record):
        """Write `record` (numbered: its `seq` is set) over the older of the two files."""
        if self.seq is None:
            self.load()
        n = (self.seq or 0) + 1
        record["seq"] = n
        f = self._open(self.other if n & 1 else self.path, "wb")
        try:
            f.write(encode(record))
            fl = getattr(f, "flush", None)
            if fl is not None:
                fl()
        finally:
            f.close()
        self.seq = n


def _seq(rec):
    n = rec.get("seq", 0)
    return n if isinstance(n, int) and not isinstance(n, bool) else 0
