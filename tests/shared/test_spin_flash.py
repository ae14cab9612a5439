"""The flash record: one write a coup (the launch's); a result, or a void after the launch, held in
RAM until the host has it, written when the host has not acknowledged it in time; a power cut in
between decided by the ball (and for a void, by the host's journal: tests/table/game).

MicroPython subset: runs on both runtimes (tests/pico/test_shared_on_micropython.py).
"""

import json

from test_spin_kit import Log, board, make
from cylindre.spin.controller import Controller
from cylindre.spin.core import HOLD_US, VOID_HOLD_US
from cylindre.replay import MemoryStore


class CountingStore(MemoryStore):
    """The flash record in RAM, with the controller time of each write; kept as written (a copy,
    as the flash holds it: the controller's lists move on after the write)."""

    def __init__(self, record=None):
        MemoryStore.__init__(self, record)
        self.at = []
        self.clock = None

    def save(self, record):
        self.at.append(self.clock.t if self.clock is not None else None)
        MemoryStore.save(self, json.loads(json.dumps(record)))


class Host:
    """The link as the controller sees it: every event delivered; a result (and with `voids` a
    void) acknowledged (`durable`) by the time of the next event (the status it brings at once),
    or never (`acks` False: the link is down)."""

    def __init__(self, acks=True, voids=False):
        self.log = Log()
        self.ctl = None
        self.acks = acks
        self.held = ("result", "void") if voids else ("result",)
        self.unacked = False

    def __call__(self, ev):
        if self.unacked and self.acks and self.ctl is not None:
            self.unacked = False
            self.ctl.durable()
        self.log(ev)
        if ev["ev"] in self.held:
            self.unacked = True


def _booted(settings=None, acks=True, voids=False, store=None):
    """The kit's controller on a counting store and a `Host`, booted at 0: (wheel, controller,
    host, store)."""
    store = store if store is not None else CountingStore()
    w, ctl, _ = make(settings=settings, store=store)
    host = Host(acks, voids)
    ctl.out = host
    host.ctl = ctl
    store.clock = ctl
    ctl.boot(0)
    return w, ctl, host, store


def _coup(acks=True, store=None, t_end=45000000, rest_us=14000000):
    """One valid spin (ball at rest in 17 from `rest`, for `rest_us`) with a host acknowledging
    its result or not: (wheel, controller, host, store, rest)."""
    w, ctl, host, store = _booted(acks=acks, store=store)
    w.add_index(0, 60000000)
    drop, rest = w.spin(3000000, -1, 17, rest_us=rest_us)
    w.run(ctl, t_end)
    return w, ctl, host, store, rest


def _launch_t(host):
    return host.log.of("launch")[0]["t"]


def test_a_coup_the_host_acknowledges_is_one_write_at_its_launch():
    w, ctl, host, store, rest = _coup()
    res = host.log.of("result")
    assert len(res) == 1 and res[0]["number"] == 17
    # the boot's first record (a fresh counter) and the launch: nothing at the result
    assert len(store.at) == 2 and store.at[1] == _launch_t(host), store.at
    assert store.record["in_spin"] == 1 and store.record["hist"] == []
    assert ctl.held is False and ctl.dirty is True     # the next launch writes the result


def test_a_result_the_host_does_not_acknowledge_is_written_after_the_hold():
    w, ctl, host, store, rest = _coup(acks=False)
    t = host.log.of("result")[0]["t"]
    assert len(store.at) == 3, store.at
    assert t + HOLD_US <= store.at[2] <= t + HOLD_US + 500000    # the checks' half second
    assert store.record["in_spin"] is None and store.record["last"] == 17
    assert [g[:2] for g in store.record["hist"]] == [[1, 17]]


