"""Statistics that follow the wheel: the CUSUM's laws (property tests), its p-value's promise under
a fair wheel, a wheel moved between tables keeping its history, a biased wheel found among fair
ones with the floor-wide Holm correction (and a bias that starts late found from where it
started), Article 53 and misspins by croupier across tables. About 6 s."""

import random

from hypothesis import given, settings, strategies as st

from host_tools.floor import sequential as S
from host_tools.floor.wheelstats import floor_stats


def ev(table, eid, at, number, serial, spin=None, croupier="ana", rotor="cw", kind="result", reason=None, **more):
    body = {"spin": spin if spin is not None else eid, "rotor_dir": rotor, "ball_dir": "ccw" if rotor == "cw" else "cw",
            "croupier": croupier, **more}
    if kind == "result":
        body["number"] = number
    else:
        body["reason"] = reason
    return {"table": table, "event_id": eid, "site": "S", "kind": kind, "serial": serial, "at": at, "body": body}


def fair(rng, serial, table, n, t0=1.7e9, bias=None, bias_from=0, croupier="ana"):
    out, rotor = [], "cw"
    for i in range(n):
        rotor = "ccw" if rotor == "cw" else "cw"
        x = bias if (bias is not None and i >= bias_from and rng.random() < 0.04) else rng.randrange(37)
        out.append(ev(table, i + 1, t0 + 50 * i, x, serial, croupier=croupier, rotor=rotor))
    return out


@given(st.lists(st.booleans(), max_size=400))
def test_cusum_laws(hits):
    r = S.cusum(hits, 1 / 37, S.RATIO_NUMBER)
    assert r["max"] >= 0 and r["last"] >= 0 and 0 <= r["p"] <= 1 and r["n"] == len(hits)
    assert r["last"] <= r["max"] + 1e-12
    more = S.cusum(hits + [True], 1 / 37, S.RATIO_NUMBER)        # one more hit never lowers the evidence
    assert more["max"] >= r["max"] and more["last"] >= r["last"]
    if not any(hits):
        assert r["max"] == 0 and r["p"] == 1


@given(st.floats(0, 60), st.integers(1, 10**6))
def test_the_p_value_bound_is_monotone(s, n):
    assert S.pvalue(s, n) >= S.pvalue(s + 1, n) and S.pvalue(s, n) <= S.pvalue(s, n + 1)


def test_the_p_value_keeps_its_promise_on_fair_wheels():
    rng = random.Random(7)
    small = sum(S.cusum([rng.randrange(37) == 0 for _ in range(1500)], 1 / 37, S.RATIO_NUMBER)["p"] < 0.1
                for _ in range(300))
    assert small <= 30                         # at most 10 % below 0.1 (the bound is conservative: far fewer)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 300), st.randoms(use_true_random=False))
def test_a_wheel_moved_between_tables_keeps_its_history(split, rnd):
    rng = random.Random(rnd.random())
    games = fair(rng, "W-7", "T1", 300)
    moved = [dict(e, table="T2") if i >= split else e for i, e in enumerate(games)]
    a, b = floor_stats(games)["wheels"], floor_stats(moved)["wheels"]
    assert len(a) == len(b) == 1 and a[0]["games"] == b[0]["games"] == 300
    assert a[0]["analysis"]["numbers"]["counts"] == b[0]["analysis"]["numbers"]["counts"]
    assert b[0]["tables"] == (["T1", "T2"] if 0 < split < 300 else ["T2"] if split == 0 else ["T1"])


def test_a_biased_wheel_is_found_among_fair_ones_and_only_it():
    rng = random.Random(3)
    events = []
    for w in range(8):
        events += fair(rng, f"W{w}", f"T{w}", 2500, bias=17 if w == 5 else None)
    s = floor_stats(events)
    assert s["correction"] == "holm" and s["family_size"] > 8 * 46
    assert {a["wheel"] for a in s["alarms"]} == {"W5"}
    assert any(a["test"] == "cusum:number:17" for a in s["alarms"])


def test_a_bias_that_starts_late_is_dated_by_the_cusum():
    rng = random.Random(5)
    events = fair(rng, "W1", "T1", 6000, bias=26, bias_from=3000)
    top = floor_stats(events)["wheels"][0]["cusum_top"][0]
    assert top["test"] == "number:26" and top["p"] < 1e-3
    assert 2500 <= top["since"] <= 3600               # the run of evidence starts about where the bias did


def test_article_53_and_misspins_by_croupier_across_tables():
    rng = random.Random(9)
    events = fair(rng, "W1", "T1", 200, croupier="ana") + fair(rng, "W2", "T2", 200, croupier="ana", t0=1.8e9)
    bad = []
    for i in range(100):                               # bruno never reverses the rotor, and voids one spin in ten
        kind = "void" if i % 10 == 0 else "result"
        bad.append(ev("T3", i + 1, 1.9e9 + 50 * i, rng.randrange(37), "W3", croupier="bruno", rotor="cw", kind=kind,
                      reason="rotor_not_reversed" if kind == "void" else None))
    c = {r["croupier"]: r for r in floor_stats(events + bad)["croupiers"]}
    assert c["ana"]["tables"] == ["T1", "T2"] and c["ana"]["article53_rate"] == 1.0 and c["ana"]["void_rate"] == 0
    # his first spin has no previous one to be reversed from: only the ball's direction is checked there
    assert c["bruno"]["article53_rate"] == 0.01 and c["bruno"]["void_rate"] == 0.1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 36), max_size=600))
def test_the_numpy_scan_is_the_cusum(numbers):
    from host_tools.stats.analysis import SECTORS
    fast = S.scan(numbers, SECTORS)
    for k in (0, 17, 36):
        ref = S.cusum([x == k for x in numbers], 1 / 37, S.RATIO_NUMBER)
        got = fast[f"number:{k}"]
        assert got["n"] == ref["n"] and got["at"] == ref["at"] and got["since"] == ref["since"]
        assert abs(got["max"] - ref["max"]) < 1e-9 and abs(got["last"] - ref["last"]) < 1e-9
    members = set(SECTORS[0][1])
    ref = S.cusum([x in members for x in numbers], len(members) / 37, S.RATIO_SECTOR)
    assert abs(fast["sector:" + SECTORS[0][0]]["max"] - ref["max"]) < 1e-9
