"""A feed written by another simulator — here a deliberately simple, independent one written from
docs/integrators/feed-format.md alone — is read, replayed and judged by the bench like ours.

Rotor at constant speed, ball with constant angular deceleration, no bounce: the ball drops into
the pocket under it and rests there. Only the documented conventions tie it to the firmware.
"""

import json
import math

import pytest

from host_tools.bench import wheel as bench

ORDER = [0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10, 5, 24, 16, 33, 1, 20, 14,
         31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26]
CPR = 800
OFFSET = 40.0
BALL = [30.0, 35.0]
POCKET = [250.0]


def _spin(t0, rotor_dir, theta0, rpm=18.0, lap0=0.55, decel=0.55):
    """Changes (t_us, signal, level) and truth of one spin starting at t0 (s) with the rotor's index mark at theta0."""
    changes = []
    w_r = rotor_dir * rpm * 6.0                         # deg/s, signed
    end = t0 + 35.0
    # encoder: count state n = floor(theta * CPR / 360); A = n%4 in (1, 2), B = n%4 in (2, 3)
    n = math.floor(theta0 * CPR / 360)
    step = 360.0 / CPR
    t = t0
    theta = theta0
    while True:
        if rotor_dir > 0:
            nxt = (n + 1) * step
            t = t0 + (nxt - theta0) / w_r
            new = n + 1
        else:
            nxt = n * step
            t = t0 + (nxt - theta0) / w_r
            new = n - 1
        if t >= end:
            break
        changed_a = ((n % 4) in (1, 2)) != ((new % 4) in (1, 2))
        lvl = ((new % 4) in (1, 2)) if changed_a else ((new % 4) in (2, 3))
        us = int(round(t * 1e6))
        changes.append((us, "A" if changed_a else "B", int(lvl)))
        if new % CPR == 0:
            changes.append((us, "Z", 1))
        if n % CPR == 0:
            changes.append((us, "Z", 0))
        n = new
    # ball: launched clockwise against a counter-clockwise rotor, constant deceleration
    ball_dir = -rotor_dir
    w0 = 360.0 / lap0
    launch = t0 + 2.0
    phi0 = 100.0
    t_drop = (w0 - 360.0 / 2.3) / (decel * 180 / math.pi)
    a = decel * 180 / math.pi
    s_drop = w0 * t_drop - a * t_drop ** 2 / 2
    for i, psi in enumerate(BALL):
        s = ((psi - phi0) * ball_dir) % 360.0
        while s < s_drop:
            tt = (w0 - math.sqrt(w0 * w0 - 2 * a * s)) / a
            on = int(round((launch + tt) * 1e6))
            changes += [(on, "BALL%d" % i, 1), (on + 3000, "BALL%d" % i, 0)]
            s += 360.0
    # the ball falls into the pocket under it and rests 1.5 s after the drop
    rest = launch + t_drop + 1.5
    phi_rest = phi0 + ball_dir * s_drop

    def pocket0_at(t):                                  # angle of pocket 0's centre at time t
        return theta0 + w_r * (t - t0) + OFFSET

    k = round(((phi_rest - pocket0_at(rest)) % 360.0) / (360.0 / 37)) % 37
    # pocket sensor: on while the pocket's centre is within 3 degrees of it, from rest to the end
    t = rest
    while t < end - 1.0:
        ang = (pocket0_at(t) + k * 360.0 / 37 - POCKET[0] + 180.0) % 360.0 - 180.0   # centre - sensor
        if abs(ang) <= 3.0:
            t_on = t
            while abs((pocket0_at(t) + k * 360.0 / 37 - POCKET[0] + 180.0) % 360.0 - 180.0) <= 3.0:
                t += 0.001
            changes += [(int(t_on * 1e6), "POCKET0", 1), (int(t * 1e6), "POCKET0", 0)]
        t += 0.001
    theta_end = theta0 + w_r * (end - t0)
    truth = {"spin": None, "launch_us": int(launch * 1e6), "drop_us": int((launch + t_drop) * 1e6),
             "rest_us": int(rest * 1e6), "number": ORDER[k], "rotor_dir": rotor_dir, "ball_dir": ball_dir,
             "laps": round(s_drop / 360.0, 2), "fault": None, "valid": True}
    return changes, truth, end, theta_end


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    folder = tmp_path_factory.mktemp("foreign")
    header = {"cpr": CPR, "index_offset_deg": OFFSET, "ball_sensors_deg": BALL, "pocket_sensors_deg": POCKET,
              "signals": ["A", "B", "Z", "BALL0", "BALL1", "POCKET0"], "generator": "test_feed_foreign"}
    all_changes, truths = [], []
    t0, theta, d = 0.5, (4 * 7 + 0.5) * 360.0 / CPR, 1
    for i in range(4):
        ch, tr, t0, theta = _spin(t0, d, theta)
        tr["spin"] = i + 1
        all_changes += ch
        truths.append(tr)
        d = -d
        theta = (math.floor(theta * CPR / 360) + 0.5) * 360.0 / CPR   # the next push starts mid-count
    all_changes.sort(key=lambda c: c[0])                   # stable: Z after its A/B edge
    with open(folder / "other.feed", "w") as f:
        f.write("CYLINDRE-FEED 1 " + json.dumps(header) + "\n")
        f.write("# written by a simple independent simulator\n")
        for t, s, l in all_changes:
            f.write("%d\t%s\t%d\n" % (t, s, l))
    with open(folder / "other.feed.truth.jsonl", "w") as f:
        for tr in truths:
            f.write(json.dumps(tr) + "\n")
    return folder, truths


def test_bench_reads_a_foreign_feed(foreign, tmp_path):
    folder, truths = foreign
    res = bench.run_feed_file((folder / "other.feed", {}))
    assert "error" not in res
    recs = res["records"]
    assert [r["truth_number"] for r in recs] == [t["number"] for t in truths]
    assert all(r["outcome"] == "correct" for r in recs), recs
    assert all(r["bound_us"] is not None and r["bound_us"] >= 0 for r in recs)
    assert all(r["lead_us"] > 0 for r in recs)