def test_the_next_launch_writes_the_acknowledged_result_with_it():
    # two coups under one actuation, the rule report-only (a constant rotor in this kit)
    w, ctl, host, store = _booted(board(void_rotor_not_reversed=0, status_us=5000000))
    w.add_index(0, 90000000)
    w.spin(3000000, -1, 17)
    w.spin(45000000, -1, 8)
    w.run(ctl, 90000000)
    assert [(e["spin"], e["number"]) for e in host.log.of("result")] == [(1, 17), (2, 8)]
    launches = [e["t"] for e in host.log.of("launch")]
    assert store.at[1:] == launches, (store.at, launches)     # the boot's, then one a coup
    assert store.record["in_spin"] == 2 and [g[:2] for g in store.record["hist"]] == [[1, 17]]


def _cut_after_result(ball_stays):
    """Spin 1 played to 17, the host acknowledged it (not in flash), the power cut at 30 s
    and back at once, the rotor turning on: the second controller's (host, store, wheel)."""
    store = CountingStore()
    w, ctl, host, store, rest = _coup(store=store, t_end=30000000, rest_us=40000000 if ball_stays else 14000000)
    assert store.record["in_spin"] == 1 and host.log.of("result")
    cut = 30000000
    host2 = Host()
    ctl2 = Controller(board(status_us=5000000), host2, store=store, count=w.count)
    host2.ctl = ctl2
    store.clock = ctl2
    w.now = cut
    ctl2.boot(cut, reset_cause="power")
    w.add_index(cut, 90000000)
    if ball_stays:
        w.add_rest(cut, rest + 40000000, 17)
    return host2, ctl2, store, w, cut


def test_a_cut_after_the_ack_with_the_ball_in_its_pocket_names_it_again():
    host, ctl, store, w, cut = _cut_after_result(True)
    w.run(ctl, cut + 20000000, t_start=cut)
    assert not host.log.of("void")
    r = host.log.of("result")
    # the host already has it: the same spin and number again, marked by the restart
    assert [(e["spin"], e["number"], e.get("restart")) for e in r] == [(1, 17, "power")]


def test_a_cut_after_the_ack_with_the_ball_taken_out_is_void_and_its_actuation_played():
    host, ctl, store, w, cut = _cut_after_result(False)
    w.run(ctl, cut + 30000000, t_start=cut)
    assert [e["reason"] for e in host.log.of("void")] == ["restart"] and not host.log.of("result")
    # the coup may have had its result (the host's, not the flash's): Article 53 holds it played
    assert store.record["used"] is True and store.record["in_spin"] is None
    # a ball launched again under that actuation (the rotor never stopped) is not a coup
    t = cut + 31000000
    w.spin(t, -1, 8)
    w.run(ctl, t + 20000000, t_start=cut + 30000000)
    launch = host.log.of("launch")
    assert launch and launch[0]["violations"] == ["rotor_not_actuated"], host.log.kinds()
    assert [e["reason"] for e in host.log.of("void")] == ["restart", "rotor_not_actuated"]


class _Cut(Exception):
    pass


def test_a_cut_before_the_host_has_the_result_with_the_ball_taken_out_is_void():
    """The link down, the power cut 0.5 s after the result (before its hold ran out: never
    written), the ball taken out while the power was off: the wheel cannot name the spin, which
    is void (`restart`, its bets play on the relaunch), and its actuation counts as played."""
    store = CountingStore()
    w, ctl, _ = make(store=store)
    host = Host(acks=False)
    ctl.out = host
    host.ctl = ctl
    store.clock = ctl
    tick = ctl.tick

    def cut_tick(t):
        r = host.log.of("result")
        if r and t >= r[0]["t"] + 500000:
            raise _Cut()
        tick(t)

    ctl.tick = cut_tick
    ctl.boot(0)
    w.add_index(0, 90000000)
    w.spin(3000000, -1, 17)
    cut = None
    try:
        w.run(ctl, 45000000)
    except _Cut:
        cut = w.now
    assert cut is not None and len(store.at) == 2 and store.record["in_spin"] == 1   # never written
    host2 = Host()
    ctl2 = Controller(board(status_us=5000000), host2, store=store, count=w.count)
    host2.ctl = ctl2
    store.clock = ctl2
    ctl2.boot(cut, reset_cause="power")
    w.add_index(cut, cut + 40000000)
    w.run(ctl2, cut + 30000000, t_start=cut)
    assert [e["reason"] for e in host2.log.of("void")] == ["restart"] and not host2.log.of("result")
    assert store.record["in_spin"] is None and store.record["used"] is True


