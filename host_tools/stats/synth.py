"""Synthetic journals: a wheel played for N spins, fair or with a bias planted on purpose, written
into the same tables the daemon writes (`frames`, `events`, `settlements`) plus the croupiers'
duty rows, so that the statistics are tested on what they will read at a table.

The model follows docs/integrators/wheel-events.md and WHEEL.md: one game about every 48 s, rotor reversed each
spin and the ball launched against it, the ball dropping from the track at some bowl angle over
some pocket, then bouncing 8–20 pockets on before it rests. Biases:
  sector=(numbers, share)    a share of the results land uniformly in those numbers
  dealer=(croupier, offset, share, spread)   a share of that croupier's results land `offset`
                             pockets (±spread) after the release pocket, the way the ball ran
  tilt=(angle_deg, share)    a share of the drops happen within ±20° of one bowl angle
"""

from __future__ import annotations

import json
import random

from cylindre.rules import wheel as W

from . import duty
from .games import Record

VOID_REASONS = ("few_laps", "void_button", "same_direction", "launch_slow", "no_result")


def _pocket_after(pocket, k, direction):
    return W.ORDER[(W.position(pocket) + (k if direction >= 0 else -k)) % 37]


def play(spins=1000, seed=1, croupiers=("ana", "bruno", "chloe"), shift_s=1800, game_s=48.0, start=1.7e9,
         void_rate=0.04, a53_rate=0.0, sector=None, dealer=None, tilt=None, fields=True) -> Record:
    """A Record of `spins` results (voids come on top of them). `fields=False` leaves out the
    fields the wheel adds for the statistics (release_pocket, drop_angle_x10, drop_pocket)."""
    rng = random.Random(seed)
    games, voids, launches, duty_rows = [], [], [], []
    t = start
    spin = 0
    rotor = 1
    sector_set = tuple(sector[0]) if sector else ()
    while len(games) < spins:
        spin += 1
        who = croupiers[int((t - start) // shift_s) % len(croupiers)] if croupiers else None
        if croupiers and (not duty_rows or duty_rows[-1][1] != who):
            duty_rows.append((start + int((t - start) // shift_s) * shift_s, who))
        violated = rng.random() < a53_rate
        rotor = rotor if violated else -rotor
        ball = -rotor
        g = {"spin": spin, "at": t, "launch_at": t, "number": None, "source": "event", "ball_dir": ball,
             "rotor_dir": rotor, "rotor_rpm_x10": int(rng.gauss(220, 25)), "launch_lap_us": int(rng.gauss(560000, 40000)),
             "release_pocket": rng.randrange(37) if fields else None, "laps": rng.randint(13, 21),
             "drop_angle_x10": None, "drop_pocket": None,
             "violations": ["rotor_not_reversed"] if violated else [], "croupier": who}
        launches.append(g)
        if rng.random() < void_rate:
            voids.append({"spin": spin, "at": t + 5.0, "reason": rng.choice(VOID_REASONS), "croupier": who})
            t += game_s / 2
            continue
        bounce = max(4, min(30, int(round(rng.gauss(16, 4)))))
        if dealer and who == dealer[0] and rng.random() < dealer[2]:
            number = _pocket_after(g["release_pocket"] if fields else rng.randrange(37),
                                   dealer[1] + rng.randint(-dealer[3], dealer[3]), ball)
        elif sector and rng.random() < sector[1]:
            number = rng.choice(sector_set)
        else:
            number = rng.randrange(37)
        drop_pocket = _pocket_after(number, -bounce, ball)
        if tilt and rng.random() < tilt[1]:
            angle = int(((tilt[0] + rng.uniform(-20, 20)) % 360) * 10)
        else:
            angle = rng.randrange(3600)
        if fields:
            g["drop_pocket"], g["drop_angle_x10"] = drop_pocket, angle
        g["number"] = number
        g["at"] = t + 30.0
        games.append(g)
        t += game_s + rng.uniform(-4, 4)
    rec = Record("T1", games, voids, launches, 0, ["T1"])
    rec.duty = duty_rows
    return rec


def write_journal(path, rec: Record, wheel="T1", boot="b1"):
    """Write `rec` as the daemon would have journaled it (the daemon's own schema, then rows)."""
    from host_tools.table.journal.store import Journal

    j = Journal(path)
    seq = 0
    by_spin = {g["spin"]: g for g in rec.launches}
    ends = {g["spin"]: ("result", g) for g in rec.games}
    ends.update({v["spin"]: ("void", v) for v in rec.voids})
    with j.tx() as db:
        duty.create(db)
        for at, who in getattr(rec, "duty", []):
            duty.set_on_duty(db, wheel, who, at, "synth")

        def put(at, ev):
            nonlocal seq
            seq += 1
            fid = db.execute("INSERT INTO frames (at, wheel, kind, ftype, seq, raw) VALUES (?,?,?,?,?,?)",
                             (at, wheel, "event", "E", seq, b"")).lastrowid
            db.execute("INSERT INTO events (wheel, boot, seq, at, ev, spin, body, frame_id) VALUES (?,?,?,?,?,?,?,?)",
                       (wheel, boot, seq, at, ev["ev"], ev.get("spin"), json.dumps(ev, sort_keys=True), fid))

        for spin in sorted(by_spin):
            g = by_spin[spin]
            us = int((g["launch_at"] - 1.7e9) * 1e6)
            launch = {"ev": "launch", "t": us, "spin": spin, "ball_dir": g["ball_dir"], "rotor_dir": g["rotor_dir"],
                      "rotor_rpm_x10": g["rotor_rpm_x10"], "lap_us": g["launch_lap_us"], "violations": g["violations"]}
            if g["release_pocket"] is not None:
                launch["release_pocket"] = g["release_pocket"]
            put(g["launch_at"], launch)
            kind, end = ends[spin]
            if kind == "void":
                put(end["at"], {"ev": "void", "t": us + 5_000_000, "spin": spin, "reason": end["reason"], "detail": ""})
                continue
            put(g["launch_at"] + 12, {"ev": "rnvp", "t": us + 12_000_000, "spin": spin, "laps": g["laps"] - 3,
                                      "lap_us": [], "predicted_drop_t": None, "lead_us": None, "why": "prediction"})
            drop = {"ev": "drop", "t": us + 18_000_000, "spin": spin, "laps": g["laps"], "lap_us": [],
                    "last_pass_t": us + 17_500_000, "predicted_left_x10": None}
            if g["drop_pocket"] is not None:
                drop["drop_pocket"], drop["drop_angle_x10"] = g["drop_pocket"], g["drop_angle_x10"]
            put(g["launch_at"] + 18, drop)
            put(g["at"], {"ev": "result", "t": us + 30_000_000, "spin": spin, "number": g["number"],
                          "rest_t": us + 29_000_000, "sightings": [], "laps": g["laps"]})
            db.execute("INSERT INTO settlements (wheel, spin, number, at, staked, paid, result) VALUES (?,?,?,?,?,?,?)",
                       (wheel, spin, g["number"], g["at"], 0, 0, "{}"))
    j.close()
