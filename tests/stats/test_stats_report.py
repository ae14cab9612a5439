"""The statistics never claim more than they know, and the report is fit to file.

A test below its minimum sample says "pas assez de coups (n sur N)" and the verdict is not a clean
bill of health until a test ran; the pace of a short session is the session's rate, not a median
of one partial hour; the PDF is A4 on every page, its title block and verdict come first, its
tables hold words and French numbers (no Python dict, no empty heading), and its pages render.
The rendered pages are written under the test's tmp folder (report-p1.png, ...) to look at.
"""

import re

import pytest

from host_tools.cli import main
from host_tools.table import libelles
from host_tools.stats import analysis, report, synth, wording

A4_PT = (595.28, 841.89)


def _analyse(**kw):
    return analysis.analyse(synth.play(**kw))


def test_below_every_minimum_no_test_runs_and_the_verdict_says_so():
    a = _analyse(spins=18, seed=3, game_s=3.0)
    assert a["family"] == [] and a["alarms"] == []
    v = a["verdict"]
    assert v["level"] == "insuffisant"
    assert v["short"].startswith("pas assez de coups (18 sur ")
    assert "aucun écart" not in (v["short"] + v["text"]).lower()
    assert all(not t["ran"] and t["status"] == f"pas assez de coups ({t['n']} sur {t['needed']})" for t in a["tests"])
    names = {t["test"] for t in a["tests"]}
    assert {"numbers", "arc", "sector:voisins", "runs:rouge", "serial:lag1"} <= names
    assert any(t["test"].startswith("croupier:") for t in a["tests"])


def test_with_some_tests_run_the_verdict_counts_them_and_those_still_waiting():
    a = _analyse(spins=120, seed=5)
    ran = [t for t in a["tests"] if t["ran"]]
    waiting = [t for t in a["tests"] if not t["ran"]]
    assert ran and waiting                         # sectors, arc and runs ran; the chi-squares wait for 185
    assert {t["test"] for t in ran} == {f["test"] for f in a["family"]}
    # the main tests (the 37 numbers above all) still wait: never a green "aucun écart" on the side tests
    assert a["verdict"]["level"] == "insuffisant"
    assert a["verdict"]["short"] == "insuffisant : 120 coups sur les 185 des tests principaux"
    assert f"Aucun écart significatif sur {len(ran)} tests faits" in a["verdict"]["text"]
    assert "Fréquence des 37 numéros (khi-deux)" in a["verdict"]["text"]
    assert next(t for t in waiting if t["test"] == "numbers")["status"] == "pas assez de coups (120 sur 185)"


def test_the_verdict_is_clean_only_once_every_main_test_ran():
    a = _analyse(spins=400, seed=5)
    main = [t for t in a["tests"] if t["main"]]
    assert main and all(t["ran"] for t in main)
    waiting = [t for t in a["tests"] if not t["ran"]]
    assert waiting and not any(t["main"] for t in waiting)       # the croupiers' signatures still wait
    assert a["verdict"]["level"] == "ok"
    ran = [t for t in a["tests"] if t["ran"]]
    assert f"{len(ran)} tests faits" in a["verdict"]["text"] and f"{len(waiting)} tests n'ont pas encore" in a["verdict"]["text"]


def test_an_alarm_is_named_in_words_first():
    a = _analyse(spins=1500, seed=7, dealer=("bruno", 10, 0.3, 1))
    assert a["verdict"]["level"] == "alarme"
    assert a["verdict"]["text"].startswith("ÉCART SIGNIFICATIF") and "Signature de bruno" in a["verdict"]["text"]
    assert report.text(a).splitlines()[2] == a["verdict"]["text"]


def test_a_one_minute_session_has_a_rate_not_a_median_of_partial_hours():
    a = _analyse(spins=18, seed=3, game_s=3.0, start=1.7e9 + 600)
    pace = a["pace"]
    assert pace["full_hours"] == 0 and pace["median"] is None
    assert 40 < pace["span_s"] < 70 and len(pace["offsets_s"]) == 18
    said = report.cadence(a)
    assert said.startswith("18 coups en 1 min") or said.startswith("18 coups en 5") or " s, soit environ " in said
    assert "heures (première" not in report.text(a) and "sur 1 heures" not in report.text(a)


def test_hours_without_a_game_count_zero_and_only_whole_hours_make_the_median():
    rec = synth.play(spins=300, seed=1, game_s=48.0, start=1.7e9 - 1.7e9 % 3600 + 1800)
    late = [g for g in rec.games if g["at"] >= rec.games[150]["at"]]
    for g in late:                                  # a three-hour break in the middle of the period
        g["at"] += 3 * 3600
    a = analysis.analyse(rec)
    pace = a["pace"]
    assert 0 in pace["per_hour"][1:-1]
    assert pace["full_hours"] == len(pace["per_hour"]) - 2 and pace["min"] == 0
    assert "heures pleines" in report.cadence(a)


