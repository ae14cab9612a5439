"""Where the pockets are: naming the pocket a sensor sees from the encoder count.

Conventions of docs/integrators/feed-format.md: angles in degrees clockwise from the index detector; pocket 0's
centre is at index_offset_deg + 360 * c / cpr, c the count since the index's rising edge; the
wheel order (ordre du cylindre) runs clockwise from 0.
"""

WHEEL_ORDER = (0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24,
               16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26)
POCKETS = 37


def pocket_index(sensor_deg, offset_deg, since_index, cpr):
    """Index k in WHEEL_ORDER of the pocket centred nearest `sensor_deg` (middle of a pulse)."""
    theta0 = offset_deg + 360.0 * since_index / cpr
    x = (sensor_deg - theta0) * POCKETS / 360.0
    k = int(x + 0.5) if x >= 0 else -int(-x + 0.5)
    return k % POCKETS


def number_at(sensor_deg, offset_deg, since_index, cpr):
    """The winning-number name of that pocket."""
    return WHEEL_ORDER[pocket_index(sensor_deg, offset_deg, since_index, cpr)]
