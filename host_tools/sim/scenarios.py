"""Named fault and misplay scenarios (pannes et fausses manœuvres), and what a correct controller reports.

Each scenario is injected into one spin by the simulator; the truth file names it in `fault`.
`EXPECTED` lists the reports that count as the controller having caught it: `void:<reason>` or
`fault:<code>` (docs/integrators/wheel-events.md). `rotor_not_actuated` and `rotor_pushed_same_way` break Article 53
after a coup played: the spin before them is a valid one in every plan with a fault one spin in
two or fewer. Imperfections (jitter, a missed or spurious pulse, contact bounce)
are not scenarios: a spin with only imperfections stays valid.
"""

SCENARIOS = {
    "same_direction": "ball launched the same way as the rotor",
    "rotor_not_reversed": "rotor turned the same way as the previous spin",
    "rotor_not_actuated": "rotor left turning after the spin before, the ball launched again (nothing moved the rotor)",
    "rotor_pushed_same_way": "rotor pushed the way it already turns after the spin before, without a stop (it speeds up)",
    "few_laps": "ball launched so weakly it makes fewer than 4 laps",
    "weak_throw": "ball thrown so weakly it makes 1.5-1.7 laps (one slow pass of the sensors, or two)",
    "launch_slow": "first lap slower than the launch limit (about 1.1-1.35 s)",
    "rotor_stopping": "rotor slows down and stops while the ball runs",
    "ball_off_wheel": "ball jumps out of the wheel, on the track or at the drop",
    "void_button": "a chip falls into the wheel: the croupier presses VOID and takes the ball back",
    "sensor_stuck": "a ball-track or pocket sensor stays active",
    "sensor_dead": "a ball-track or pocket sensor gives no pulse for the whole spin",
    "encoder_loss": "the rotor encoder loses counts (whole quadrature cycles)",
    "power_cut": "the controller loses power while the ball runs or bounces, and restarts",
}

EXPECTED = {
    "same_direction": ("void:same_direction",),
    "rotor_not_reversed": ("void:rotor_not_reversed",),
    "rotor_not_actuated": ("void:rotor_not_actuated",),
    "rotor_pushed_same_way": ("void:rotor_not_reversed",),
    "few_laps": ("void:few_laps", "void:launch_slow"),
    "weak_throw": ("void:few_laps", "void:launch_slow"),
    "launch_slow": ("void:launch_slow",),
    "rotor_stopping": ("void:rotor_slow", "void:no_result"),
    "ball_off_wheel": ("void:ball_off_wheel", "void:no_result"),
    "void_button": ("void:void_button",),
    "sensor_stuck": ("fault:sensor_stuck", "void:sensor_fault"),
    "sensor_dead": ("fault:sensor_silent", "void:sensor_fault", "void:no_result"),
    "encoder_loss": ("fault:encoder_mismatch", "void:encoder_mismatch"),
    "power_cut": ("void:restart",),   # or its ball's number, found at rest after the boot (analysis.judge)
}


# Scenarios where the croupier leaves the rotor turning at the end of the spin before: that spin
# must know (`WheelSimulator.spin(..., then=...)`, or `spins(plan)`).
KEEP_TURNING = ("rotor_not_actuated", "rotor_pushed_same_way")


def parse_list(text: str) -> list[str]:
    """`"all"`, `"none"` or a comma-separated list of scenario names; unknown names raise ValueError."""
    text = (text or "").strip()
    if text in ("", "none"):
        return []
    if text == "all":
        return sorted(SCENARIOS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in SCENARIOS]
    if bad:
        raise ValueError("unknown scenario(s) %s; known: %s" % (", ".join(bad), ", ".join(sorted(SCENARIOS))))
    return names