def test_french_numbers_and_words():
    assert wording.nombre(1234.5, 1) == "1\u202f234,5"
    assert wording.signe(-0.64) == "−0,64" and wording.signe(1.05) == "+1,05"
    assert wording.p_valeur(0.93) == "0,93" and wording.p_valeur(0.0123) == "0,012" and wording.p_valeur(1e-6) == "< 0,0001"
    assert wording.motif("same_direction") == "bille lancée dans le sens du cylindre (same_direction)"
    assert wording.motif("rotor_not_actuated") == libelles.VOID["rotor_not_actuated"] + " (rotor_not_actuated)"
    assert wording.test_label("sector:moitie_1") == "Secteur : première moitié du cylindre"
    assert wording.pluriel(1, "heure") == "1 heure" and wording.pluriel(3, "heure") == "3 heures"


def _flat(s):
    """Text with every kind of space as one plain space (the PDF keeps no-break spaces apart)."""
    return re.sub(r"[\s\u00a0\u202f]+", " ", s)


def _pdf(path):
    pdfium = pytest.importorskip("pypdfium2")
    doc = pdfium.PdfDocument(str(path))
    pages = []
    for i in range(len(doc)):
        page = doc[i]
        tp = page.get_textpage()
        pages.append((page.get_size(), tp.get_text_range()))
    return doc, pages


@pytest.mark.parametrize("spins,dealer", [(18, None), (1500, ("bruno", 10, 0.3, 1))], ids=["short", "alarm"])
def test_the_pdf_report_is_a4_with_the_title_block_and_the_verdict_first(tmp_path, capsys, spins, dealer):
    rec = synth.play(spins, seed=7, dealer=dealer, game_s=3.0 if spins < 100 else 48.0)
    synth.write_journal(tmp_path / "j.sqlite", rec)
    main(["stats", "--journal", str(tmp_path / "j.sqlite"), "--out", str(tmp_path / "out"),
          "--casino", "Casino de Test", "--table", "Table 4"])
    a = analysis.analyse(rec)
    doc, pages = _pdf(tmp_path / "out" / "report.pdf")
    assert len(pages) >= 3
    for (w, h), _ in pages:
        assert abs(w - A4_PT[0]) < 1 and abs(h - A4_PT[1]) < 1          # every page A4 portrait
    first = _flat(pages[0][1])
    for words in ("Rapport d'intégrité du cylindre", "Casino Casino de Test", "Table Table 4", "Cylindre T1",
                  "Période du ", _flat("Coups " + wording.pluriel(spins, "coup")), "Verdict"):
        assert words in first, words
    assert _flat(a["verdict"]["text"])[:60] in first
    assert first.index("Verdict") < first.index("Les tests")
    text = _flat(" ".join(t for _, t in pages))
    assert "{'" not in text and "'}" not in text and "Famille de tests" not in text
    # decimal commas only (a version number and the instant a command takes are not numbers a person reads)
    numbers = re.sub(r"Cylindre \d+\.\d+\.\d+\S*|--until [\d.e+]+", "", text)
    assert not re.search(r"\d\.\d", numbers), re.search(r".{30}\d\.\d.{30}", numbers)
    for t in a["tests"]:                                                  # every test, with its sample
        assert _flat(wording.test_label(t["test"])) in text
    if spins < 100:
        assert text.count("pas assez de coups") >= len(a["tests"])
        # the numbers' khi-deux and the sectors' p of a test below its minimum are said to conclude nothing
        assert text.index("ne concluent rien") < text.index("Khi-deux des 37 numéros")
    else:
        assert "ne concluent rien" not in text or any(not t["ran"] for t in a["tests"])
    assert "Annexe : méthode" in text and "Holm" in text
    # each page renders to an image with something on it (and is kept to look at)
    for i in range(len(doc)):
        img = doc[i].render(scale=1).to_pil().convert("L")
        img.save(tmp_path / f"report-p{i + 1}.png")
        dark = sum(img.histogram()[:200])
        assert dark > 2000, f"page {i + 1} is blank"


def test_the_daemons_casino_setting_reaches_the_report(tmp_path):
    """`casino` in table.toml is the name on the /stats report's title block."""
    from host_tools.table import config
    f = tmp_path / "table.toml"
    f.write_text('casino = "Casino de la Plage"\n')
    assert config.load(f)["casino"] == "Casino de la Plage"
    f.write_text("casino = 3\n")
    with pytest.raises(config.ConfigError, match="casino"):
        config.load(f)


