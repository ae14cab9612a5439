"""The flash store: the last direction, spin counter and spin in progress survive a power cut
at any instant of a save (write a temporary file, then an atomic rename), and a damaged record
is refused (version, length and CRC inside), falling back to the previous good one."""

from __future__ import annotations

import os

import pytest

from cylindre.board.store import FlashStore, decode, encode
from cylindre.spin.controller import Controller


class PowerCut(Exception):
    pass


class CutFs:
    """A file system that loses power after `budget` bytes written or at the n-th rename."""

    def __init__(self, root, budget=None, rename_cut=None):
        self.root = root
        self.budget = budget
        self.rename_cut = rename_cut
        self.renames = 0

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

    def rename(self, a, b):
        self.renames += 1
        if self.rename_cut is not None and self.renames >= self.rename_cut:
            raise PowerCut()
        os.replace(os.path.join(self.root, a.lstrip("/")), os.path.join(self.root, b.lstrip("/")))


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


def test_power_cut_at_every_byte_of_a_save_keeps_a_whole_record(tmp_path):
    FlashStore("/rec", fs=CutFs(str(tmp_path))).save(OLD)
    size = len(encode(NEW))
    for budget in range(0, size + 1, 7):
        fs = CutFs(str(tmp_path), budget=budget)
        try:
            FlashStore("/rec", fs=fs).save(NEW)
        except PowerCut:
            pass
        got = FlashStore("/rec", fs=CutFs(str(tmp_path))).load()
        assert got in (OLD, NEW), budget
        FlashStore("/rec", fs=CutFs(str(tmp_path))).save(OLD)


@pytest.mark.parametrize("cut", [1, 2])
def test_power_cut_at_either_rename_keeps_a_whole_record(tmp_path, cut):
    FlashStore("/rec", fs=CutFs(str(tmp_path))).save(OLD)
    with pytest.raises(PowerCut):
        FlashStore("/rec", fs=CutFs(str(tmp_path), rename_cut=cut)).save(NEW)
    got = FlashStore("/rec", fs=CutFs(str(tmp_path))).load()
    assert got in (OLD, NEW)
    if cut == 2:
        assert got == NEW        # the new record was whole in the temporary file


def test_damaged_record_falls_back_to_the_previous_one(tmp_path):
    st = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    st.save(OLD)
    st.save(NEW)
    p = tmp_path / "rec"
    data = bytearray(p.read_bytes())
    data[-2] ^= 0x40
    p.write_bytes(bytes(data))
    assert st.load() == OLD
    (tmp_path / "rec.bak").unlink()
    assert st.load() is None                   # nothing trustworthy: the controller starts fresh


def test_the_controller_on_the_flash_store_remembers_across_restarts(tmp_path):
    store = FlashStore("/rec", fs=CutFs(str(tmp_path)))
    store.save(NEW)                             # spin 42 was running when the power went
    events = []
    ctl = Controller({"cpr": 1024, "index_offset_deg": 0.0, "ball_sensors_deg": [0.0, 6.0],
                      "pocket_sensors_deg": [180.0]}, events.append, store=store)
    ctl.boot(0, reset_cause="power")
    assert events[0]["interrupted"] == 42 and events[0]["spin"] == 42
    assert [e["reason"] for e in events if e["ev"] == "void"] == ["restart"]
    rec = FlashStore("/rec", fs=CutFs(str(tmp_path))).load()
    assert rec["in_spin"] is None and rec["dir"] == 1 and rec["spin"] == 42
