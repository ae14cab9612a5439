"""Group commit: concurrent placements in one transaction, each answered after its COMMIT; the
betting window judged at each bet's own receipt; a kill keeps a group whole or not at all."""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from host_tools.table.game import window
from host_tools.table.game.committer import Committer, _Job
from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Refused, Table
from host_tools.table.game.tapis import Tapis
from host_tools.sim.tablewheel import Wheel

PLEIN = {"player": "ana", "type": "plein", "numbers": [17], "stake": 100}


@pytest.fixture
def t(open_table):
    return open_table


def _consistent(t):
    """The journal's bets and the table's state and memory agree: every bet id handed out is a row."""
    n = t.j.one("SELECT COUNT(*) AS n FROM bets")["n"]
    assert t.j.load_state("T1")["next_bet"] == n + 1 == t.st["next_bet"]
    fresh = Tapis()
    fresh.load(t.ledger.on_layout(), t.limits)
    assert fresh.snapshot() == t.tapis.snapshot()


def _job(t, body, key=None):
    return _Job(body, key, None, t.receive(body, key))


def test_bets_arriving_together_commit_as_one_group_each_answered(t):
    Wheel(t)
    c = Committer(t)
    answers, errors = [], []

    def client(n):
        try:
            answers.append(c.place(dict(PLEIN, player="p%d" % n)))
        except Exception as e:          # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(24)]
    with t.lock:                        # the first bet's group waits for the lock: the others queue
        for th in threads:
            th.start()
        deadline = time.monotonic() + 10
        while c.received < 24 and time.monotonic() < deadline:
            time.sleep(0.01)
        queued = c.received
    for th in threads:
        th.join(10)
    assert not errors and len(answers) == 24, (errors, len(answers))
    assert queued == 24, queued                     # all queued while the first group waited
    # the first group, then all that came meanwhile; on a loaded machine the first thread may only
    # form its group once the others are queued, and then all 24 go in one: never one a bet
    assert c.grouped == 24 and c.groups in (1, 2), (c.groups, c.grouped)
    assert sorted(a["id"] for a in answers) == sorted(r["id"] for r in t.j.query("SELECT id FROM bets"))
    assert all(a["status"] == "open" for a in answers)
    _consistent(t)


def test_a_bet_taken_at_receipt_is_a_poussette_if_the_call_is_taken_before_its_group(t):
    w = Wheel(t)
    c = Committer(t)
    w.send({"ev": "launch", "t": 1, "spin": 1})
    job = _job(t, PLEIN)
    assert job.receipt.verdict[0] == "open"
    w.send({"ev": "rnvp", "t": 2, "spin": 1})       # the call, taken while the bet waits
    c.commit([job])
    assert isinstance(job.error, Refused) and job.error.code == "poussette"
    assert t.bets(status="refused")[0]["reason"] == "poussette"
    _consistent(t)


def test_a_bet_refused_at_receipt_stays_refused_whatever_comes_before_its_group(t):
    w = Wheel(t)
    c = Committer(t)
    t.clock.advance(window.FRESH_MS + 1)               # the line quiet: no fresh word when it arrives
    job = _job(t, PLEIN)
    w.status()                                       # fresh word again before its group commits
    assert t.state()["accepting_bets"]
    c.commit([job])
    assert isinstance(job.error, Refused) and job.error.code == "wheel_not_heard"
    _consistent(t)


def test_a_bet_taken_at_receipt_is_judged_with_its_receipt_instant_not_its_groups(t):
    Wheel(t)
    c = Committer(t)
    job = _job(t, PLEIN)
    t.clock.advance(window.FRESH_MS + 500)             # its group commits late: the word is stale now
    c.commit([job])
    assert job.error is None and job.out["status"] == "open"
    row = t.ledger.row(job.out["id"])
    assert row["wheel_ms"] == pytest.approx(job.receipt.verdict[2][1])     # where it stands: its receipt


