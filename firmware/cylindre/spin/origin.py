"""The controller's time origin (l'origine des temps): controller time is microseconds since an
origin that the shell moves forward while the controller is idle, so that every time it keeps
or computes stays a small int (under 2**30) for as long as the wheel runs.

On MicroPython an int of 2**30 or more is a long int, an object on the heap: with microseconds
since boot every reading, lap and deadline allocated after the 18th minute (docs/wheel/on-the-board.md,
"Over a long run"). `Controller.rebase` moves the origin by a whole number of REBASE_STEP_US
once controller time passes REBASE_AT_US and no spin and no ball run is under way; each part
that keeps a time moves it back by as much (`back`), so every difference and every order
between kept times is what it was. The events leave the controller in time since its boot,
origin added back (`shift_times`): what the host sees does not change.
"""

try:
    from micropython import const
except ImportError:  # CPython
    const = int

REBASE_AT_US = const(300000000)   # past 5 minutes from the origin, move it (idle); 2**30 us is
                                  # 17.9 min: a spin run on past it only allocates, still right
REBASE_STEP_US = const(2000000)   # moved by whole 2 s: what follows the time's phase (the Pico's
                                  # LED blinks on a 2 s cycle) is unchanged
OLDEST_US = const(-1000000000)    # a kept time further back is held here: every comparison with
                                  # a kept time asks "longer ago than X", X at most 600 s (a void
                                  # button held 10 x stuck_us), so 1,000 s back answers the same
TIME_KEYS = ("t", "predicted_drop_t", "rest_t", "last_pass_t")


def back(t, d):
    """A kept time once the origin moved forward by `d` us (held at OLDEST_US)."""
    t -= d
    return t if t > OLDEST_US else OLDEST_US


def shift_times(ev, dt, in_place=False):
    """The event with every controller time in it (`t`, `predicted_drop_t`, `rest_t`,
    `last_pass_t`, the sightings' times) moved by `dt` microseconds: a copy, or `ev` itself if
    dt is 0 or `in_place` (the controller's own fresh events: no second dict per event)."""
    if not dt:
        return ev
    out = ev if in_place else {}
    for k in ev:
        v = ev[k]
        if k in TIME_KEYS and isinstance(v, int) and not isinstance(v, bool):
            v = v + dt
        elif k == "sightings" and isinstance(v, list):
            v = [([s[0] + dt] + list(s[1:])) if isinstance(s, (list, tuple)) and len(s) else s for s in v]
        out[k] = v
    return out
