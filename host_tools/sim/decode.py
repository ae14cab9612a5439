"""Decode a feed's sensors the way the geometry says (docs/feed-format.md), independently of the firmware.

Used to check the simulator against its truth, and by the bench for feeds written by other tools
(the lower bound of the result latency: the first sighting of the resting ball). Vectorised with
numpy: the quadrature count is a cumulative sum over the A/B edges.
"""

from __future__ import annotations

import numpy as np

from cylindre.spin.geometry import number_at

# position in the clockwise cycle 00 -> 10 -> 11 -> 01 of state (A << 1) | B
_POS = np.array([0, 3, 1, 2], dtype=np.int64)


def encoder_counts(codes: np.ndarray, levels: np.ndarray, a_code: int, b_code: int) -> np.ndarray:
    """The signed quadrature count after each row (rows other than A/B keep the count)."""
    n = len(codes)
    idx = np.arange(n)
    is_a, is_b = codes == a_code, codes == b_code
    last_a = np.maximum.accumulate(np.where(is_a, idx, -1))
    last_b = np.maximum.accumulate(np.where(is_b, idx, -1))
    a = np.where(last_a >= 0, levels[np.maximum(last_a, 0)], 0).astype(np.int64)
    b = np.where(last_b >= 0, levels[np.maximum(last_b, 0)], 0).astype(np.int64)
    pos = _POS[(a << 1) | b]
    prev = np.concatenate(([0], pos[:-1]))
    d = (pos - prev) % 4
    delta = np.select([d == 1, d == 3], [1, -1], 0)
    return np.cumsum(delta)


def pulses(t_us: np.ndarray, codes: np.ndarray, levels: np.ndarray, code: int):
    """(rise_row, fall_row) pairs of one signal (a pulse still on at the end is dropped)."""
    rows = np.nonzero(codes == code)[0]
    out = []
    on = None
    for r in rows.tolist():
        if levels[r] and on is None:
            on = r
        elif not levels[r] and on is not None:
            out.append((on, r))
            on = None
    return out


def sightings(header: dict, names, t_us, codes, levels):
    """Every pocket-sensor pulse decoded: list of (t_mid_us, sensor index, number).

    The count at the middle of the pulse, since the last rising edge of Z, names the pocket. Pulses
    before the first index pulse are skipped (the rotor's position is not known yet).
    """
    code = {n: i for i, n in enumerate(names)}
    count = encoder_counts(codes, levels, code["A"], code["B"])
    z_rise = np.nonzero((codes == code["Z"]) & (levels == 1))[0]
    z_t = t_us[z_rise]
    out = []
    cpr, off = header["cpr"], header["index_offset_deg"]
    for j, phi in enumerate(header["pocket_sensors_deg"]):
        name = "POCKET%d" % j
        if name not in code:
            continue
        for r1, r2 in pulses(t_us, codes, levels, code[name]):
            mid = (int(t_us[r1]) + int(t_us[r2])) // 2
            row = int(np.searchsorted(t_us, mid, side="right")) - 1
            zi = int(np.searchsorted(z_rise, row, side="right")) - 1
            if zi < 0:
                continue
            since = int(count[row] - count[z_rise[zi]])
            out.append((mid, j, number_at(phi, off, since, cpr)))
    out.sort()
    return out


def arrays_from_changes(names, changes):
    """(t_us, codes, levels) numpy arrays from [(t, signal, level), ...]."""
    code = {n: i for i, n in enumerate(names)}
    t = np.array([c[0] for c in changes], dtype=np.int64)
    k = np.array([code[c[1]] for c in changes], dtype=np.int64)
    l = np.array([c[2] for c in changes], dtype=np.int64)
    return t, k, l
