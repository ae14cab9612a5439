"""The gaming day's reports: the day's boundary (06:00 local, a 23-hour day when the clocks change),
per table games, turnover, win and hold, voids by reason, Article 53 and alerts; the permanences as
CSV and PDF (from a SQLite and a PostgreSQL store), coups numbered once within a table's day across
its journals; signed only when the day reconciles with every table's own totals; every file signed
with the floor's Ed25519 key, naming what it is, and checked by `cylindre floor verify` (a changed
byte, another key, a missing signature, a file renamed or moved: refused). About 5 s."""

import datetime as dt
import os
import subprocess
import sys

import pytest

from host_tools.floor import signing
from host_tools.floor.link.gamingday import GamingDay
from host_tools.floor.reports import NotReconciled, day_report, permanence, write_day
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


JOURNAL = "0123456789abcdef"


def told(s, table, day, settlements, turnover, paid, as_of, journals=(JOURNAL,)):
    """The table's heartbeat carrying its own totals of `day` (host_tools/table/floor/daytotals.py)."""
    a, b = PARIS.bounds(day)
    rec = {"day": day.isoformat(), "from": a, "to": b, "as_of": as_of, "ledger": journals[0], "journals": list(journals),
           "settlements": settlements, "turnover": turnover, "paid": paid}
    s.ingest([parse(E.build("CASINO", table, "W-" + table, 0, "heartbeat", as_of, {"days": [rec]}, JOURNAL))])


@pytest.fixture
def store(db_url):
    s = Store(db_url)
    d = dt.date(2026, 11, 27)
    eid = {"T1": 0, "T2": 0}

    def add(table, kind, when, body):
        eid[table] += 1
        s.ingest([parse(E.build("CASINO", table, "W-" + table, eid[table], kind, when, body, JOURNAL))])
    rotor = "cw"
    for i, n in enumerate([17, 0, 32, 5, 26]):
        rotor = "ccw" if rotor == "cw" else "cw"
        t = at(d, "21:00") + 60 * i
        add("T1", "result", t, {"spin": i + 1, "number": n, "rotor_dir": rotor,
                                "ball_dir": "cw" if rotor == "ccw" else "ccw", "croupier": "ana"})
        add("T1", "settlement", t, {"spin": i + 1, "number": n, "staked": 10000, "turnover": 10000,
                                    "paid": 3600 if n == 17 else 0, "result": 0, "bets": 3, "settled_at": t})
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
    told(s, "T1", d, 5, 50000, 3600, at(d + dt.timedelta(days=1), "06:00") + 3)
    yield s, d
    s.close()


