"""The controller's time origin (spin/origin.py) on the simulator's wheel: moved forward at every
idle moment, it changes no event, byte for byte; over a 40-minute idle gap every int the
controller keeps stays a small int on MicroPython (under 2**30), where time since boot would not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cylindre.replay import Replay
from cylindre.spin.origin import REBASE_AT_US, REBASE_STEP_US
from host_tools.sim import NOISY, REALISTIC, WheelSimulator
from host_tools.sim.boards import load_board
from host_tools.sim.scenarios import SCENARIOS, parse_list
from host_tools.sim.simulate_cli import plan

ROOT = Path(__file__).resolve().parents[2]
BOARDS = {"pico": ROOT / "boards" / "pico.json", "3pk": ROOT / "boards" / "pico2-3pockets.json"}
SMALL = 1 << 30                 # MicroPython's small ints are -2**30 .. 2**30 - 1
IMP = {"clean": None, "imperfect": REALISTIC, "noisy": NOISY}


def _stream(header, overrides, changes, end, check=None, **kw):
    """The events as the golden check keeps them (one JSON line each), and the Replay."""
    out: list[str] = []
    rp: Replay

    def emit(ev):
        out.append(json.dumps(ev, sort_keys=True))
        if check is not None:
            check(rp.ctl)

    rp = Replay(header, emit, overrides=overrides, **kw)
    rp.run(changes)
    rp.finish(end)
    return out, rp


def _sim(board, seed, imp, n, every):
    b, overrides = load_board(BOARDS[board])
    sim = WheelSimulator(b, seed=seed, imperfections=IMP[imp])
    spins = list(sim.spins(plan(n, parse_list("all") if every else [], every)))
    changes = [c for sp in spins for c in sp.changes]
    return sim.header(), overrides, changes, spins[-1].truth["end_us"]


@pytest.mark.parametrize("board,seed,imp,every,step", [
    ("pico", 1, "clean", 0, 1), ("3pk", 2, "clean", 0, REBASE_STEP_US),
    ("pico", 3, "imperfect", 0, REBASE_STEP_US), ("3pk", 1, "noisy", 0, 1),
    ("pico", 11, "imperfect", 2, 1), ("3pk", 12, "noisy", 2, REBASE_STEP_US),
    ("pico", 12, "noisy", 1, REBASE_STEP_US), ("3pk", 11, "imperfect", 1, 1)])
def test_moving_the_origin_at_every_idle_moment_changes_no_event(board, seed, imp, every, step):
    """Rebased after every idle tick (by whole steps of 1 us: to 0, or of 2 s as on the Pico),
    the controller says exactly what it says with its clock from boot; fault scenarios (every
    `every`-th spin, all of them in turn) included: power cuts, stuck and silent sensors."""
    n = len(SCENARIOS) if every == 1 else 8
    header, overrides, changes, end = _sim(board, seed, imp, n, every)
    want, base = _stream(header, overrides, changes, end, rebase_at=None)
    got, rp = _stream(header, overrides, changes, end, rebase_at=1, rebase_step=step)
    assert base.rebases == 0 and rp.rebases > 30
    assert got == want


def _long_ints(ctl):
    """Every int the controller and its parts keep (its origin, since boot by design, aside)."""
    found: list[int] = []
    seen: set[int] = set()

    def walk(x):
        if isinstance(x, bool):
            return
        if isinstance(x, int):
            if not -SMALL <= x < SMALL:
                found.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif hasattr(x, "__dict__") and id(x) not in seen and not callable(x):
            seen.add(id(x))
            for k, y in vars(x).items():
                if k != "epoch":
                    walk(y)

    walk(ctl)
    return found


def _two_spins_apart(gap_us):
    """Two simulated spins, the second moved `gap_us` later: every change of it, so the wheel is
    silent in between (the rotor stands still, no sensor changes) and then plays on."""
    sim = WheelSimulator(None, seed=4, imperfections=REALISTIC)
    a, b = sim.spin(None), sim.spin(None)
    changes = a.changes + [(t + gap_us, s, lv) for t, s, lv in b.changes]
    return sim.header(), changes, b.truth["end_us"] + gap_us


def test_a_40_minute_idle_gap_keeps_every_controller_time_a_small_int():
    header, changes, end = _two_spins_apart(40 * 60 * 1_000_000)
    assert end > 1 << 31
    bad: list[int] = []
    want, base = _stream(header, None, changes, end, check=lambda c: bad.extend(_long_ints(c)),
                         rebase_at=None)
    assert bad and max(bad) > SMALL          # from boot, the check finds long ints
    bad.clear()
    got, rp = _stream(header, None, changes, end, check=lambda c: bad.extend(_long_ints(c)))
    assert rp.rebase_at == REBASE_AT_US and rp.rebases >= 8    # the Pico's rule, every ~5 min idle
    assert bad == []
    assert got == want
    kinds = [json.loads(e)["ev"] for e in got]
    assert kinds.count("result") == 2 and kinds.count("void") == 0
    assert json.loads(got[-1])["t"] > 1 << 31   # the events still in time since boot
