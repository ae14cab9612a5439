"""No input crashes settlement: `cylindre settle` answers every byte string and every JSON value
with exit 0 and JSON (or text) on stdout, or exit 2 and one line naming the problem; the rules
API raises nothing but `BetError` for any bet, carry, prisoner or choice.

The command runs in-process (`settle_bytes`) for speed; a few cases go through a subprocess.
`CYLINDRE_FUZZ=20000 pytest tests/rules/test_settle_fuzz.py` runs a longer fuzz (default 150 a test).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from cylindre.rules.bets import BetError, parse_bet
from cylindre.rules.compiled import Book
from cylindre.rules.settle import settle_spin
from host_tools.table.game.settle_cli import MAX_DEPTH, settle_bytes

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(max_examples=int(os.environ.get("CYLINDRE_FUZZ", "150")), deadline=None,
                suppress_health_check=list(HealthCheck))

# Leaves as json.loads makes them, with the awkward ones: huge integers, lone surrogates, floats.
TEXT = st.text(alphabet=st.characters(codec=None), max_size=12)
LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-10 ** 30, max_value=10 ** 30),
                 st.floats(allow_nan=False, allow_infinity=False), TEXT,
                 st.sampled_from(["17", "14/17", "rouge", "voisins", "partage", "prison", "noir", "8/9", "²",
                                  "refaire", "tout", "plein", "\ud800", "finale 3", "voisins 17"]))
JSON = st.recursive(LEAF, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                 st.dictionaries(TEXT, kids, max_size=4)), max_leaves=12)

TYPES = ["plein", "cheval", "transversale", "carré", "sixain", "douzaine", "colonne", "rouge", "pair",
         "manque", "simple", "voisins", "tiers", "orphelins", "nassa", "jeu zéro", "finale", "finale à cheval",
         "finale avec chevaux", "voisins du numéro", "plein 17", "cheval 14/17", "douzaine 2", "rouge/noir"]
KEYS = ["id", "type", "numbers", "number", "stake", "unit", "which", "consent", "final", "neighbours",
        "zero", "replay", "a_placer", "form", "chance", "chances", "carried", "bet"]
VALUES = st.one_of(LEAF, st.sampled_from(TYPES), st.integers(0, 40), st.integers(1, 10 ** 13),
                   st.lists(st.integers(-1, 40), max_size=7), JSON)


@st.composite
def bets(draw):
    """A bet that is often almost right: a real type, numbers, a stake, then a field or two wrong."""
    b = {"id": draw(st.one_of(st.sampled_from(["b1", "b2", "b3"]), VALUES)),
         "type": draw(st.one_of(st.sampled_from(TYPES), VALUES))}
    for k in draw(st.lists(st.sampled_from(KEYS), max_size=5)):
        b[k] = draw(VALUES)
    if draw(st.booleans()):
        b["stake"] = draw(st.sampled_from([100, 1000, 900, 50, 0, -5, 10 ** 12, 10 ** 12 + 1, 1.5, "100"]))
    return b


@st.composite
def sessions(draw):
    spins = draw(st.lists(st.one_of(
        st.integers(-2, 40), JSON,
        st.fixed_dictionaries({"number": st.one_of(st.integers(0, 36), VALUES),
                               "bets": st.one_of(st.lists(st.one_of(bets(), JSON), max_size=4), JSON)},
                              optional={"choices": st.one_of(JSON, st.dictionaries(
                                            st.sampled_from(["b1", "b2", "p"]),
                                            st.one_of(st.sampled_from(["partage", "prison"]), VALUES))),
                                        "limits": st.one_of(JSON, st.just({"plein": [100, 500]}))})),
        max_size=4))
    doc = {"spins": spins}
    if draw(st.booleans()):
        doc["prisoners"] = draw(st.one_of(JSON, st.lists(st.fixed_dictionaries(
            {"id": st.one_of(st.just("p"), VALUES), "chance": st.one_of(st.just("rouge"), VALUES),
             "stake": st.one_of(st.just(1000), VALUES)},
            optional={"wins_needed": st.one_of(st.integers(0, 4), VALUES)}), max_size=2)))
    if draw(st.booleans()):
        doc["carry"] = draw(st.one_of(JSON, st.lists(st.one_of(bets(), JSON), max_size=2)))
    if draw(st.booleans()):
        doc["limits"] = draw(JSON)
    return doc


def check_answer(data):
    status, out, err = settle_bytes(data)
    assert status in (0, 2)
    if status == 2:
        assert out == b"" and err.startswith("cylindre settle: ") and "\n" not in err, err
        assert err.encode("utf-8")
    else:
        assert err == "" and json.loads(out.decode("utf-8"))["spins"] is not None
    return status


@FUZZ
@given(JSON)
def test_any_json_value_is_answered(doc):
    try:
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:
        return          # a float json cannot write
    check_answer(data)


@FUZZ
@given(sessions())
def test_any_session_like_document_is_answered(doc):
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    check_answer(data)
    status, out, _ = settle_bytes(data, fmt="text")
    assert status in (0, 2) and (status == 2 or out.decode("utf-8"))


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_are_answered(data):
    check_answer(data)


@FUZZ
@given(st.one_of(bets(), JSON), st.integers(-1, 38))
def test_the_rules_api_raises_only_bet_errors(bet, number):
    try:
        parse_bet(bet)
    except BetError as e:
        assert e.message
    try:
        Book().add(bet)
    except BetError:
        pass
    try:
        settle_spin(number, [bet], [bet], {"b1": bet})
    except BetError:
        pass


def test_the_refusals_the_fuzz_found_name_the_problem():
    cases = {
        b"\xff[]": "not UTF-8 text: byte 0xff at offset 0",
        b"[" * 100000: f"nested more than {MAX_DEPTH} levels",
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1): f"nested more than {MAX_DEPTH} levels",
        b'{"spins":[{"number":26,"bets":[0]}]}': "spin 1: a bet must be an object",
        b'{"carry":[0],"spins":[1]}': "carry: a carried bet must be an object",
        b'{"prisoners":[7],"spins":[1]}': "an imprisoned stake must be an object",
        b"[" + b"9" * 5000 + b"]": "an integer too long",
        b'[{"number":1,"bets":[{"id":"\\ud800","type":"plein","numbers":[1],"stake":100}]}]': "lone surrogate \\ud800",
        b'[{"number":1,"bets":[{"id":[1],"type":"plein","numbers":[1],"stake":100}]}]':
            "bet id must be a string or an integer, not [1]",
        b'[{"number":1,"bets":[{"id":"a","type":"plein","numbers":[1],"stake":1000000000001}]}]':
            "over the largest amount accepted",
        b'[{"number":"\xc2\xb2"}]': "the winning number must be 0 to 36",
    }
    for data, why in cases.items():
        status, out, err = settle_bytes(data)
        assert status == 2 and why in err, (data[:40], err)
    ok = b'[{"number":1,"bets":[{"id":17,"type":"plein","numbers":[1],"stake":100}]}]'
    status, out, _ = settle_bytes(ok)
    assert status == 0 and json.loads(out)["spins"][0]["results"][0]["id"] == "17"


def test_subprocess_exit_2_and_one_line_for_broken_input():
    for data in (b"\xff\xfe{", b"[" * 50000, b'{"spins":[{"number":26,"bets":[0]}]}',
                 '[{"number":1,"bets":[{"id":"\\ud800"}]}]'.encode()):
        p = subprocess.run([sys.executable, "-m", "host_tools.cli", "settle"], input=data, capture_output=True,
                           cwd=ROOT, timeout=60)
        assert p.returncode == 2 and p.stdout == b"", p.stderr
        assert p.stderr.decode("utf-8").count("\n") == 1 and b"Traceback" not in p.stderr


def test_a_prisoner_carried_without_wins_needed_counts_as_imprisoned_once():
    """Found by the long fuzz: its chance winning raised KeyError; a zero counted it as fresh."""
    doc = {"prisoners": [{"id": "p", "chance": "rouge", "stake": 1000}], "spins": [1]}
    status, out, _ = settle_bytes(json.dumps(doc).encode())
    assert status == 0 and json.loads(out)["spins"][0]["results"][0]["outcome"] == "released"
    doc["spins"] = [0]
    status, out, _ = settle_bytes(json.dumps(doc).encode())
    assert json.loads(out)["prisoners"] == [{"id": "p", "chance": "rouge", "stake": 1000, "wins_needed": 2}]
