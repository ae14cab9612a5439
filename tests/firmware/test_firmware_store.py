"""The flash store: the last direction, spin counter and spin in progress survive a power cut
at any instant of a save (two files written in turn, each record numbered), and a damaged
record is refused (version, length and CRC inside), falling back to the previous good one; a
flash of the earlier scheme (temporary file, renames, `.bak`) is still read."""

from __future__ import annotations

import os

import pytest

from cylindre.board.store import FlashStore, decode, encode
from cylindre.spin.controller import Controller


class PowerCut(Exception):
    pass


class CutFs:
    """A file system that loses power after `budget` bytes written."""

    def __init__(self, root, budget=None):
        self.root = root
        self.budget = budget

    def open(self, path, mode):
        fs = self

        f = open(os.path.join(self.root, path.lstrip("/")), mode)
        if "w" not in mode:
            return f

        class W:
            def write(self, data):
                if fs.budget is not None:
                    if len(data) > fs.budget:
                        f.write(data[:fs.budget])
                        f.close()
                        raise PowerCut()
                    fs.budget -= len(data)
                return f.write(data)

            def flush(self):
                f.flush()

            def close(self):
                f.close()

        return W()


OLD = {"v": 1, "spin": 41, "dir": 1, "in_spin": None, "last": 17, "hist": [[41, 17, 15, 1, -1]]}
NEW = {"v": 1, "spin": 42, "dir": 1, "in_spin": 42, "last": 17, "hist": [[41, 17, 15, 1, -1]]}


def test_round_trip_and_damage_detection():
    data = encode(OLD)
    assert decode(data) == OLD
    assert decode(data[:-1]) is None                      # truncated
    flipped = bytearray(data)
    flipped[-3] ^= 0x01
    assert decode(bytes(flipped)) is None                 # one bit of flash gone
    assert decode(b"CYL9 " + data[5:]) is None            # another version
    assert decode(b"") is None and decode(b"garbage\n{}") is None


def _body(rec):
    """The record as the controller gave it (the store adds its number, `seq`)."""
    return None if rec is None else {k: v for k, v in rec.items() if k != "seq"}


def test_power_cut_at_every_byte_of_a_save_keeps_a_whole_record(tmp_path):
    """(CutFs truncates at open: harsher than littlefs, which keeps a file's old contents until
    its close.)"""
    FlashStore("/rec", fs=CutFs(str(tmp_path))).save(dict(OLD))
    size = len(encode(dict(NEW, seq=99)))
    for budget in range(0, size + 1, 7):
        fs = CutFs(str(tmp_path), budget=budget)
        try:
            FlashStore("/rec", fs=fs).save(dict(NEW))
        except PowerCut:
            pass
        got = FlashStore("/rec", fs=CutFs(str(tmp_path))).load()
        assert _body(got) in (OLD, NEW), budget
        FlashStore("/rec", fs=CutFs(str(tmp_path))).save(dict(OLD))


def test_saves_go_to_the_two_files_in_turn_and_the_newest_wins(tmp_path):
    st = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    assert st.load() is None
    for spin in range(1, 6):
        st.save(dict(OLD, spin=spin))
        assert FlashStore("/rec", fs=CutFs(str(tmp_path))).load()["spin"] == spin
    a = decode((tmp_path / "rec").read_bytes())
    b = decode((tmp_path / "rec.b").read_bytes())
    assert (a["seq"], a["spin"], b["seq"], b["spin"]) == (4, 4, 5, 5)
    assert not (tmp_path / "rec.tmp").exists() and not (tmp_path / "rec.bak").exists()


def test_damaged_record_falls_back_to_the_previous_one(tmp_path):
    st = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    st.save(dict(OLD))
    st.save(dict(NEW))
    p = tmp_path / "rec"                        # the second save's file
    data = bytearray(p.read_bytes())
    data[-2] ^= 0x40
    p.write_bytes(bytes(data))
    assert _body(st.load()) == OLD
    st.save(dict(NEW, spin=43))                 # over the damaged one: the good one is kept
    assert st.load()["spin"] == 43 and _body(decode((tmp_path / "rec.b").read_bytes())) == OLD
    (tmp_path / "rec.b").unlink()
    p.write_bytes(bytes(data))
    assert st.load() is None                   # nothing trustworthy: the controller starts fresh


@pytest.mark.parametrize("files", [("rec",), ("rec.tmp", "rec.bak"), ("rec.bak",)])
def test_a_flash_of_the_earlier_scheme_is_read_and_its_first_save_leaves_it(tmp_path, files):
    """The earlier firmware wrote `.tmp`, then renamed the record to `.bak` and `.tmp` to the
    record: a power cut left the newest in the record, else in `.tmp`, else only `.bak`."""
    newest = NEW if files[0] != "rec.bak" else OLD
    for name in files:
        (tmp_path / name).write_bytes(encode(newest if name == files[0] else OLD))
    st = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    assert st.load() == newest
    st.save(dict(newest, spin=50))
    assert (tmp_path / "rec.b").exists() and st.load()["spin"] == 50
    if files == ("rec",):
        assert decode((tmp_path / "rec").read_bytes()) == newest       # left as it was


def test_the_controller_on_the_flash_store_remembers_across_restarts(tmp_path):
    store = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    store.save(NEW)                             # spin 42 was running when the power went
    events = []
    ctl = Controller({"cpr": 1024, "index_offset_deg": 0.0, "ball_sensors_deg": [0.0, 6.0],
                      "pocket_sensors_deg": [180.0]}, events.append, store=store)
    ctl.boot(0, reset_cause="power")
    assert events[0]["interrupted"] == 42 and events[0]["spin"] == 42
    # no ball found at rest after the restart, in the longest wait for a result: void (restart)
    for t in range(0, 30_500_001, 500_000):
        ctl.tick(t)
    assert [e["reason"] for e in events if e["ev"] == "void"] == ["restart"]
    rec = FlashStore("/rec", fs=CutFs(str(tmp_path))).load()
    assert rec["in_spin"] is None and rec["dir"] == 1 and rec["spin"] == 42