def test_the_day_report_per_table(store):
    s, d = store
    rep = day_report(s, PARIS, d)
    t1, t2 = rep["tables"]
    assert (t1["table"], t1["games"], t1["turnover"], t1["paid"], t1["win"]) == ("T1", 7, 50000, 3600, 46400)
    assert t1["hold"] == pytest.approx(0.928) and t1["voids_by_reason"] == {"min_laps": 1}
    assert t1["alerts"] == {"raised": 1, "acknowledged": 0, "escalated": 0}
    assert t1["reconciled"] and t1["journals"] == [JOURNAL] and rep["reconciled"]
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
        signed = signing.verify_file(f, pub)
        assert signed["file"] == f.name and signed["place"] == f"{d.isoformat()}/{f.name}"
        assert signed["subject"]["day"] == d.isoformat() and signed["subject"]["site"] == "CASINO"
    perm_signed = signing.verify_file(tmp_path / "out" / d.isoformat() / "permanence-T1.csv", pub)["subject"]
    assert perm_signed == {"kind": "permanence", "site": "CASINO", "tables": ["T1"], "day": d.isoformat(),
                           "journals": {"T1": [JOURNAL]}}
    perm = (tmp_path / "out" / d.isoformat() / "permanence-T1.csv").read_text().splitlines()
    assert perm[0] == "coup,table,journal,coup_table,heure,numero,couleur,cylindre,croupier"
    assert [ln.split(",")[5] for ln in perm[1:]] == ["17", "0", "32", "5", "26", "9", "3"]
    assert [ln.split(",")[:3] for ln in perm[1:3]] == [["1", "T1", JOURNAL], ["2", "T1", JOURNAL]]
    pdf = tmp_path / "out" / d.isoformat() / "permanence-T1.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    cli = [sys.executable, "-m", "host_tools.cli", "floor", "verify"]
    ok = subprocess.run(cli + [str(pdf), "--pub", str(pub_path)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("valide") and "table(s) T1" in ok.stdout
    assert "journée 2026-11-27" in ok.stdout and JOURNAL in ok.stdout
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


def test_a_renamed_or_moved_signed_file_is_refused(store, tmp_path):
    """The review's attack: permanence-T1.csv and its .sig renamed permanence-T2.csv verified; and
    a day's file moved into another day's folder."""
    import shutil
    s, d = store
    key_path = tmp_path / "k" / "floor-report.key"
    pub = signing.load_public(signing.new_key(key_path))
    write_day(s, PARIS, d, tmp_path / "out", signing.load_private(key_path))
    day = tmp_path / "out" / d.isoformat()
    for name in ("permanence-T2.csv", "permanence-T2.csv.sig"):
        (day / name).unlink()
    for ext in ("", ".sig"):
        (day / f"permanence-T1.csv{ext}").rename(day / f"permanence-T2.csv{ext}")
    with pytest.raises(signing.SignatureError, match="renamed"):
        signing.verify_file(day / "permanence-T2.csv", pub)
    other = tmp_path / "out" / "2026-11-28"
    other.mkdir()
    for ext in ("", ".sig"):
        shutil.copy(day / f"rapport.json{ext}", other / f"rapport.json{ext}")
    with pytest.raises(signing.SignatureError, match="moved"):
        signing.verify_file(other / "rapport.json", pub)
    signing.verify_file(day / "rapport.json", pub)                  # where it was signed: valid


def test_a_day_that_does_not_reconcile_is_not_signed(store, tmp_path):
    """The floor's figures against the table's: a table that says otherwise, a day whose final
    totals never came, a settlement counted the old way; each refused, with an alert naming the
    table and by how much."""
    from host_tools.floor.access import Access
    from host_tools.floor.alerts import Alerts
    s, d = store
    signing.new_key(tmp_path / "k" / "floor-report.key")
    key = signing.load_private(tmp_path / "k" / "floor-report.key")
    end = at(d + dt.timedelta(days=1), "06:00")
    told(s, "T1", d, 5, 50000, 1600, end + 10)                      # the table paid 2,000 less than the floor saw
    with pytest.raises(NotReconciled) as refused:
        write_day(s, PARIS, d, tmp_path / "out", key, now=end + 600)
    assert refused.value.tables == ["T1"] and not (tmp_path / "out" / d.isoformat()).exists()
    r = refused.value.result["tables"]["T1"]
    assert r["difference"] == {"settlements": 0, "turnover": 0, "paid": 2000, "win": -2000}
    alert = [a for a in Alerts(s, Access(s)).list() if a["code"] == "not_reconciled"]
    assert len(alert) == 1 and alert[0]["table"] == "T1" and "-20.00 €" in alert[0]["message"]
    s.execute("DELETE FROM table_days")
    s.execute("DELETE FROM tables")                                 # (its heartbeats are newer)
    told(s, "T1", d, 5, 50000, 3600, end - 60)                      # right, but counted before the day's end
    with pytest.raises(NotReconciled, match="définitifs"):
        write_day(s, PARIS, d, tmp_path / "out", key, now=end + 600)
    told(s, "T1", d, 5, 50000, 3600, end + 20)
    assert write_day(s, PARIS, d, tmp_path / "out", key, now=end + 600)
    s.ingest([parse(E.build("CASINO", "T1", "W-T1", 99, "settlement", at(d, "23:00"),
                            {"spin": 9, "staked": 500, "paid": 0}, "fedcba9876543210"))])   # an old table's, no turnover
    with pytest.raises(NotReconciled, match="mise comptée une fois"):
        write_day(s, PARIS, d, tmp_path / "out2", key, now=end + 600)
