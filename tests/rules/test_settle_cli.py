"""`cylindre settle` end to end, through a real subprocess (the installed entry point's module)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def settle(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "host_tools.cli", "settle", *args], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_example_session_json():
    p = settle(str(EXAMPLES / "session.json"))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [s["number"] for s in out["spins"]] == [17, 0, 32, 11]
    first = out["spins"][0]
    assert first["announcements"][0] == "dix-sept, noir, impair et manque"
    b1 = next(r for r in first["results"] if r["id"] == "b1")
    assert b1 == {"id": "b1", "type": "plein", "label": "plein 17", "staked": 1000, "outcome": "won",
                  "won": 35000, "returned": 1000, "lost": 0, "imprisoned": 0, "paid": 36000}
    zero = out["spins"][1]
    c1 = next(r for r in zero["results"] if r["id"] == "c1")
    assert c1["outcome"] == "imprisoned" and c1["imprisoned"] == 5000
    freed = next(r for r in out["spins"][2]["results"] if r["id"] == "c1")
    assert freed["outcome"] == "released" and freed["returned"] == 5000
    t = out["totals"]
    assert t["staked"] + t["imprisoned_at_start"] == t["returned"] + t["lost"] + t["imprisoned"]


def test_every_example_settles():
    for f in sorted(EXAMPLES.glob("*.json")):
        p = settle(str(f))
        assert p.returncode == 0, (f, p.stderr)
        assert json.loads(p.stdout)["spins"]


def test_text_output_for_a_person():
    p = settle("--text", str(EXAMPLES / "session.json"))
    assert p.returncode == 0, p.stderr
    assert "« dix-sept, noir, impair et manque »" in p.stdout
    assert "« en prison à rouge et manque »" in p.stdout
    assert "tout est payé, au numéro" in p.stdout and "Session: 4 spins" in p.stdout


def test_stdin_and_the_minimal_bet():
    doc = [{"number": 17, "bets": [{"id": "b1", "type": "plein", "numbers": [17], "stake": 1000}]}]
    p = settle("-", stdin=json.dumps(doc))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)["spins"][0]["results"][0]
    assert (r["id"], r["outcome"], r["won"], r["returned"], r["lost"], r["imprisoned"]) == \
        ("b1", "won", 35000, 1000, 0, 0)
    p = settle(stdin=json.dumps({"spins": doc, "limits": {"plein": [100, 500]}}))
    r = json.loads(p.stdout)["spins"][0]["results"][0]
    assert r["won"] == 17500 and r["returned"] == 1000 and r["excess"] == 500


def test_prisoners_carry_between_spins_and_from_the_input():
    doc = {"prisoners": [{"id": "old", "chance": "noir", "stake": 2000, "wins_needed": 2}],
           "spins": [{"number": 0, "bets": [{"id": "r", "type": "rouge", "stake": 1000}]},
                     {"number": 0, "choices": {"old": "partage"}},
                     {"number": 1}, {"number": 3}]}
    out = json.loads(settle(stdin=json.dumps(doc)).stdout)
    assert out["spins"][0]["prisoners"] == [{"id": "r", "chance": "rouge", "stake": 1000, "wins_needed": 1},
                                            {"id": "old", "chance": "noir", "stake": 2000, "wins_needed": 3}]
    old = next(r for r in out["spins"][1]["results"] if r["id"] == "old")
    assert old["outcome"] == "partage" and old["returned"] == 1000
    assert out["spins"][3]["results"][0]["outcome"] == "released" and out["prisoners"] == []


def test_errors_name_the_bet_and_exit_2():
    bad = [{"number": 5, "bets": [{"id": "ok", "type": "plein", "numbers": [5], "stake": 100}]},
           {"number": 5, "bets": [{"id": "b7", "type": "cheval", "numbers": [1, 5], "stake": 100}]}]
    p = settle(stdin=json.dumps(bad))
    assert p.returncode == 2 and p.stdout == ""
    assert "spin 2: bet b7: cheval 1/5 is not a cheval" in p.stderr
    p = settle(stdin="[{\"number\": 5,")
    assert p.returncode == 2 and "bad JSON" in p.stderr
    p = settle(stdin=json.dumps([{"number": 40}]))
    assert p.returncode == 2 and "0 to 36" in p.stderr
    p = settle(str(ROOT / "no-such-file.json"))
    assert p.returncode == 2 and "cannot read" in p.stderr
    p = settle(stdin=json.dumps({"spins": [], "limits": {"plein": {"min": 10, "max": 5}}}))
    assert p.returncode == 2 and "min <= max" in p.stderr
    p = settle(stdin=json.dumps([{"number": 3, "bets": [{"id": "x", "type": "douzaine", "which": [1, 2],
                                                          "stake": 100}]}]))
    assert p.returncode == 2 and "bet x" in p.stderr and "consent" in p.stderr
