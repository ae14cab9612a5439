"""Status frames (two a second, forever) move from rows into compressed blocks without losing a
byte: every frame received stays in the journal, in order, with its receipt time."""

import json

from cylindre.link import frame as fr, status
from cylindre.link.mac import Hmac
from host_tools.table.journal.store import Journal, pack_statuses, unpack_statuses

KEY = bytes(range(32))
NW, NH = b"\xd0" * 8, b"\xa0" * 8


def status_frame(seq, t_ms, spin=12):
    body = {"ev": "status", "t": t_ms * 1000, "state": "idle", "spin": spin, "rotor_rpm_x10": 183,
            "rotor_dir": -1, "sensors": {"Z": "ok", "BALL0": "ok", "BALL1": "ok", "POCKET0": "ok", "VOID": "ok"},
            "last": 17, "table_open": True}
    return fr.build(Hmac(KEY), fr.STATUS, seq, 0, status.encode(body, t_ms, seq, None), NW, NH)


def fill(j, n, t0=1_000_000.0, every=7):
    """n status frames 0.5 s apart, with an event frame after every `every`; returns what was put."""
    put = []
    with j.tx():
        for i in range(n):
            raw = status_frame(i + 1, i * 500)
            at = t0 + i * 0.5 + (i % 3) * 1e-6
            fid = j.db.execute("INSERT INTO frames (at, wheel, kind, ftype, seq, raw) VALUES (?,?,?,?,?,?)",
                               (at, "T1", "status", "S", i + 1, raw)).lastrowid
            put.append((fid, at, raw))
            if i % every == 0:
                j.db.execute("INSERT INTO frames (at, wheel, kind, ftype, seq, raw) VALUES (?,?,?,?,?,?)",
                             (at, "T1", "event", "E", i, b"event bytes"))
    return put


def test_pack_round_trip_is_exact():
    frames = [(5, 1.5, b""), (9, 1.25, b"\x00\xff" * 300), (10, 1763712000.123456, b"x"), (3, 0.0, b"y")]
    back = unpack_statuses(pack_statuses(frames))
    assert [(i, raw) for i, _, raw in back] == [(i, raw) for i, _, raw in frames]
    assert all(abs(a - b) < 1e-6 for (_, a, _), (_, b, _) in zip(back, frames))


def test_old_statuses_move_into_blocks_and_read_back_byte_for_byte(tmp_path):
    j = Journal(tmp_path / "j.sqlite")
    put = fill(j, 3000)
    raw_bytes = sum(len(r) for _, _, r in put)
    now = put[-1][1] + 1.0
    moved = []
    while (k := j.compact_statuses(older_than_s=600, block=1200, now=now)):
        moved.append(k)
    assert moved == [1200]                      # only full blocks of frames over 10 minutes old
    left = j.one("SELECT COUNT(*) AS n FROM frames WHERE kind='status'")["n"]
    assert left == 1800
    old = sum(1 for _, at, _ in put if at < now - 600)
    assert j.compact_statuses(older_than_s=600, now=now, partial=True) == old - 1200    # the rest over 600 s
    assert j.one("SELECT COUNT(*) AS n FROM frames WHERE kind='event'")["n"] == len(range(0, 3000, 7))
    got = j.statuses()
    assert [(g["id"], g["raw"]) for g in got] == [(i, r) for i, _, r in put]
    assert all(abs(g["at"] - at) < 1e-6 and g["wheel"] == "T1" for g, (_, at, _) in zip(got, put))
    for g in got[::500]:                        # still authentic frames of that session
        f = fr.parse(g["raw"][:-1] if g["raw"].endswith(b"\x00") else g["raw"])
        assert f.ftype == fr.STATUS and f.verify(Hmac(KEY), NW, NH)
    packed = sum(r["n"] for r in j.query("SELECT LENGTH(data) AS n FROM status_blocks"))
    # binary statuses: each keeps its MAC (32 random bytes) and CRC, the rest packs away
    assert packed * 2 < sum(len(r) for _, _, r in put[:2400 - 1]) and packed < raw_bytes
    window = j.statuses(since=put[100][1], until=put[2999][1])
    assert [g["id"] for g in window] == [i for i, _, _ in put[100:3000]]


def test_recent_statuses_and_other_frames_are_left_alone(tmp_path):
    j = Journal(tmp_path / "j.sqlite")
    put = fill(j, 1500)
    assert j.compact_statuses(older_than_s=600, block=1200, now=put[-1][1] + 1) == 0   # 1300 s: not 1200 old ones
    assert j.compact_statuses(older_than_s=600, block=1200, now=put[-1][1] + 700) == 1200
    assert [g["id"] for g in j.statuses()] == [i for i, _, _ in put]


def test_dump_statuses_prints_every_frame_with_its_status(tmp_path, capsys):
    from host_tools.table.daemon.cli import dump_statuses
    path = tmp_path / "j.sqlite"
    j = Journal(path)
    put = fill(j, 1300)
    assert j.compact_statuses(now=put[-1][1] + 700) == 1200
    j.close()
    assert dump_statuses(str(path)) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["id"] for x in lines] == [i for i, _, _ in put]
    assert lines[0]["seq"] == 1 and lines[-1]["status"]["last"] == 17 and bytes.fromhex(lines[5]["raw"]) == put[5][2]
    st = lines[3]["status"]       # the binary payload read back whole (cylindre.link.status)
    assert st["at_ms"] == 1500 and st["t"] == 1500000 and st["rotor_dir"] == -1 and st["table_open"] is True
    assert st["sensors"]["BALL1"] == "ok" and st["echo"] is None and st["emitted"] == 4
    assert dump_statuses(str(tmp_path / "none.sqlite")) == 2
