"""Every code a person may be shown has its French label (host_tools/table/libelles.py): the void
reasons, fault codes and link refusals found in the sources of firmware/ and host_tools/ (so a new
code without a label fails here), the alert codes, the bet types of the rules; and numbers the
French way."""

import json
import re
from pathlib import Path

from cylindre.rules import names
from host_tools.table.alerts import rules as alerts
from host_tools.table import libelles as L

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [p for d in ("firmware/cylindre", "host_tools") for p in (ROOT / d).rglob("*.py")
           if not {"bench", "stats"} & set(p.relative_to(ROOT).parts)]     # (a clone may sit in a "bench" folder)


def found(*patterns):
    codes = set()
    for p in SOURCES:
        text = p.read_text(encoding="utf-8")
        for pat in patterns:
            codes |= set(re.findall(pat, text))
    return codes


def test_every_void_reason_in_the_sources_has_a_label():
    codes = found(r'_void\(\s*"(\w+)"', r'"ev": "void"[^}\n]*"reason": "(\w+)"', r'\(\d+, "(\w+)"\)',
                  r'return "(rotor_\w+)"')                 # Article 53's verdict, voided through a variable
    ran = re.search(r"BALL_RAN = \(([^)]*)\)", (ROOT / "firmware/cylindre/spin/controller.py").read_text())
    codes |= set(re.findall(r'"(\w+)"', ran.group(1))) if ran else set()
    events = (ROOT / "docs/integrators/wheel-events.md").read_text(encoding="utf-8")          # the reasons as documented
    documented = re.findall(r"`(\w+)`", events.split("Void `reason`s:")[1].split("\n\n")[0])
    codes |= {c for c in documented if not re.search(r"_(x10|us|ms)$", c)}       # not a setting it names
    codes |= {"misspin"}                                     # the Cammegh decoder's default
    assert {"same_direction", "rotor_not_reversed", "restart", "table_closed", "outbox_full"} <= codes
    missing = sorted(c for c in codes if c not in L.VOID)
    assert not missing, missing
    assert L.coup_nul("rotor_not_reversed") == "coup nul : cylindre non inversé"


def test_every_fault_code_in_the_sources_has_a_label():
    codes = found(r'_fault\(\s*(?:out, now(?:_us)?, )?"(\w+)"', r'ctl\.fault\(\s*"(\w+)"', r'code"\) == "(\w+)"',
                  r'"sensor_stuck" if [^\n]* else "(\w+)"', r'"(sensor_stuck)" if')
    assert {"sensor_stuck", "sensor_silent", "edges_lost", "garbled", "result_lost", "watchdog_reset"} <= codes
    missing = sorted(c for c in codes if c not in L.FAULT)
    assert not missing, missing


def test_every_link_refusal_in_the_sources_has_a_label():
    codes = found(r'"kind": "reject", "reason": "(\w+)"', r'FrameError\(\s*"(\w+)"')
    assert {"mac", "wheel", "json", "garbled"} <= codes
    missing = sorted(c for c in codes if c not in L.REJECT)
    assert not missing, missing


def test_every_alert_code_bet_type_and_state_has_a_label():
    assert set(alerts.CODES) <= set(L.ALERT)
    types = set(names.PLAIN.values()) | set(names.ANNONCES.values())
    assert types <= set(L.BET), sorted(types - set(L.BET))
    assert L.label("bet", "jeu_zero") == "jeu zéro"
    assert L.label("bet", "no_such_type") == "no_such_type"          # shown, never hidden


def test_bets_are_named_as_the_announcements_name_them():
    assert L.bet_label({"type": "cheval", "numbers": [14, 17], "stake": 500}) == "cheval 14/17"
    assert L.bet_label({"type": "jeu zero", "unit": 100}) == "jeu zéro"
    assert L.bet_label({"type": "douzaine", "which": 1, "stake": 1500}) == "première douzaine"
    assert L.bet_label({"type": "plein", "numbers": [17], "stake": 10 ** 9}) == "plein 17"   # over any maximum
    assert L.bet_label({"type": "moitie_1"}) == "moitie_1"                                  # unknown: as given


def test_numbers_the_french_way():
    assert L.euros(11600) == "116,00\u202f€"
    assert L.euros(-123456789) == "\u22121\u202f234\u202f567,89\u202f€"
    assert L.euros(5) == "0,05\u202f€"
    assert L.nombre(14.0, 1) == "14,0"
    assert L.pourcent(-0.14, 2) == "\u22120,14\u202f%"
    assert L.nombre(-0.0004, 2) == "0,00"                 # no "−0,00"


def test_the_pages_get_the_same_tables():
    from host_tools.table.api import assets as web_assets
    kind, js = web_assets.resolve("/assets/libelles.js")
    assert kind.startswith("text/javascript") and js.decode().count("const LIBELLES = ") == 1
    assert '"same_direction": "bille lancée dans le sens du cylindre"' in js.decode()
    kind, body = web_assets.resolve("/assets/libelles.json")
    assert kind == "application/json" and json.loads(body) == L.TABLES