def test_one_idempotency_key_twice_in_a_group_places_one_bet(t):
    Wheel(t)
    c = Committer(t)
    a, b = _job(t, PLEIN, "k-1"), _job(t, PLEIN, "k-1")
    c.commit([a, b])
    assert a.out == b.out and len(t.bets()) == 1
    _consistent(t)


def test_a_bet_that_fails_rolls_back_alone(t, monkeypatch):
    Wheel(t)
    c = Committer(t)
    real = t.ledger.add

    def add(bid, player, *a, **k):
        if player == "boom":
            raise OSError("a failing disk sector")
        return real(bid, player, *a, **k)
    monkeypatch.setattr(t.ledger, "add", add)
    jobs = [_job(t, dict(PLEIN, player=p)) for p in ("a", "boom", "b")]
    c.commit(jobs)
    assert [type(j.error).__name__ for j in jobs] == ["NoneType", "OSError", "NoneType"]
    assert [r["player"] for r in t.j.query("SELECT player FROM bets ORDER BY id")] == ["a", "b"]
    _consistent(t)


def test_a_failing_bet_among_slips_and_refusals_leaves_each_other_answer_and_event_once(tmp_path, monkeypatch):
    """The group is recorded without savepoints first; a bet that fails rolls it back whole and it
    is recorded again a savepoint a bet: the others' rows, answers and live events are there once."""
    from host_tools.table.game import slips
    from host_tools.table.journal.events_log import EventLog
    j = Journal(tmp_path / "j.sqlite")
    events = EventLog(j)
    t = Table(j, "T1", publish=events.publish)
    t.set_open(True)
    Wheel(t)
    q = events.subscribe(kinds=["bet", "slip"])
    c = Committer(t)
    real = t.ledger.add
    failed = []

    def add(bid, player, *a, **k):
        if player == "boom":
            failed.append(bid)
            raise OSError("a failing disk sector")
        return real(bid, player, *a, **k)
    monkeypatch.setattr(t.ledger, "add", add)
    slip = {"player": "sam", "bets": [{"type": "plein", "numbers": [5], "stake": 100}, {"type": "rouge", "stake": 200}]}
    jobs = [_job(t, dict(PLEIN, player="a"), "k-a"),
            _Job(slip, "k-s", None, slips.receive(t, slip, "k-s"), slip=True),
            _job(t, dict(PLEIN, player="boom")),
            _job(t, dict(PLEIN, player="b", stake=1)),          # below the minimum: an answer, not a failure
            _job(t, dict(PLEIN, player="c"))]
    c.commit(jobs)
    assert len(failed) == 2                                     # tried in the group, then again alone
    assert [type(x.error).__name__ for x in jobs] == ["NoneType", "NoneType", "OSError", "Invalid", "NoneType"]
    rows = t.j.query("SELECT id, player FROM bets ORDER BY id")
    assert [r["player"] for r in rows] == ["a", "sam", "sam", "c"]
    assert [x.out["id"] for x in (jobs[0], jobs[4])] == [rows[0]["id"], rows[3]["id"]]
    assert [b["id"] for b in jobs[1].out["bets"]] == [rows[1]["id"], rows[2]["id"]]
    seen = []
    while not q.empty():
        seen.append(q.get_nowait()[1])
    assert sorted(seen) == ["bet", "bet", "slip"]
    assert j.one("SELECT COUNT(*) AS n FROM event_log WHERE kind IN ('bet', 'slip')")["n"] == 3
    _consistent(t)


class _FailingCommit:
    """The journal's connection, whose COMMIT fails (a full disk, a lost mount)."""

    def __init__(self, db):
        self._db = db

    def execute(self, sql, *a):
        if sql == "COMMIT":
            raise OSError("disk I/O error")
        return self._db.execute(sql, *a)

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_a_group_whose_commit_fails_acknowledges_none_of_its_bets(t):
    Wheel(t)
    c = Committer(t)
    c.commit([_job(t, dict(PLEIN, player="first"))])
    real = t.j.db
    t.j.db = _FailingCommit(real)
    t.ledger.j.db = t.j.db
    jobs = [_job(t, dict(PLEIN, player="p%d" % i)) for i in range(5)]
    try:
        c.commit(jobs)
    finally:
        real.execute("ROLLBACK")
        t.j.db = real
    assert all(isinstance(j.error, OSError) and j.out is None for j in jobs)
    t.reload()
    assert [r["player"] for r in t.j.query("SELECT player FROM bets")] == ["first"]
    _consistent(t)
    again = _job(t, dict(PLEIN, player="after"))
    c.commit([again])
    assert again.error is None
    _consistent(t)


