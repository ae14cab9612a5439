"""The table host on a Cammegh reader (docs/integrators/cammegh-reader.md), in one
process on an exact clock: the daemon's source is the reader's lines, the daemon's I/O turn
(`Daemon.pump`) is driven here every 10 ms of host time, the reader is the simulated SS2 reader
(or a recorded session), the bytes at 9600 baud."""

from pathlib import Path

from host_tools.cammegh.reader_sim import Pacer, ReaderSim
from host_tools.cammegh.replay import timed_lines
from host_tools.table.journal.store import Journal
from host_tools.table.daemon.service import Daemon
from host_tools.table.game.table import Refused

SESSION = Path(__file__).parents[2] / "data" / "cammegh_session.txt"
TRANSIT_MS = 5          # from the reader's last byte out to the daemon's read


class Port:
    url = "bench"

    def __init__(self):
        self.s = object()
        self.out = []

    def write(self, data):
        self.out.append(data)

    def close(self):
        pass


class Table:
    """A daemon on a reader; `run(until)` plays both; bets every `bet_every` ms when asked."""

    def __init__(self, sim=None, timed=None, journal=":memory:", open_table=True):
        self.now = 0.0
        self.port = Port()
        self.d = Daemon(self.port, None, Journal(journal), source="cammegh", clock=lambda: self.now,
                        open_table=open_table)
        self.sim = sim
        self.timed = list(timed or [])
        self.pacer = Pacer()
        self.t = 0
        self.sent = []          # (bet id, host ms it was sent) for bets the table took
        self.calls = []         # reader ms at which it entered state 4
        self.commands = []      # what the daemon wrote to the reader, with the reader's state then
        if sim is not None:
            enter = sim._enter

            def spy(state, t):
                if state == 4:
                    self.calls.append(t)
                enter(state, t)
            sim._enter = spy

    def run(self, until_ms, bet_every=0, stake=100, numbers=(17,)):
        while self.t < until_ms:
            t = self.t
            for c in self.port.out:
                self.commands.append((t, c, self.sim.state if self.sim else None))
                if self.sim is not None:
                    self.sim.feed(c, t)
            self.port.out.clear()
            if self.sim is not None:
                self.pacer.put(self.sim.advance(t))
            while self.timed and self.timed[0][0] <= t:
                self.pacer.put(self.timed.pop(0)[1])
            data = self.pacer.take(t)
            self.now = t + TRANSIT_MS
            self.d.pump(data)
            if bet_every and t % bet_every == 0:
                self.bet(stake, numbers)
            self.t += 10

    def bet(self, stake=100, numbers=(17,)):
        try:
            b = self.d.table.place({"player": "ana", "type": "plein", "numbers": list(numbers), "stake": stake})
        except Refused as e:
            return e.code
        self.sent.append((b["id"], self.now))
        return b["id"]

    def settlements(self):
        return [(r["spin"], r["number"]) for r in self.d.j.query("SELECT spin, number FROM settlements ORDER BY spin")]

    def events(self, kind):
        import json
        return [json.loads(r["body"]) for r in self.d.j.query("SELECT body FROM events WHERE ev=? ORDER BY seq", (kind,))]


def test_every_game_of_the_simulated_reader_is_settled_with_its_number_voids_replayed():
    sim = ReaderSim(seed=6, games=6, void_rate=0.3, garbage=0.05, cut_every=17)
    tb = Table(sim)
    tb.run(200_000, bet_every=700)
    assert sim.finished and len(sim.voids) >= 2
    assert [n for _, n in tb.settlements()] == [n for _, n in sim.results]
    assert len(tb.events("void")) == len(sim.voids)
    # every bet the table took was settled (a void puts it back on the layout for the relaunch)
    # or is still open for the next game; none is lost, none held
    rows = tb.d.j.query("SELECT status, COUNT(*) AS n FROM bets_now GROUP BY status")
    assert {r["status"] for r in rows} <= {"settled", "open", "refused"}, rows
    # the garbage and the cut lines were refused as lines, never as a game
    assert tb.d.counts["rejects"] > 0 and tb.d.link.faults.get("garbled", 0) == tb.d.counts["rejects"]
    assert "result_lost" not in tb.d.link.faults and "game_jump" not in tb.d.link.faults


