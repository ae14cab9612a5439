"""firmware/main.py run on CPython with stand-ins for `micropython`, `machine`, `sys` and the
wiring: a boot that cannot start (a bad board file) stops the watchdog, so the prompt stays for
`make flash-config`; a fault once the main loop runs leaves the watchdog running, so the board
restarts by itself (the controller then voids the spin it cut and says `watchdog_reset`)
instead of staying at the prompt with its watchdog off until someone cuts its power."""

from __future__ import annotations

import builtins
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WDT_CTRL = 0x40058000
ENABLE = 1 << 30


def _run_main_py(wiring_main):
    """Execute main.py as __main__. Returns (the fake machine, whose watchdog CTRL is in mem32;
    what main.py printed; the exception that left main.py, or None)."""
    machine = types.ModuleType("machine")
    machine.mem32 = {WDT_CTRL: 0}

    def wdt(timeout):
        machine.mem32[WDT_CTRL] |= ENABLE

    machine.WDT = wdt
    upy = types.ModuleType("micropython")
    upy.kbd_intr = lambda c: None
    fsys = types.ModuleType("sys")
    printed = []
    fsys.print_exception = printed.append
    wiring = types.ModuleType("cylindre.board.wiring")
    wiring.main = wiring_main
    fakes = {"machine": machine, "micropython": upy, "sys": fsys, "cylindre.board.wiring": wiring}

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if name in fakes:
            return fakes[name]
        return builtins.__import__(name, globals, locals, fromlist, level)

    g = {"__name__": "__main__", "__builtins__": dict(vars(builtins), __import__=imp)}
    try:
        exec(compile((ROOT / "firmware" / "main.py").read_text(), "main.py", "exec"), g)
    except Exception as e:
        return machine, printed, e
    return machine, printed, None


def test_a_board_that_cannot_start_says_why_and_stops_the_watchdog():
    def main(run=True, **kw):
        raise ValueError("board.json: no pins")

    m, printed, left = _run_main_py(main)
    assert left is None and [str(e) for e in printed] == ["board.json: no pins"]
    assert not m.mem32[WDT_CTRL] & ENABLE


def test_a_fault_in_the_running_loop_leaves_the_watchdog_running():
    class Loop:
        def run(self):
            raise RuntimeError("a fault in the loop")

    def main(run=True, **kw):
        loop = Loop()
        if not run:
            return loop
        loop.run()

    m, printed, left = _run_main_py(main)
    assert isinstance(left, RuntimeError)           # to the prompt, which prints it
    assert m.mem32[WDT_CTRL] & ENABLE               # and the watchdog restarts the board