def _misspin(acks, t_end=45000000):
    """One coup voided after its launch (`few_laps`: 20 laps asked for), its ball at rest in 4
    from the rest on, with a host acknowledging the void or not: (wheel, controller, host, store)."""
    w, ctl, host, store = _booted(board(min_laps=20), acks, voids=True)
    w.add_index(0, 60000000)
    w.spin(3000000, -1, 4, rest_us=60000000)
    w.run(ctl, t_end)
    return w, ctl, host, store


def test_a_coup_voided_after_its_launch_that_the_host_acknowledges_is_one_write():
    w, ctl, host, store = _misspin(True)
    assert [e["reason"] for e in host.log.of("void")] == ["few_laps"] and not host.log.of("result")
    # the boot's first record and the launch's: the void is in the host's journal
    assert len(store.at) == 2 and store.at[1] == _launch_t(host), store.at
    assert store.record["in_spin"] == 1
    assert ctl.held is False and ctl.dirty is True      # the next launch writes it


def test_a_void_the_host_does_not_acknowledge_is_written_at_the_hold_s_end():
    w, ctl, host, store = _misspin(False)
    t = host.log.of("void")[0]["t"]
    assert len(store.at) == 3, store.at
    assert t + VOID_HOLD_US <= store.at[2] <= t + VOID_HOLD_US + 10000     # the checks at the hold's end
    assert store.record["in_spin"] is None and store.record["spin"] == 1


def test_a_void_at_the_launch_is_the_coups_one_write_at_once():
    # a second coup under the same actuation (a constant rotor in this kit): void at its launch
    w, ctl, host, store = _booted(voids=True)
    w.add_index(0, 90000000)
    w.spin(3000000, -1, 17)
    w.spin(45000000, -1, 8)
    w.run(ctl, 90000000)
    v = host.log.of("void")
    assert [(e["spin"], e["reason"]) for e in v] == [(2, "rotor_not_actuated")], host.log.kinds()
    launches = [e["t"] for e in host.log.of("launch")]
    assert store.at[1:] == launches, (store.at, launches)     # the boot's, then one a coup
    assert store.record["spin"] == 2 and store.record["in_spin"] is None


def test_a_cut_after_the_void_was_acknowledged_names_the_ball_at_rest_after_the_restart():
    """The void is in the host's journal, not in flash: after the cut the pockets name the spin
    (`restart`), and the host refuses that result (tests/table/game/test_daemon_table.py)."""
    w, ctl, host, store = _misspin(True, t_end=30000000)
    assert host.log.of("void") and store.record["in_spin"] == 1
    cut = 30000000
    host2 = Host()
    ctl2 = Controller(board(status_us=5000000, min_laps=20), host2, store=store, count=w.count)
    host2.ctl = ctl2
    store.clock = ctl2
    w.now = cut
    ctl2.boot(cut, reset_cause="power")
    w.add_index(cut, 90000000)
    w.add_rest(cut, cut + 40000000, 4)          # the ball still in its pocket
    w.run(ctl2, cut + 20000000, t_start=cut)
    r = host2.log.of("result")
    assert [(e["spin"], e["number"], e.get("restart")) for e in r] == [(1, 4, "power")], host2.log.of("void")


def test_on_a_board_that_prints_the_cammegh_format_a_void_is_written_at_once():
    """Its readers know no journal: after a cut they would take the number the pockets name."""
    w, ctl, host, store = _booted(board(min_laps=20), voids=True)
    ctl.hold_voids = False
    w.add_index(0, 60000000)
    w.spin(3000000, -1, 4, rest_us=60000000)
    w.run(ctl, 45000000)
    v = host.log.of("void")
    assert [e["reason"] for e in v] == ["few_laps"]
    assert len(store.at) == 3 and store.at[2] == v[0]["t"], store.at
    assert store.record["in_spin"] is None