def test_no_bet_that_reached_the_table_after_the_readers_call_is_ever_played():
    sim = ReaderSim(seed=5, games=5, void_rate=0.2)
    tb = Table(sim)
    tb.run(200_000, bet_every=20)
    settled = tb.settlements()
    # a misspin happens in state 3: every entry into state 4 is the call of a game dealt
    assert len(settled) == len(tb.calls) == 5
    rows = {r["id"]: r for r in tb.d.j.query("SELECT id, status, spin, reason FROM bets_now")}
    for (spin, _), call in zip(settled, tb.calls):
        played = [at for bid, at in tb.sent if rows[bid]["spin"] == spin and rows[bid]["status"] == "settled"]
        assert played and max(played) < call, (spin, call, max(played))
        # taken in the 500 ms before the call's line arrived: refused as poussettes, stakes returned
        late = [bid for bid, at in tb.sent if call <= at <= call + 100]
        assert late and all(rows[b]["status"] == "refused" and rows[b]["reason"] == "poussette" for b in late)
    assert {r["reason"] for r in rows.values() if r["status"] == "refused"} <= {"poussette", "wheel_not_heard"}


def test_the_recorded_session_settles_every_game_with_the_readers_number():
    timed = timed_lines(SESSION.read_bytes())
    tb = Table(timed=timed)
    tb.run(timed[-1][0] + 1000, bet_every=1000)
    assert [n for _, n in tb.settlements()] == [7, 35, 25, 26, 15, 13]
    games = [e["game"] for e in tb.events("result")]
    assert games == [13, 14, 15, 16, 17, 18]
    assert len(tb.events("void")) == 5
    assert tb.d.link.faults == {}           # a clean capture: nothing to report
    # the raw lines are journaled: the recall of a spin shows the lines its events came in
    recall = tb.d.table.recall(1)
    assert [bytes.fromhex(e["frame_hex"]) for e in recall["events"]] == [b"*X;3;013;16;0;149;1", b"*X;4;013;16;0;170;1",
                                                                       b"*X;5;013; 7;0;168;1"]
    assert recall["settlement"]["number"] == 7


def test_a_stopped_reader_is_asked_to_run_until_it_does_at_an_open_table():
    sim = ReaderSim(seed=2, games=1, closed=True)
    tb = Table(sim)
    tb.run(6000)
    sent = [(t, c, st) for t, c, st in tb.commands if c == b"*P 1\r\n"]
    assert sent and all(st in (1, 6) for _, _, st in sent)    # first at connection, then on state 6
    assert "*P OK" in sim.answers and sim.state in (2, 3)
    n = len(sent)
    tb.run(12000)
    assert len([c for _, c, _ in tb.commands if c == b"*P 1\r\n"]) == n      # running: asked no more


def test_a_table_the_chef_closed_stays_closed_and_the_reader_is_told():
    sim = ReaderSim(seed=3, games=0)
    tb = Table(sim)
    tb.run(3000)
    assert sim.state == 2
    tb.d.want_open = False
    tb.d.table.set_open(False)
    seq = tb.d.link.command("close_table")
    tb.run(4000)
    assert (b"*P 0\r\n" in [c for _, c, _ in tb.commands]) and sim.state == 6
    assert seq and not tb.d.link.busy                    # the reader's *P OK was its reply
    tb.run(15000)
    assert sim.state == 6                                # never asked to run again while closed
    assert b"*P 1\r\n" not in [c for t, c, _ in tb.commands if t >= 3000]
    assert tb.bet() == "table_closed"
    tb.d.want_open = True
    tb.d.table.set_open(True)
    tb.run(17000)
    assert sim.state in (2, 3)                           # open again: *P 1 until it runs


