"""`cylindre stats` reads the journal the daemon writes: the games, voids and croupiers in it,
whatever is malformed left out, and a summary, plots and a PDF out."""

import json
import sqlite3


from host_tools.cli import main
from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Table
from host_tools.stats import analysis, duty, games, synth
from host_tools.sim.tablewheel import Wheel

KEYS = ("spin", "number", "ball_dir", "rotor_dir", "rotor_rpm_x10", "launch_lap_us", "release_pocket", "laps",
        "drop_angle_x10", "drop_pocket", "violations", "croupier")


def _rows(gs):
    return [[g[k] for k in KEYS] for g in gs]


def test_a_synthetic_journal_reads_back_as_played(tmp_path):
    rec = synth.play(300, seed=2, a53_rate=0.05)
    synth.write_journal(tmp_path / "j.sqlite", rec)
    back = games.read(tmp_path / "j.sqlite")
    assert _rows(back.games) == _rows(rec.games)
    assert [(v["spin"], v["reason"], v["croupier"]) for v in back.voids] == \
           [(v["spin"], v["reason"], v["croupier"]) for v in rec.voids]
    assert len(back.launches) == len(rec.launches) and back.skipped == 0
    a = analysis.analyse(back)
    assert a["article53"]["launches_with_violation"] == sum(1 for g in rec.launches if g["violations"])
    assert {c["croupier"] for c in a["croupiers"]} == {"ana", "bruno", "chloe"}


def test_the_daemons_own_journal_with_an_anomaly_and_a_recovered_result(tmp_path):
    """Results the daemon refused are not games; results recovered from the wheel's flash are."""
    t = Table(Journal(tmp_path / "j.sqlite"), "T1")
    t.set_open(True)
    w = Wheel(t)
    w.spin(1, 17)
    w.send({"ev": "launch", "t": 4, "spin": 2, "ball_dir": -1, "rotor_dir": 1, "rotor_rpm_x10": 200, "lap_us": 500000,
            "violations": ["rotor_not_reversed"], "release_pocket": 5})
    w.send({"ev": "void", "t": 5, "spin": 2, "reason": "void_button", "detail": ""})
    w.send({"ev": "result", "t": 6, "spin": 2, "number": 3})           # for a voided spin: an anomaly
    w.send({"ev": "launch", "t": 7, "spin": 3})
    w.send({"ev": "rnvp", "t": 8, "spin": 3})
    w.reboot("b1", 3, [(1, 17), (3, 26)])                               # spin 3's result died in RAM
    w.spin(4, 0)
    with t.j.tx() as db:
        db.execute("INSERT INTO events (wheel, boot, seq, at, ev, spin, body) VALUES ('T1','b1',99,1e12,'result',5,'not json')")
        db.execute("INSERT INTO events (wheel, boot, seq, at, ev, spin, body) VALUES ('T1','b1',98,1e12,'result',6,'{\"number\": 99, \"spin\": 6}')")
    rec = games.read(tmp_path / "j.sqlite")
    assert [(g["spin"], g["number"], g["source"]) for g in rec.games] == [(1, 17, "event"), (3, 26, "history"), (4, 0, "event")]
    assert [(v["spin"], v["reason"]) for v in rec.voids] == [(2, "void_button")]
    assert rec.skipped == 2
    a = analysis.analyse(rec)
    assert a["voids"]["by_reason"] == {"void_button": 1} and a["voids"]["launches"] == 4
    assert a["article53"]["by_kind"] == {"rotor_not_reversed": 1}
    assert a["family"] == []        # four games: no test is valid, none is run


def test_the_croupier_on_duty_is_who_the_chef_set_last(tmp_path):
    db = sqlite3.connect(":memory:")
    duty.create(db)
    duty.set_on_duty(db, "T1", "ana", 100.0, "chef")
    duty.set_on_duty(db, "T1", "bruno", 200.0, "chef")
    duty.set_on_duty(db, "T1", "", 300.0, "chef")
    duty.set_on_duty(db, "T2", "zoé", 0.0, "chef")
    r = duty.Roster.read(db, "T1")
    assert [r.at(t) for t in (50, 100, 199.9, 200, 299, 300, 1e9)] == [None, "ana", "ana", "bruno", "bruno", None, None]


def test_stats_without_the_new_wheel_fields_say_what_is_missing(tmp_path, capsys):
    synth.write_journal(tmp_path / "j.sqlite", synth.play(400, seed=4, fields=False))
    assert main(["stats", "--journal", str(tmp_path / "j.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "ne porte pas l'angle de chute (drop_angle_x10" in out and "pas de case de lâcher (release_pocket)" in out
    assert "Aucun écart significatif" in out


def test_stats_command_writes_plots_and_a_report_and_exits_1_on_an_alarm(tmp_path, capsys):
    rec = synth.play(1500, seed=7, dealer=("bruno", 10, 0.3, 1))
    synth.write_journal(tmp_path / "j.sqlite", rec)
    assert main(["stats", "--journal", str(tmp_path / "j.sqlite"), "--out", str(tmp_path / "out"),
                 "--casino", "Casino de Test", "--table", "Table 4"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("Journal : empreinte SHA-256 ")
    assert out.splitlines()[3].startswith("ÉCART SIGNIFICATIF") and "Signature de bruno" in out
    for name in ("numeros", "secteurs", "chute", "cadence", "croupiers"):
        assert (tmp_path / "out" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "out" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    assert main(["stats", "--journal", str(tmp_path / "j.sqlite"), "--json"]) == 1
    a = json.loads(capsys.readouterr().out)
    assert a["games"] == 1500 and any(t.startswith("croupier:bruno:") for t in a["alarms"])


def test_an_empty_journal_has_nothing_to_test(tmp_path, capsys):
    Journal(tmp_path / "j.sqlite").close()
    assert main(["stats", "--journal", str(tmp_path / "j.sqlite"), "--out", str(tmp_path / "out"),
                 "--casino", "Casino de Test", "--table", "Table 4"]) == 0
    assert "Aucun coup dans ce journal" in capsys.readouterr().out
    assert (tmp_path / "out" / "report.pdf").is_file()


def test_a_report_to_file_is_not_written_without_the_casino_and_the_table(tmp_path, capsys):
    synth.write_journal(tmp_path / "j.sqlite", synth.play(20, seed=1))
    assert main(["stats", "--journal", str(tmp_path / "j.sqlite"), "--out", str(tmp_path / "out"), "--table", "T"]) == 2
    err = capsys.readouterr().err
    assert "demande le nom du casino" in err and "--casino" in err
    assert (tmp_path / "out" / "numeros.png").is_file() and not (tmp_path / "out" / "report.pdf").exists()


def test_stats_refuses_what_is_not_a_journal(tmp_path, capsys):
    assert main(["stats", "--journal", str(tmp_path / "none.sqlite")]) == 2
    (tmp_path / "x.sqlite").write_bytes(b"hello")
    assert main(["stats", "--journal", str(tmp_path / "x.sqlite")]) == 2
    assert main(["stats", "--journal", str(tmp_path / "x.sqlite"), "--alpha", "2"]) == 2
    assert "cylindre stats :" in capsys.readouterr().err