KILLED = textwrap.dedent("""
    import sys, threading
    sys.path.insert(0, sys.argv[3])
    from host_tools.table.journal.store import Journal
    from host_tools.table.game.table import Table
    from host_tools.table.game.committer import Committer
    from host_tools.sim.tablewheel import Wheel
    t = Table(Journal(sys.argv[1]), "T1")
    t.set_open(True)
    Wheel(t)
    c = Committer(t)
    acked = open(sys.argv[2], "a", buffering=1)
    lock = threading.Lock()
    def client(n):
        i = 0
        while True:
            out = c.place({"player": "p%d" % n, "type": "plein", "numbers": [i % 37], "stake": 100})
            with lock:
                acked.write(out["id"] + "\\n")      # the 201: written only after the bet's group committed
            i += 1
    for n in range(16):
        threading.Thread(target=client, args=(n,), daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()
""")


def test_a_kill_during_group_commits_keeps_every_acknowledged_bet_and_no_part_of_a_group(tmp_path):
    rnd = random.Random(12)
    tests = str(Path(__file__).parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[3]), tests,
                                                       os.environ.get("PYTHONPATH", "")]))
    for k in range(3):
        path, acked = tmp_path / f"j{k}.sqlite", tmp_path / f"acked{k}"
        p = subprocess.Popen([sys.executable, "-c", KILLED, str(path), str(acked), tests], stdout=subprocess.PIPE,
                             env=env)
        assert p.stdout.readline().strip() == b"ready"
        end = time.monotonic() + 60                 # a busy machine: the first group's 201 may take a while
        while not (acked.exists() and acked.read_text().strip()):
            assert time.monotonic() < end, "no bet was acknowledged"
            time.sleep(0.02)
        time.sleep(rnd.uniform(0.0, 0.6))           # then killed at a random moment of the groups
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        t = Table(Journal(path), "T1")
        told = set(acked.read_text().split())
        rows = {r["id"]: r["status"] for r in t.j.query("SELECT id, status FROM bets")}
        assert told and told <= set(rows), told - set(rows)         # every 201 is in the journal
        assert set(rows.values()) == {"open"}
        assert t.st["next_bet"] == len(rows) + 1                    # each group whole, with its state
        assert sorted(rows) == ["B%06d" % i for i in range(1, len(rows) + 1)]
        assert json.loads(json.dumps(t.state()))["bets_on_table"] == len(rows)
        t.j.close()


# -- what the receipt did for the committer: the request's fingerprint and its compiled bets -----------
def test_a_bet_received_under_limits_changed_before_its_group_is_judged_under_the_new_ones(t):
    """The receipt compiled the bet under the limits then; they change before its group: the
    bet is compiled again, refused (400) under the new minimum as a bet placed now is."""
    from cylindre.rules.limits import Limits
    from host_tools.table.game.gate import Invalid
    Wheel(t)
    c = Committer(t)
    ok, low = _job(t, dict(PLEIN, player="a", stake=1000)), _job(t, dict(PLEIN, player="b", stake=100))
    assert ok.receipt.compiled is not None and low.receipt.compiled is not None
    t.limits = Limits().updated({"plein": {"min": 500, "max": 100000}})
    c.commit([ok, low])
    assert ok.error is None and ok.out["stake"] == 1000
    assert isinstance(low.error, Invalid) and "below the table minimum" in str(low.error)
    with pytest.raises(Invalid, match="below the table minimum"):
        t.place(dict(PLEIN, player="b", stake=100))
    _consistent(t)


