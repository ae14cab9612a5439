"""Feeds written and read back are the same; malformed feeds are refused with their line; the CLIs."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cylindre.feed import FeedError, FeedReader, format_line, header_line
from host_tools.sim import WheelSimulator, truth_path

HEADER = {"cpr": 400, "index_offset_deg": 3.25, "ball_sensors_deg": [10.0, 14.0], "pocket_sensors_deg": [200.0],
          "signals": ["A", "B", "Z", "BALL0", "BALL1", "POCKET0", "VOID", "RESET"]}
SIGNALS = HEADER["signals"]

changes_st = st.lists(st.tuples(st.integers(0, 10 ** 7), st.sampled_from(SIGNALS), st.integers(0, 1)),
                      max_size=60).map(lambda cs: sorted(cs, key=lambda c: c[0]))


@settings(max_examples=150, deadline=None)
@given(changes_st)
def test_any_feed_round_trips(changes):
    lines = [header_line(HEADER)] + [format_line(*c) for c in changes]
    r = FeedReader(lines)
    assert r.header == HEADER
    assert list(r) == changes


@settings(max_examples=150, deadline=None)
@given(changes_st.filter(lambda cs: len(cs) >= 1), st.data())
def test_a_broken_line_is_refused_by_number(changes, data):
    lines = [header_line(HEADER)] + [format_line(*c) for c in changes]
    i = data.draw(st.integers(1, len(lines) - 1))
    t, sig, lv = changes[i - 1]
    broken = data.draw(st.sampled_from([
        "%d %s" % (t, sig), "%d %s %d x" % (t, sig, lv), "%d.0 %s %d" % (t, sig, lv), "-%d %s %d" % (t + 1, sig, lv),
        "%d NOPE %d" % (t, lv), "%d %s 3" % (t, sig), "%d %s %d" % (t, sig.lower(), lv)]))
    lines[i] = broken
    with pytest.raises(FeedError) as exc:
        list(FeedReader(lines))
    assert exc.value.line == i + 1 and ("line %d:" % (i + 1)) in str(exc.value)


def test_simulated_feed_round_trips(tmp_path):
    sim = WheelSimulator(seed=12)
    spins = [sim.spin(), sim.spin("power_cut")]
    path = sim.write_feed(tmp_path / "w.feed", spins)
    with open(path) as f:
        r = FeedReader(f)
        got = list(r)
    assert r.header == sim.header()
    assert got == spins[0].changes + spins[1].changes
    truths = [json.loads(l) for l in open(truth_path(path))]
    assert truths == [json.loads(json.dumps(s.truth)) for s in spins]


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "host_tools.cli", *args], capture_output=True, text=True,
                          timeout=300, **kw)


def test_simulate_is_reproducible(tmp_path):
    a, b = tmp_path / "a.feed", tmp_path / "b.feed"
    for p in (a, b):
        r = _cli("simulate", str(p), "-n", "3", "--seed", "7", "--scenarios", "void_button", "--fault-every", "2",
                 "--imperfect")
        assert r.returncode == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    assert truth_path(a).read_text() == truth_path(b).read_text()
    truths = [json.loads(l) for l in truth_path(a).read_text().splitlines()]
    assert [t["fault"] for t in truths] == [None, "void_button", None]
    assert _cli("simulate", str(a), "--scenarios", "bogus").returncode == 2
    assert "power_cut" in _cli("simulate", "--list").stdout
    assert _cli("simulate").returncode == 2


def test_replay_refuses_a_malformed_feed_naming_the_line(tmp_path):
    sim = WheelSimulator(seed=1)
    path = sim.write_feed(tmp_path / "bad.feed", [sim.spin()])
    lines = path.read_text().splitlines()
    lines[41] = lines[41].replace(" 1", " 7") if lines[41].endswith(" 1") else lines[41][:-1] + "7"
    path.write_text("\n".join(lines) + "\n")
    for extra in ([], ["--cpython"]):
        r = _cli("replay", str(path), *extra)
        assert r.returncode == 2
        assert "line 42" in r.stderr and "level" in r.stderr
        assert r.stdout == ""
    (tmp_path / "empty.feed").write_text("")
    r = _cli("replay", str(tmp_path / "empty.feed"))
    assert r.returncode == 2 and "line 1" in r.stderr
    r = _cli("replay", str(tmp_path / "missing.feed"))
    assert r.returncode == 2


@pytest.mark.micropython
def test_replay_on_micropython_equals_cpython(tmp_path):
    """The same firmware files give the same events on MicroPython and on CPython."""
    sim = WheelSimulator(seed=21)
    path = sim.write_feed(tmp_path / "one.feed", [sim.spin(), sim.spin("same_direction")])
    mp = _cli("replay", str(path))
    cp = _cli("replay", str(path), "--cpython")
    assert mp.returncode == 0 and cp.returncode == 0, mp.stderr + cp.stderr
    assert mp.stdout == cp.stdout          # same text: keys in one canonical order
    ev_mp = [json.loads(l) for l in mp.stdout.splitlines()]
    ev_cp = [json.loads(l) for l in cp.stdout.splitlines()]
    assert ev_mp == ev_cp and list(ev_cp[0])[:2] == ["ev", "t"]
    results = [e for e in ev_cp if e["ev"] == "result"]
    assert [e["number"] for e in results] == [json.loads(truth_path(path).read_text().splitlines()[0])["number"]]
    assert any(e["ev"] == "void" and e["reason"] == "same_direction" for e in ev_cp)
    assert any(e["ev"] == "status" for e in ev_cp)
    quiet = _cli("replay", str(path), "--cpython", "--no-status", "--set", "confirm_sightings=3")
    assert quiet.returncode == 0 and '"status"' not in quiet.stdout
    assert _cli("replay", str(path), "--cpython", "--set", "confirm_sightings=999").returncode == 2
