"""The gaming day's reports: the day's boundary (06:00 local, a 23-hour day when the clocks change),
per table games, turnover, win and hold, voids by reason, Article 53 and alerts; the permanences as
CSV and PDF (from a SQLite and a PostgreSQL store); every file signed with the floor's Ed25519 key and checked by `cylindre floor verify`
(a changed byte, another key, a missing signature: refused). About 3 s."""

import datetime as dt
import os
import subprocess
import sys

import pytest

from host_tools.floor import signing
from host_tools.floor.link.gamingday import GamingDay
from host_tools.floor.reports import day_report, permanence, write_day
from host_tools.floor.store import Store, parse
from host_tools.floor.link import envelope as E

from floorkit import db_url, postgres  # noqa: F401 - fixtures: the report on SQLite and on PostgreSQL

PARIS = GamingDay("06:00", "Europe/Paris")


def at(day, hhmm):
    h, m = map(int, hhmm.split(":"))
    return dt.datetime(day.year, day.month, day.day, h, m, tzinfo=PARIS.tz).timestamp()


def test_the_gaming_day_starts_at_six_local():
    d = dt.date(2026, 11, 27)
    assert PARIS.of(at(d, "06:00")) == d and PARIS.of(at(d, "05:59")) == d - dt.timedelta(days=1)
    a, b = PARIS.bounds(d)
    assert b - a == 86400 and a == at(d, "06:00")
    spring = dt.date(2026, 3, 28)                       # clocks go forward on the night of the 29th
    a, b = PARIS.bounds(spring)
    assert b - a == 23 * 3600
    with pytest.raises(ValueError):
        GamingDay("6h", "Europe/Paris")


@pytest.fixture
def store(db_url):
    s = Store(db_url)
    d = dt.date(2026, 11, 27)
    eid = {"T1": 0, "T2": 0}

    def add(table, kind, when, body):
        eid[table] += 1
        s.ingest([parse(E.build("CASINO", table, "W-" + table, eid[table], kind, when, body))])
    rotor = "cw"
    for i, n in enumerate([17, 0, 32, 5, 26]):
        rotor = "ccw" if rotor == "cw" else "cw"
        t = at(d, "21:00") + 60 * i
        add("T1", "result", t, {"spin": i + 1, "number": n, "rotor_dir": rotor,
                                "ball_dir": "cw" if rotor == "ccw" else "ccw", "croupier": "ana"})
        add("T1", "settlement", t, {"spin": i + 1, "number": n, "staked": 10000, "paid": 3600 if n == 17 else 0,
                                    "result": 0, "bets": 3})
    add("T1", "result", at(d, "21:10"), {"spin": 6, "number": 9, "rotor_dir": "ccw", "ball_dir": "cw",
                                         "croupier": "ana"})            # the rotor not reversed (Article 53)
    add("T1", "void", at(d, "22:00"), {"spin": 6, "reason": "min_laps", "croupier": "ana"})
    add("T1", "alert", at(d, "22:05"), {"id": "a1", "code": "x", "message": "m", "level": "warning",
                                        "raised_at": at(d, "22:05"), "acked_at": None, "acked_by": None, "comment": None})
    add("T1", "result", at(d + dt.timedelta(days=1), "05:59"), {"spin": 7, "number": 3, "rotor_dir": "cw",
                                                                 "ball_dir": "ccw", "croupier": "bruno"})
    add("T1", "result", at(d + dt.timedelta(days=1), "06:00"), {"spin": 8, "number": 4})   # the next day
    add("T2", "result", at(d, "07:00"), {"spin": 1, "number": 36})
    add("T2", "void", at(d, "07:01"), {"spin": 2, "reason": "ball_off"})
    add("T2", "void", at(d, "07:02"), {"spin": 3, "reason": "ball_off"})
    yield s, d
    s.close()


def test_the_day_report_per_table(store):
    s, d = store
    rep = day_report(s, PARIS, d)
    t1, t2 = rep["tables"]
    assert (t1["table"], t1["games"], t1["turnover"], t1["paid"], t1["win"]) == ("T1", 7, 50000, 3600, 46400)
    assert t1["hold"] == pytest.approx(0.928) and t1["voids_by_reason"] == {"min_laps": 1}
    assert t1["alerts"] == {"raised": 1, "acknowledged": 0, "escalated": 0}
    assert (t1["article53_checked"], t1["article53_compliant"]) == (7, 6)
    assert (t2["games"], t2["voids"], t2["voids_by_reason"], t2["hold"]) == (1, 2, {"ball_off": 2}, None)
    assert rep["total"]["games"] == 8 and rep["total"]["win"] == 46400
    assert [r["number"] for r in permanence(s, PARIS, d, "T1")] == [17, 0, 32, 5, 26, 9, 3]


def test_every_file_is_signed_and_verified(store, tmp_path):
    s, d = store
    key_path = tmp_path / "keys" / "floor-report.key"
    pub_path = signing.new_key(key_path)
    assert os.stat(key_path).st_mode & 0o777 == 0o600
    files = write_day(s, PARIS, d, tmp_path / "out", signing.load_private(key_path))
    names = sorted(f.name for f in files)
    assert names == ["permanence-T1.csv", "permanence-T1.pdf", "permanence-T2.csv", "permanence-T2.pdf",
                     "rapport.csv", "rapport.json"]
    pub = signing.load_public(pub_path)
    for f in files:
        assert signing.verify_file(f, pub)["file"] == f.name
    perm = (tmp_path / "out" / d.isoformat() / "permanence-T1.csv").read_text().splitlines()
    assert perm[0].startswith("rang,coup,heure,numero") and [ln.split(",")[3] for ln in perm[1:]] == \
        ["17", "0", "32", "5", "26", "9", "3"]
    pdf = tmp_path / "out" / d.isoformat() / "permanence-T1.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    cli = [sys.executable, "-m", "host_tools.cli", "floor", "verify"]
    ok = subprocess.run(cli + [str(pdf), "--pub", str(pub_path)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("valide")
    data = bytearray(pdf.read_bytes())
    data[len(data) // 2] ^= 1                           # one bit changed
    pdf.write_bytes(bytes(data))
    bad = subprocess.run(cli + [str(pdf), "--pub", str(pub_path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "INVALIDE" in bad.stdout
    other = signing.new_key(tmp_path / "other.key")
    with pytest.raises(signing.SignatureError, match="not with this public key"):
        signing.verify_file(files[0], signing.load_public(other))
    os.remove(str(files[1]) + ".sig")
    with pytest.raises(signing.SignatureError, match="no signature"):
        signing.verify_file(files[1], pub)
    os.chmod(key_path, 0o644)
    with pytest.raises(signing.SignatureError, match="readable by others"):
        signing.load_private(key_path)