def test_a_slip_received_under_limits_changed_before_its_group_is_refused_whole_naming_its_bet(t):
    from cylindre.rules.limits import Limits
    from host_tools.table.game import slips
    from host_tools.table.game.gate import Invalid
    Wheel(t)
    c = Committer(t)
    slip = {"player": "sam", "bets": [{"type": "rouge", "stake": 200}, {"type": "plein", "numbers": [5], "stake": 100}]}
    job = _Job(slip, None, None, slips.receive(t, slip), slip=True)
    assert job.receipt.compiled is not None
    t.limits = Limits().updated({"plein": {"min": 500, "max": 100000}})
    c.commit([job])
    assert isinstance(job.error, Invalid) and str(job.error).startswith("bets[1]: ")
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 0
    _consistent(t)


def test_a_retry_under_its_key_answers_the_first_answer_though_the_new_limits_refuse_its_bets(t):
    """The key is looked up before the bets are compiled: a retry of an accepted slip or bet gets
    its first answer, whatever the limits say of it now (the receipt could not compile it)."""
    from cylindre.rules.limits import Limits
    from host_tools.table.game import slips
    Wheel(t)
    c = Committer(t)
    slip = {"player": "sam", "bets": [{"type": "plein", "numbers": [5], "stake": 100}]}
    first = [_Job(slip, "s-1", None, slips.receive(t, slip, "s-1"), slip=True), _job(t, dict(PLEIN), "b-1")]
    c.commit(first)
    t.limits = Limits().updated({"plein": {"min": 500, "max": 100000}})
    again = [_Job(slip, "s-1", None, slips.receive(t, slip, "s-1"), slip=True), _job(t, dict(PLEIN), "b-1")]
    assert [j.receipt.compiled for j in again] == [None, None]
    c.commit(again)
    assert [j.error for j in again] == [None, None]
    assert [j.out for j in again] == [j.out for j in first]
    assert t.j.one("SELECT COUNT(*) AS n FROM bets")["n"] == 2
    _consistent(t)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["plein", "cheval", "rouge", "douzaine", "voisins", "orphelins", "tiers"]),
                          st.integers(0, 36), st.sampled_from([1, 50, 100, 250, 1000, 10 ** 6, 10 ** 8]),
                          st.sampled_from([None, "prison", "partage"]), st.booleans()), min_size=1, max_size=12))
def test_bets_placed_from_their_receipts_are_the_bets_placed_without(tmp_path_factory, spec):
    """The same answers, rows and layout whether the receipt compiled the bets or the placement
    did (random kinds, stakes below, within and over the limits, choices at zero, keys)."""
    tables = []
    for compiled in (True, False):
        j = Journal(tmp_path_factory.mktemp("j") / "j.sqlite")
        t = Table(j, "T1")
        t.set_open(True)
        Wheel(t)
        c = Committer(t)
        jobs = []
        for n, (kind, num, stake, choice, keyed) in enumerate(spec):
            body = {"player": "p%d" % n, "type": kind, "stake": stake}
            if kind == "plein":
                body["numbers"] = [num]
            elif kind == "cheval":
                body["numbers"] = [num % 33 + 1, num % 33 + 4]
            elif kind == "douzaine":
                body["which"] = num % 3 + 1
            if choice is not None:
                body["zero_choice"] = choice
            key = "k%d" % n if keyed else None
            try:
                receipt = t.receive(body, key)
            except Exception as e:              # a request the gate refuses: alike on both tables
                jobs.append(type(e).__name__)
                continue
            if not compiled:
                receipt.compiled = None
            jobs.append(_Job(body, key, None, receipt))
        c.commit([x for x in jobs if not isinstance(x, str)])
        answers = [x if isinstance(x, str) else (x.out, type(x.error).__name__, str(x.error)) for x in jobs]
        rows = t.j.query("SELECT id, player, body, stake, status, reason FROM bets ORDER BY id")
        tables.append((answers, [dict(r) for r in rows], t.tapis.snapshot()))
        _consistent(t)
    assert tables[0] == tables[1]
