"""Voids: the void button and the relaunch, a restart mid-spin, no result, the ball off the wheel, a full outbox."""

from test_spin_kit import Log, board, make
from cylindre.spin.controller import Controller
from cylindre.replay import MemoryStore


def _reasons(log):
    return [e["reason"] for e in log.of("void")]


def _faults(log):
    return [(e["code"], e["signal"]) for e in log.of("fault")]


def test_void_button_voids_then_the_relaunch_counts():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 80000000)
    drop1 = w.add_ball(3000000, -1)
    w.add(8000000, "VOID", 1)
    w.add(8300000, "VOID", 0)
    # The croupier lets the voided ball fall, then relaunches.
    drop2, rest2 = w.spin(drop1 + 6000000, -1, 23)
    w.run(ctl, rest2 + 12000000)
    assert _reasons(log) == ["void_button"], log.kinds()
    assert [e["spin"] for e in log.of("launch")] == [1, 2]
    r = log.of("result")
    assert len(r) == 1 and r[0]["spin"] == 2 and r[0]["number"] == 23
    assert log.kinds() == ["boot", "launch", "void", "launch", "rnvp", "drop", "result"], log.kinds()


def _cut(cut_us, rest_us=None, number=17):
    """A spin launched at 3 s (ball at rest in `number` at `rest_us`, or never if None) and a
    watchdog restart at `cut_us`: (the first log, the second controller's log, the store,
    drop time). The wheel runs on through the restart, the second controller from cut_us."""
    store = MemoryStore()
    w, ctl, log = make(store=store)
    ctl.boot(0)

    def motion():
        w.add_index(0, 60000000)
        drop = w.add_ball(3000000, -1)
        if rest_us is not None:
            w.add_rest(rest_us, rest_us + 14000000, number)
        return drop

    drop = motion()
    w.run(ctl, cut_us)
    log2 = Log()
    ctl2 = Controller(board(status_us=5000000), log2, store=store, count=w.count)
    w.now = cut_us
    ctl2.boot(cut_us, reset_cause="watchdog")
    motion()
    w.events = [e for e in w.events if e[0] > cut_us]
    w.run(ctl2, 60000000, t_start=cut_us)
    return log, log2, store, drop


def test_restart_with_the_ball_still_on_the_track_voids_the_spin_and_says_why():
    log, log2, store, drop = _cut(9000000)
    assert log.of("launch") and not log.of("void")
    b = log2.of("boot")[0]
    assert b["interrupted"] == 1 and b["spin"] == 1 and b["reset_cause"] == "watchdog"
    assert _reasons(log2) == ["restart"] and "still ran on the track" in log2.of("void")[0]["detail"]
    v = log2.of("void")[0]
    assert v["spin"] == 1 and v["t"] < 9000000 + 3000000       # at the old ball's next passes
    assert ("watchdog_reset", None) in _faults(log2)
    assert not log2.of("result") and not log2.of("launch")      # its run is that ball's, not a launch
    assert store.record["in_spin"] is None
    ctl3 = Controller(board(), Log(), store=store)
    ctl3.boot(0)
    assert ctl3.out.of("boot")[0]["interrupted"] is None and not ctl3.out.of("void")


def test_restart_after_the_drop_names_the_ball_at_rest_as_the_spin_result():
    # issue 33: cut 6.1 s after the ball rested, before the rule had named it (one sensor:
    # two sightings over 2.5 s at 20 rpm take a turn, 3 s): the pockets name it after the boot
    w, ctl, log = make()
    drop = w.add_ball(3000000, -1)
    rest = drop + 1500000
    log, log2, store, drop = _cut(rest + 2000000, rest_us=rest, number=19)
    assert not log.of("result") and log.of("drop")
    assert not log2.of("void")
    r = log2.of("result")
    assert len(r) == 1 and r[0]["spin"] == 1 and r[0]["number"] == 19 and r[0]["restart"] == "watchdog"
    assert r[0]["laps"] is None                                 # the laps died with the RAM
    assert ctl_history(store) == [[1, 19]]
    # the status said the spin was called from the boot to the result: no bet on it
    st = [e["state"] for e in log2.of("status") if e["t"] < r[0]["t"]]
    assert st and set(st) == {"ball_dropped"}, st


def test_restart_after_a_drop_with_no_ball_found_voids_the_spin():
    w, ctl, log = make()
    drop = w.add_ball(3000000, -1)
    log, log2, store, drop = _cut(drop + 1000000)              # the ball taken out, never seen
    assert _reasons(log2) == ["restart"] and not log2.of("result")
    assert store.record["in_spin"] is None


def test_restart_just_after_the_launch_voids_the_spin_when_the_ball_runs_on():
    # the launch written (its first lap seen), the power cut at once: the ball still runs
    log, log2, store, drop = _cut(4500000)
    assert [e["spin"] for e in log.of("launch")] == [1] and not log.of("rnvp")
    assert log2.of("boot")[0]["interrupted"] == 1
    assert _reasons(log2) == ["restart"] and "still ran on the track" in log2.of("void")[0]["detail"]
    assert not log2.of("result") and not log2.of("launch")


