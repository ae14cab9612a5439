"""Settings of the controller: board geometry plus the house's spin settings, with safe bounds.

Every setting has a documented default (docs/wheel/settings.md); a value out of its bounds is refused
with a message naming it, never clamped silently: a casino must know what its wheel enforces.
"""

# The house's spin settings, four items each: name, default, low, high (a flat tuple: one object
# in RAM, where a dict of tuples took 2 KB of the Pico's heap). Times are integer microseconds,
# speeds rpm x 10.
SPIN = (
    "min_laps", 4, 1, 20,                        # fewer ball revolutions: void few_laps
    "rnvp_lead_laps_x10", 30, 5, 80,             # call rien ne va plus this many laps x10 before the drop
    "rnvp_max_lap_us", 1800000, 800000, 4000000, # a lap this long calls it at once (safety net)
    "drop_lap_us", 2300000, 1000000, 5000000,    # lap period at which the ball leaves the track
    "drop_wait_x100", 150, 110, 400,             # no pass within this x last period (x100): dropped
    "launch_max_lap_us", 1000000, 300000, 3000000, # first lap slower than this: launch_slow
    "rotor_min_rpm_x10", 50, 10, 400,            # rotor slower at launch or in play: rotor_slow
    "rotor_max_rpm_x10", 600, 100, 1200,         # rotor faster than this at launch: rotor_slow (out of range)
    "confirm_sightings", 0, 0, 12,               # consecutive agreeing sightings (0: max(2, sensors))
    "confirm_sensors", 0, 0, 8,                  # distinct pocket sensors among them (0: all)
    "confirm_span_us", 2500000, 0, 10000000,     # ... over at least this long (docs/wheel/settings.md)
    "pocket_min_us", 5000, 0, 100000,            # shorter pocket pulses are chatter, not a pocket
    "result_timeout_us", 30000000, 3000000, 120000000, # drop to confirmed result, at most
    "learn_drop", 1, 0, 1,                       # 1: learn drop_lap_us from the spins seen
    "void_rotor_not_reversed", 1, 0, 1,          # 1: void, 0: report only (launch.violations)
    "void_same_direction", 1, 0, 1,
    "index_tolerance", 2, 0, 64,                 # counts of disagreement between index and encoder
    "status_us", 500000, 100000, 10000000,
    "stuck_us", 1000000, 100000, 60000000,       # a ball-track sensor held active this long: stuck
    "launch_wait_us", 8000000, 0, 120000000,     # an actuation with no launch this long: ball-track
                                                 # sensors silent (0: off; docs/wheel/settings.md)
    "open_at_boot", 1, 0, 1,
)


def index(name):
    """Where the spin setting `name` starts in SPIN; -1 when it is not one."""
    for i in range(0, len(SPIN), 4):
        if SPIN[i] == name:
            return i
    return -1


def bounds(name):
    """(default, low, high) of the spin setting `name` (KeyError when it is not one)."""
    i = index(name)
    if i < 0:
        raise KeyError(name)
    return SPIN[i + 1], SPIN[i + 2], SPIN[i + 3]


GEOMETRY = ("cpr", "index_offset_deg", "ball_sensors_deg", "pocket_sensors_deg")
# Keys a board file may carry that the spin logic does not use but keeps (pins, link, name...).
PASSIVE = ("board", "name", "pins", "link", "mcu", "calibrated", "notes")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return (isinstance(v, int) or isinstance(v, float)) and not isinstance(v, bool)


def _angles(name, v, least, most):
    if not isinstance(v, (list, tuple)) or len(v) < least or len(v) > most:
        return "%s must be a list of %d to %d angles in degrees" % (name, least, most)
    for a in v:
        if not _is_num(a) or a < -360 or a > 720:
            return "%s: %r is not an angle in degrees" % (name, a)
    return None


def check_one(name, value):
    """Return an error string for one setting, or None when it is acceptable."""
    i = index(name)
    if i >= 0:
        lo, hi = SPIN[i + 2], SPIN[i + 3]
        if not _is_int(value):
            return "%s must be an integer (got %r)" % (name, value)
        if value < lo or value > hi:
            return "%s=%d is out of bounds [%d, %d]" % (name, value, lo, hi)
        return None
    if name == "cpr":
        if not _is_int(value) or value < 37 * 4 or value > 1 << 20 or value % 4:
            return "cpr must be a multiple of 4 between 148 and 1048576 (got %r)" % (value,)
        return None
    if name == "index_offset_deg":
        if not _is_num(value) or value < -360 or value > 720:
            return "index_offset_deg must be an angle in degrees (got %r)" % (value,)
        return None
    if name == "ball_sensors_deg":
        return _angles(name, value, 2, 8)
    if name == "pocket_sensors_deg":
        return _angles(name, value, 1, 8)
    if name in PASSIVE:
        return None
    return "unknown setting %r" % (name,)


def build(given):
    """Full settings from `given` (geometry required, spin settings defaulted).

    Returns (settings, None) or (None, error message). Unknown keys are refused.
    """
    if not isinstance(given, dict):
        return None, "settings must be a dict"
    out = {}
    for i in range(0, len(SPIN), 4):
        out[SPIN[i]] = SPIN[i + 1]
    for k in GEOMETRY:
        if k not in given:
            return None, "missing board setting %r" % (k,)
    for k in given:
        err = check_one(k, given[k])
        if err:
            return None, err
        v = given[k]
        if isinstance(v, tuple):
            v = list(v)
        out[k] = v
    err = coherence(out)
    if err:
        return None, err
    return out, None


def coherence(s):
    """Checks across settings."""
    n = len(s["pocket_sensors_deg"])
    if s["confirm_sensors"] > n:
        return "confirm_sensors=%d but the board has %d pocket sensors" % (s["confirm_sensors"], n)
    if s["confirm_sightings"] == 1:
        # one sighting cannot tell a ball at rest from one bouncing through a pocket (on the
        # simulator 1-of-1 named 322 of 760 valid spins wrong): money would be paid on it
        return "confirm_sightings=1 is refused: a single sighting cannot tell a ball at rest; use 2 or more (0: auto)"
    if confirm_sensors(s) > confirm_sightings(s):
        return "confirm_sensors cannot exceed confirm_sightings"
    if s["rotor_min_rpm_x10"] >= s["rotor_max_rpm_x10"]:
        return "rotor_min_rpm_x10 must be below rotor_max_rpm_x10"
    if s["rnvp_max_lap_us"] >= s["drop_lap_us"]:
        return "rnvp_max_lap_us must be below drop_lap_us"
    if s["launch_max_lap_us"] >= s["rnvp_max_lap_us"]:
        return "launch_max_lap_us must be below rnvp_max_lap_us"
    return None


def confirm_sightings(s):
    """Sightings needed: the setting, or by default two, or one per sensor when there are more."""
    n = len(s["pocket_sensors_deg"])
    return s["confirm_sightings"] or (n if n > 2 else 2)


def confirm_sensors(s):
    """Distinct sensors needed: the setting, or by default all of them (as readers in service)."""
    return s["confirm_sensors"] or len(s["pocket_sensors_deg"])
