"""The stadium bench's check of every accepted slip against the journal (host_tools/bench/stadiumcheck.py):
a slip whose bets the journal does not hold as sent, or at other stakes than the shared rules', counts;
and its page (stadium.py): in how many runs each goal was met."""

import json
import sqlite3

from cylindre.rules.limits import Limits
from host_tools.bench.stadiumcheck import not_as_sent

PLEIN = {"type": "plein", "numbers": [17], "stake": 100}
ROUGE = {"type": "rouge", "stake": 500, "zero_choice": "partage"}
TIERS = {"type": "tiers", "unit": 100}


def journal(slips, limits=None):
    """A journal's tables as the bench reads them: slips {id: [(bet body, stake)]}."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.execute("CREATE TABLE table_limits (wheel TEXT, at REAL, body TEXT)")
    db.execute("CREATE TABLE slips (id TEXT, stake INTEGER)")
    db.execute("CREATE TABLE bets (id TEXT, slip TEXT, body TEXT, stake INTEGER)")
    if limits is not None:
        db.execute("INSERT INTO table_limits VALUES ('T1', 0, ?)", (json.dumps(limits.to_json()),))
    n = 0
    for sid, bets in slips.items():
        for body, stake in bets:
            n += 1
            db.execute("INSERT INTO bets VALUES (?,?,?,?)", ("B%06d" % n, sid, json.dumps(dict(body, id="B%06d" % n)), stake))
        db.execute("INSERT INTO slips VALUES (?,?)", (sid, sum(s for _, s in bets)))
    return db


def test_slips_held_as_sent_count_nothing():
    db = journal({"S1": [(PLEIN, 100), (ROUGE, 500), (TIERS, 600)]})
    assert not_as_sent(db, {"S1": [PLEIN, ROUGE, TIERS]}) == 0


def test_a_stake_not_the_rules_a_bet_not_sent_or_one_missing_counts():
    db = journal({"S1": [(PLEIN, 100), (ROUGE, 400)],                 # rouge at 500 sent, 400 kept
                  "S2": [(dict(PLEIN, numbers=[18]), 100)],           # another number than sent
                  "S3": [(PLEIN, 100)],                               # a bet missing
                  "S4": [(TIERS, 600)]})
    sent = {"S1": [PLEIN, ROUGE], "S2": [PLEIN], "S3": [PLEIN, ROUGE], "S4": [TIERS]}
    assert not_as_sent(db, sent) == 3


def test_the_stakes_are_the_rules_under_the_tables_limits():
    """Under a plein's maximum of 50 €, a 100 € plein plays 50 € and 50 € is its excess: the bench
    compiles under the journaled limits, as the daemon does."""
    limits = Limits().updated({"plein": {"min": 100, "max": 5000}})
    big = dict(PLEIN, stake=10000)
    assert not_as_sent(journal({"S1": [(big, 10000)]}, limits), {"S1": [big]}) == 0
    assert not_as_sent(journal({"S1": [(big, 5000)]}, limits), {"S1": [big]}) == 1


def _run(p99, rate=20400, met=True):
    return {"bets_per_s": rate, "latency_ms_p99": p99, "goal_met": met, "connections": 500,
            "rate_sent_bets_s": 20400, "latency_ms_p50": 5.0, "latency_ms_max": p99, "refused": {},
            "daemon_cpu_us_per_bet": 60.0, "daemon_cpu_share": 1.2}


def test_the_page_shows_the_run_of_median_p99_and_how_many_met():
    from host_tools.bench.stadium import _median_run, markdown
    runs = [_run(40.0), _run(250.0, met=False), _run(70.0)]
    f = _median_run(runs)
    assert f["latency_ms_p99"] == 70.0 and f["runs_met"] == 2
    assert [r["latency_ms_p99"] for r in f["runs"]] == [40.0, 250.0, 70.0]       # in the order they ran
    page = markdown({"terminals": 500, "slips": f, "load_average_before": [0, 0, 0], "load_average_after": [0, 0, 0]})
    assert "met in 2 of 3 runs (p99 40.0 ms, 250.0 ms, 70.0 ms)" in page
    assert "| 70.0 ms |" in page


def test_an_even_count_shows_the_lower_middle_run_and_one_run_says_met_or_missed():
    from host_tools.bench.stadium import _median_run, _verdict
    assert _median_run([_run(90.0), _run(30.0), _run(500.0, met=False), _run(60.0)])["latency_ms_p99"] == 60.0
    assert _verdict(_median_run([_run(120.0, met=False)])) == "missed"
    assert _verdict(_median_run([_run(20.0)])) == "met"
    assert _median_run([_run(None, rate=0, met=False), _run(80.0)])["latency_ms_p99"] == 80.0   # none answered: worst