def test_restart_while_the_ball_bounces_names_the_pocket_it_comes_to_rest_in():
    w, ctl, log = make()
    drop = w.add_ball(3000000, -1)
    rest = drop + 2500000
    log, log2, store, drop = _cut(drop + 1000000, rest_us=rest, number=4)
    assert log.of("drop") and not log.of("result")
    assert not log2.of("void")
    r = log2.of("result")
    assert [(e["spin"], e["number"], e["restart"]) for e in r] == [(1, 4, "watchdog")]
    assert ctl_history(store) == [[1, 4]]      # no host acknowledged it here: written after the hold


def ctl_history(store):
    return [[g[0], g[1]] for g in store.record["hist"]]


def test_no_confirmed_pocket_in_time_is_no_result():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop = w.add_ball(3000000, -1)
    # The ball is seen once in one pocket, then in others: never two agreeing sightings.
    w.add_rest(drop + 3000000, drop + 3000000 + 2900000, 5)
    w.add_rest(drop + 6000000, drop + 6000000 + 2900000, 24)
    w.run(ctl, drop + 35000000)
    assert _reasons(log) == ["no_result"], log.kinds()
    assert not log.of("result")
    # One sensor and two sightings: two rotor turns (3 s at 20 rpm), bounces, and room for
    # four more turns (a sensor may miss the ball a few times), and the span the sightings
    # must cover (confirm_span_us, 2.5 s by default): 4 s + 6 turns + 2.5 s.
    v = log.of("void")[0]
    assert 24500000 <= v["t"] - log.of("drop")[0]["t"] <= 24600000, v


def test_ball_seen_in_no_pocket_left_the_wheel():
    # three pocket sensors and none saw the ball: it left the wheel
    w, ctl, log = make(settings=board(pocket_sensors_deg=[60.0, 180.0, 300.0], status_us=5000000))
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop = w.add_ball(3000000, -1)
    w.run(ctl, drop + 20000000)
    assert _reasons(log) == ["ball_off_wheel"]
    # one pocket sensor: the ball gone and that sensor silent look alike, no result either way
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 60000000)
    drop = w.add_ball(3000000, -1)
    w.run(ctl, drop + 20000000)
    assert _reasons(log) == ["no_result"] and "POCKET0 is silent" in log.of("void")[0]["detail"]


def test_ball_vanishing_at_speed_left_the_wheel():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1, laps_max=8)
    w.run(ctl, 30000000)
    assert _reasons(log) == ["ball_off_wheel"], log.events


def test_full_outbox_voids_and_refuses_spins():
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 40000000)
    w.add_ball(3000000, -1)
    w.run(ctl, 6000000)
    ctl.set_accepting(False, "outbox full")
    assert ("outbox_full", None) in _faults(log)
    assert _reasons(log) == ["outbox_full"]
    ctl.set_accepting(True)
    assert len(log.of("fault")) == 1


def test_relaunch_soon_after_the_voided_ball_is_taken_back_is_seen():
    """The croupier presses VOID late in the spin, takes the slow ball back and relaunches at
    once: the new ball's first passes come while the old run (its laps near 1.5 s, a lap
    missed by every sensor still allowed for) is followed. Laps of 0.5 s cannot be that ball
    (it cannot speed up): a new launch, its first lap measured from its first group."""
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 60000000)
    w.add_ball(3000000, -1)               # lap 0.5 s, 0.1 lap/s2: laps of 1.4 s at 16 s
    w.add(16000000, "VOID", 1)
    w.add(16400000, "VOID", 0)
    w.events = [e for e in w.events if not (e[1].startswith("BALL") and e[0] > 16500000)]
    drop2, rest2 = w.spin(18500000, -1, 23)
    w.run(ctl, rest2 + 12000000)
    assert _reasons(log) == ["void_button"], log.kinds()
    launches = log.of("launch")
    assert [e["spin"] for e in launches] == [1, 2], log.kinds()
    assert 480000 <= launches[1]["lap_us"] <= 520000, launches[1]
    r = log.of("result")
    assert len(r) == 1 and r[0]["spin"] == 2 and r[0]["number"] == 23
    assert log.kinds() == ["boot", "launch", "rnvp", "void", "launch", "rnvp", "drop", "result"], log.kinds()


def test_a_voided_spin_never_gets_a_result():
    """The one gate every result passes: even with the phase forced back (a defect the phases
    never allow), a pocket confirmed for a voided spin is a fault, not a result."""
    w, ctl, log = make()
    ctl.boot(0)
    w.add_index(0, 45000000)
    drop, rest = w.spin(3000000, -1, 17)
    later = [e for e in w.events if e[0] > drop + 500000]
    w.run(ctl, drop + 500000)
    assert log.of("drop") and not log.of("result")
    ctl.signal(drop + 500000, "VOID", 1)
    ctl.signal(drop + 700000, "VOID", 0)
    assert _reasons(log) == ["void_button"]
    ctl.phase = "ball_dropped"            # the defect: the voided spin waits for its pocket again
    w.events = later
    w.run(ctl, 45000000, t_start=drop + 510000)
    assert not log.of("result"), log.kinds()
    assert ("result_refused", None) in _faults(log), log.events
    assert ctl.phase == "void"
