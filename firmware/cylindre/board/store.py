"""The flash store (mémoire flash): the last rotor direction, spin counter, spin in progress,
last games and learnt figures, kept across power loss.

One small record, written whole: JSON behind a header line `CYL<version> <crc32 hex> <length>`.
A save writes a temporary file, flushes it, then renames it over the record: on littlefs the
rename is atomic, so a power cut at any instant leaves either the old record or the new one,
never a mix. A record whose CRC or length does not match (flash damage) is refused on load,
and the previous good record is kept beside it as `.bak` for that case; a power cut between the
two renames leaves the new record whole in the temporary file, which load() then takes.
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
        self.tmp = path + ".tmp"
        self.bak = path + ".bak"
        self.fs = fs if fs is not None else os
        # files are opened with the built-in open unless a stand-in file system brings its own
        self._open = open if fs is None else getattr(fs, "open", open)

    def _read(self, path):
        try:
            f = self._open(path, "rb")
        except OSError:
            return None
        try:
            return f.read()
        finally:
            f.close()

    def load(self):
        """The newest intact record: the record itself; else a complete temporary file (the
        power went between the two renames of a save); else the previous record."""
        for path in (self.path, self.tmp, self.bak):
            data = self._read(path)
            rec = decode(data) if data is not None else None
            if rec is not None:
                return rec
        return None

    def save(self, record):
        data = encode(record)
        f = self._open(self.tmp, "wb")
        try:
            f.write(data)
            fl = getattr(f, "flush", None)
            if fl is not None:
                fl()
        finally:
            f.close()
        # keep the current good record as the backup, then move the new one in place
        try:
            self.fs.rename(self.path, self.bak)
        except OSError:
            pass
        self.fs.rename(self.tmp, self.path)