def test_a_lost_number_holds_the_spins_bets_for_the_supervisor():
    sim = ReaderSim(seed=4, games=3)
    tb = Table(sim)
    lost = {"on": False}
    take = tb.pacer.take

    def cable(now):                                      # the cable drops everything for a while
        data = take(now)
        return b"" if lost["on"] else data
    tb.pacer.take = cable
    while sim.state != 3:
        tb.run(tb.t + 10)
    tb.run(tb.t + 600)
    bid = tb.bet(stake=500)
    assert bid.startswith("B")
    while sim.state != 4:
        tb.run(tb.t + 10)
    tb.run(tb.t + 600)                                   # the call is heard: the bet is locked
    lost["on"] = True
    while sim.state != 2:
        tb.run(tb.t + 10)
    tb.run(tb.t + 1500)
    lost["on"] = False
    tb.run(tb.t + 2000)
    row = tb.d.j.one("SELECT status, reason FROM bets_now WHERE id=?", (bid,))
    assert row["status"] == "held" and "not heard from the reader" in row["reason"]
    assert tb.settlements() == [] and tb.d.link.faults.get("result_lost") == 1
    # betting goes on with the next game; the held bet waits for POST /bets/{id}/resolve
    assert tb.bet().startswith("B")


def test_no_bets_while_the_reader_is_not_heard():
    sim = ReaderSim(seed=6, games=0)
    tb = Table(sim)
    tb.run(4000)
    assert tb.bet().startswith("B")
    take = tb.pacer.take
    tb.pacer.take = lambda now: (take(now), b"")[1]     # the cable is cut
    tb.run(tb.t + 1100)
    assert tb.bet() == "wheel_not_heard"
    assert tb.d.health_reasons() and "reader not heard" in tb.d.health_reasons()[0]
    tb.pacer.take = take
    tb.run(tb.t + 1000)
    assert tb.bet().startswith("B") and tb.d.health_reasons() == []


def test_a_line_the_journal_could_not_take_is_given_again_in_order():
    sim = ReaderSim(seed=7, games=2)
    tb = Table(sim)
    real = tb.d.table.on_event
    fail = {"n": 1}

    def flaky(boot, seq, ev, fid):
        if ev.get("ev") == "rnvp" and fail["n"]:
            fail["n"] -= 1
            raise OSError("disk full")
        return real(boot, seq, ev, fid)
    tb.d.table.on_event = flaky
    tb.run(80_000, bet_every=500)
    assert fail["n"] == 0
    assert [n for _, n in tb.settlements()] == [n for _, n in sim.results]
    seqs = [r["seq"] for r in tb.d.j.query("SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(1, len(seqs) + 1))


def test_a_daemon_started_during_a_spin_plays_no_bet_it_cannot_place_before_the_call(tmp_path):
    sim = ReaderSim(seed=8, games=2)
    tb = Table(sim, journal=tmp_path / "j.sqlite")
    while sim.state != 3:
        tb.run(tb.t + 10)
    tb.run(tb.t + 1000)
    before = tb.bet()
    assert before.startswith("B")
    tb.d.j.close()                                       # the daemon dies; the reader goes on
    while sim.state != 4:
        tb.pacer.take(tb.t)
        tb.t += 10
        sim.advance(tb.t) and None
    tb.pacer = Pacer()
    again = Table(sim, journal=tmp_path / "j.sqlite")    # same host: same boot, same clock
    again.t = tb.t
    again.run(again.t + 8000)
    assert len(again.settlements()) == 1
    row = again.d.j.one("SELECT status, reason FROM bets_now WHERE id=?", (before,))
    # the call was not heard: it may have come before the bet, which is refused, never played
    assert (row["status"], row["reason"]) == ("refused", "poussette")
