"""The simulated wheel's settings as the options give them: its geometry (from a feed header or a
board file), the physical constants of a wheel (`WHEEL`) and its presets (`--wheel dealer`,
`biased`), and the sensors' imperfections (`REALISTIC`, `NOISY`). wheel.py spins with them.
"""

from __future__ import annotations

from cylindre import feed as feedfmt

DEFAULT_GEOMETRY = {
    "cpr": 1024,
    "index_offset_deg": 17.5,
    "ball_sensors_deg": [0.0, 6.0],
    "pocket_sensors_deg": [90.0, 210.0, 330.0],
    "signals": ["A", "B", "Z", "BALL0", "BALL1", "POCKET0", "POCKET1", "POCKET2", "VOID", "RESET"],
}

# The wheel's constants (per wheel, not per spin): fitted to WHEEL.md, see docs/internals/simulator.md.
WHEEL = {
    "decel": 0.225,          # a, rad/s^2: rolling friction, constant
    "drag": 0.007,           # c, 1/rad: air drag, deceleration c*omega^2
    "critical_lap_s": 2.55,  # the ball leaves the track below omega_c = 2*pi/2.55 s (~1.0 m/s at r=0.41 m)
    "spread": 0.03,          # spin-to-spin spread of a and c (ball, air, track cleanliness)
    "launch_lap_s": (0.45, 0.64),
    "rotor_rpm": (12.0, 28.0),
    "rotor_tau_s": (150.0, 400.0),
    "ball_sensor_width_deg": 3.0,    # arc over which a ball-track sensor sees the ball
    "pocket_sensor_width": 0.6,      # fraction of a pocket pitch over which a pocket sensor sees it
    "bounce_pockets": (16.0, 3.0, 8, 20),   # mean, sd, min, max pockets crossed after the drop
    "bias": None,            # [number, p]: a biased wheel, the ball rests in `number` with extra probability p
    "release_deg": None,     # [angle, sd]: the croupier lets the ball go at this bowl angle (the board's
                             # frame, degrees), scattered by sd; None: anywhere on the bowl
}

# Wheel constants for the wheel statistics (issue 10): a croupier with a signature, and a biased
# wheel. The signature is a habit: the croupier stands at one place and lets the ball go from
# the same spot of the bowl (release_deg, within a few degrees), with the same strength and the
# rotor pushed to the same speed; the ball then runs the same time and angle to its drop while
# the rotor turns the same angle, so it lands a steady distance from the rotor pocket under the
# release (what the statistics measure, from the first ball-sensor pass). Without the steady
# spot, a release anywhere on the bowl moves that distance by up to 1.2 turns and hides it.
# `WheelSimulator(wheel=DEALER)`, or the bench's `--wheel dealer`; combine them as
# dict(DEALER, bias=[17, 0.05]).
DEALER = {"launch_lap_s": (0.525, 0.53), "rotor_rpm": (20.0, 20.2), "spread": 0.002,
          "rotor_tau_s": (300.0, 300.0), "bounce_pockets": (12.0, 1.0, 10, 14),
          "release_deg": [300.0, 5.0]}
BIASED = {"bias": [17, 0.05]}
WHEEL_PRESETS = {"dealer": DEALER, "biased": BIASED}


def wheel_from(text):
    """The --wheel option: a preset name (dealer, biased) or a JSON object of WHEEL constants."""
    import json
    if text is None or text == "":
        return None
    if text in WHEEL_PRESETS:
        return dict(WHEEL_PRESETS[text])
    d = json.loads(text)
    if not isinstance(d, dict) or any(k not in WHEEL for k in d):
        raise ValueError("--wheel: a preset (%s) or a JSON object of %s" % (", ".join(WHEEL_PRESETS), ", ".join(WHEEL)))
    return d

IMPERFECTION_KEYS = ("jitter_us", "miss", "spurious", "bounce", "stray", "lap_jitter", "chatter")


def imperfections_from(given):
    """None/{} -> all off; a dict with jitter_us (sd of ball/pocket/void edge times), miss
    (probability a ball or pocket pulse is missed), spurious (mean spurious pulses per spin),
    bounce (contact bounce on VOID and pocket sensors: True/False), and the ball-track artefacts
    an independent simulator's feeds showed (issue 13): stray (probability a spin has a stray
    ball-track pulse half a lap after the ball's second pass), lap_jitter (probability a spin has
    one lap whose passes are all 1-3 ms early or late), chatter (mean chattering ball-track
    pulses a spin: the pulse broken into 2-4)."""
    out = {"jitter_us": 0.0, "miss": 0.0, "spurious": 0.0, "bounce": False,
           "stray": 0.0, "lap_jitter": 0.0, "chatter": 0.0}
    for k, v in (given or {}).items():
        if k not in out:
            raise ValueError("unknown imperfection %r (known: %s)" % (k, ", ".join(IMPERFECTION_KEYS)))
        out[k] = v
    if out["jitter_us"] < 0 or not (0 <= out["miss"] <= 1) or out["spurious"] < 0 \
            or not (0 <= out["stray"] <= 1) or not (0 <= out["lap_jitter"] <= 1) or out["chatter"] < 0:
        raise ValueError("imperfections out of range: %r" % (out,))
    return out


REALISTIC = {"jitter_us": 40.0, "miss": 0.01, "spurious": 0.3, "bounce": True}
# REALISTIC plus the ball-track artefacts of issue 13, each on about one spin in five to ten.
NOISY = dict(REALISTIC, stray=0.15, lap_jitter=0.15, chatter=0.2)


def _signal_names(geometry):
    return (["A", "B", "Z"] + ["BALL%d" % i for i in range(len(geometry["ball_sensors_deg"]))]
            + ["POCKET%d" % i for i in range(len(geometry["pocket_sensors_deg"]))] + ["VOID", "RESET"])


GEOMETRY_KEYS = ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg")


def geometry_from(given) -> dict:
    """A feed header dict from a feed header or a board file (boards/*.json): its geometry, its
    `board` name if any, and `signals` completed. Pins, link and spin settings are not the wheel's."""
    src = DEFAULT_GEOMETRY if given is None else given
    if not isinstance(src, dict):
        raise ValueError("geometry must be a JSON object")
    g = {}
    for k in GEOMETRY_KEYS:
        if k not in src:
            raise ValueError("geometry lacks %r" % k)
        g[k] = src[k]
    if isinstance(src.get("board"), str):
        g["board"] = src["board"]
    g["signals"] = _signal_names(g)
    feedfmt.check_header(g, 0)
    return g