def test_a_report_a_regulator_accepts(tmp_path, capsys):
    """Page 1 names the casino and the table, the wheel's serial and its history at the table, the
    software, the journal's digest and its period; an approval block; "page N sur M" on every page;
    180 games (the 37-number test needs 185): "insuffisant", never a green box. Signed with the
    floor's format, checked by the floor's own command; the digest computed again from the journal
    up to the report's instant is the same, and a changed journal gives another."""
    import json as _json
    import sqlite3
    from host_tools.table.journal.seal import new_key
    from host_tools.table.wheel.identity import SCHEMA
    from host_tools import version
    rec = synth.play(180, seed=2)
    j = tmp_path / "j.sqlite"
    synth.write_journal(j, rec)
    with sqlite3.connect(j) as db:                                  # the table's record of its wheels (identity.py)
        db.execute(SCHEMA)
        db.execute("INSERT INTO wheels VALUES ('T1', 1, 'PICO-E661', 'a1b2c3d4e5f60718', 'ep1', 0, 1.7e9, 'chef-1', 1, '{}')")
        db.execute("INSERT INTO events (wheel, boot, seq, at, ev, spin, body) VALUES ('T1', 'b1', 0, 1.7e9, 'boot', 0, ?)",
                   (_json.dumps({"ev": "boot", "fw": "cylindre-fw 0.1.0", "board": "pico"}),))
    new_key(tmp_path / "table-report.key")
    out = tmp_path / "out"
    assert main(["stats", "--journal", str(j), "--out", str(out), "--casino", "Casino de la Plage", "--table", "Table 4",
                 "--sign-key", str(tmp_path / "table-report.key")]) == 0
    said = capsys.readouterr().out
    digest = re.search(r"empreinte SHA-256 ([0-9a-f]{64})", said).group(1)
    until = re.search(r"jusqu'à ([0-9.e+]+)\)", said).group(1)
    doc, pages = _pdf(out / "report.pdf")
    first = _flat(pages[0][1])
    for words in ("Casino Casino de la Plage", "Table Table 4", "numéro de série : PICO-E661", f"Cylindre {version()}",
                  "cylindre-fw 0.1.0 pico", digest[:40], "--until", "Le cylindre à cette table", "chef-1",
                  "ce fichier est signé"):
        assert _flat(words) in first, words
    assert "non renseigné" not in first
    text = _flat(" ".join(t for _, t in pages))
    assert "Visa" in text and "Approuvé par" in text and "Signature" in text
    for i, (_, t) in enumerate(pages, 1):
        assert f"page {i} sur {len(pages)}" in t, i
    a = analysis.analyse(rec)
    assert a["verdict"]["level"] == "insuffisant" and "Insuffisant pour conclure" in first
    # signed as the floor signs: the floor's own verify command
    pub = tmp_path / "table-report.pub"
    assert main(["floor", "verify", str(out / "report.pdf"), "--pub", str(pub)]) == 0
    tampered = bytearray((out / "report.pdf").read_bytes())
    tampered[len(tampered) // 2] ^= 1
    (out / "report.pdf").write_bytes(bytes(tampered))
    assert main(["floor", "verify", str(out / "report.pdf"), "--pub", str(pub)]) != 0
    # the digest again, from the journal, up to the report's instant; a journal changed since gives another
    capsys.readouterr()
    with sqlite3.connect(j) as db:
        db.execute("INSERT INTO events (wheel, boot, seq, at, ev, spin, body) VALUES ('T1', 'b9', 1, 1.8e9, 'launch', 999, '{}')")
    assert main(["stats", "--journal", str(j), "--until", until]) == 0
    assert f"empreinte SHA-256 {digest}" in capsys.readouterr().out
    with sqlite3.connect(j) as db:
        db.execute("UPDATE settlements SET number = (number + 1) % 37 WHERE spin = 5")
    main(["stats", "--journal", str(j), "--until", until])
    assert digest not in capsys.readouterr().out


def test_a_session_of_a_few_coups_says_it_is_too_short_for_a_rate():
    """Two coups 3 s apart are not "about 1,200 coups an hour": under five coups no rate is made up."""
    a = _analyse(spins=3, seed=3, game_s=3.0, start=1.7e9 + 600)
    said = report.cadence(a)
    assert "trop peu pour une cadence" in said and "par heure" not in said
    a = _analyse(spins=6, seed=3, game_s=3.0, start=1.7e9 + 600)
    assert "coups par heure à ce rythme" in report.cadence(a)
