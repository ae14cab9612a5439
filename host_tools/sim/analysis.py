"""The wheel bench's arithmetic: events matched to the truth of each spin, judged, and summed up.

Pure functions over plain dicts, so the figures can be checked on known inputs (tests) and the
bench can run them on feeds from any simulator that writes the documented truth file.
"""

from __future__ import annotations

import math

from .physics import BallTrack
from .scenarios import EXPECTED

DECISIVE = ("result", "void")
OVER_RULE_US = 50_000      # a result later than the rule's bound by more than this is counted


LEARNT_FROM = 20     # the spin of a wheel from which the drop prediction is judged learnt (issue 13)

def confirm_rule(geometry: dict, overrides: dict | None = None) -> tuple[int, int, int, int]:
    """(sightings, distinct sensors, shortest pulse in us, span in us) the firmware needs to confirm a number
    on this wheel with these spin settings, resolved by the firmware's own settings code (the
    auto values of confirm_sightings / confirm_sensors). ValueError if the firmware refuses them."""
    from cylindre.replay import settings_from
    from cylindre.spin.settings import build, confirm_sensors, confirm_sightings

    s, err = build(settings_from(geometry, overrides))
    if s is None:
        raise ValueError(err)
    return confirm_sightings(s), confirm_sensors(s), s["pocket_min_us"], s["confirm_span_us"]


def rule_bound(sightings, rest_us: int, number: int, need: int, sensors: int, min_us: int = 0,
               span_us: int = 0, until_us: int | None = None) -> int | None:
    """Microseconds after `rest_us` at which the confirmation rule could first be met by
    sightings of the resting ball, or None if it never is (before `until_us`).

    `sightings` are the decoder's (t_mid, sensor, number, t_rise, t_fall), any order. One counts
    if its middle is at or after the rest and it lasts at least `min_us`; it is known at its fall
    (the firmware names the pocket from the pulse's middle, so it can only tell at its end). The
    rule: `need` consecutive agreeing sightings from at least `sensors` distinct sensors, the first
    of them `span_us` or more before the last; a sighting of another number starts the run again.
    (A pass of the pocket with no pulse also does in the firmware: not modelled here, so a missed
    pulse shows as latency over this bound.)"""
    run, used, first = 0, set(), 0
    for s in sorted(sightings, key=lambda x: x[4]):
        t_mid, sensor, num, t_rise, t_fall = s[:5]
        if t_mid < rest_us or t_fall - t_rise < min_us:
            continue
        if until_us is not None and t_mid >= until_us:
            break
        if num != number:
            run, used = 0, set()
            continue
        if run == 0:
            first = t_mid
        run += 1
        used.add(sensor)
        if run >= need and len(used) >= sensors and t_mid - first >= span_us:
            return t_fall - rest_us
    return None


def ball_laps(truth: dict, t_us: int) -> float | None:
    """Laps the ball has run on the track since its launch at feed time `t_us`, from the truth's
    `ball_track` (the simulator's closed-form run: w0, a, c, wc); None without it."""
    bt = truth.get("ball_track")
    if not isinstance(bt, dict) or truth.get("launch_us") is None:
        return None
    ball = BallTrack(bt["w0"], bt["a"], bt["c"], bt["wc"])
    return float(ball.angle((t_us - truth["launch_us"]) / 1e6)) / (2 * math.pi)


def percentile(values, q: float) -> float | None:
    """The q-th percentile (0..100), linear between closest ranks (numpy's default); None if empty."""
    xs = sorted(values)
    if not xs:
        return None
    if not 0 <= q <= 100:
        raise ValueError("percentile q must be within 0..100")
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values) -> dict:
    """n, min, p1, median, p99, max, mean of a list of numbers (None when empty)."""
    xs = list(values)
    if not xs:
        return {"n": 0, "min": None, "p1": None, "median": None, "p99": None, "max": None, "mean": None}
    return {"n": len(xs), "min": min(xs), "p1": percentile(xs, 1), "median": percentile(xs, 50),
            "p99": percentile(xs, 99), "max": max(xs), "mean": sum(xs) / len(xs)}


def windows(truths: list[dict]) -> list[int]:
    """Start time of each spin's window: `start_us` if the truth has it, else 1 s before launch."""
    out = []
    for tr in truths:
        s = tr.get("start_us")
        out.append(int(s) if s is not None else int(tr["launch_us"]) - 1_000_000)
    return out


def assign(events: list[dict], truths: list[dict]) -> list[list[dict]]:
    """Split events among spins.

    By time first: spin i owns [start_i, start_{i+1}) (earlier events are dropped). Then an event
    that names a firmware spin (`spin`) goes to the spin whose window holds that spin's `launch`,
    wherever its time falls: a void decided after the next spin's window opened still belongs
    to its own spin.
    """
    starts = windows(truths)
    per_time = []
    i = 0
    for ev in sorted(events, key=lambda e: e["t"]):
        t = ev["t"]
        if not starts or t < starts[0]:
            continue
        while i + 1 < len(starts) and t >= starts[i + 1]:
            i += 1
        per_time.append((i, ev))
    owner = {}
    for i, ev in per_time:
        if ev.get("ev") == "launch" and ev.get("spin") is not None and ev["spin"] not in owner:
            owner[ev["spin"]] = i
    per = [[] for _ in truths]
    for i, ev in per_time:
        fw_spin = ev.get("spin") if ev.get("ev") != "status" else None
        per[owner.get(fw_spin, i)].append(ev)
    return per


def label(ev: dict) -> str | None:
    """`result`, `void:<reason>`, `fault:<code>`, or None for other events."""
    kind = ev.get("ev")
    if kind == "result":
        return "result"
    if kind == "void":
        return "void:%s" % ev.get("reason")
    if kind == "fault":
        return "fault:%s" % ev.get("code")
    return None


def judge(truth: dict, events: list[dict], bound_us: int | None = None, rule_us: int | None = None) -> dict:
    """One spin's record: what the firmware reported against what really happened.

    bound_us: the first sighting of the resting ball after its rest (default: the truth's
    `seen_us`); rule_us: when the confirmation rule could first be met (`rule_bound`)."""
    labels = [l for l in (label(e) for e in events) if l]
    decisive = next((e for e in events if e.get("ev") in DECISIVE), None)
    result = next((e for e in events if e.get("ev") == "result"), None)
    rnvp = next((e for e in events if e.get("ev") == "rnvp"), None)
    fault = truth.get("fault")
    valid = bool(truth.get("valid", fault is None))
    rec = {"spin": truth.get("spin"), "fault": fault, "valid": valid, "truth_number": truth.get("number"),
           "labels": labels, "number": result.get("number") if result else None,
           "rotor_rpm_x10": truth.get("rotor_rpm_x10")}
    if valid:
        if decisive is None:
            outcome = "missing"
        elif decisive["ev"] == "void":
            outcome = "void"
        elif decisive.get("number") == truth.get("number"):
            outcome = "correct"
        else:
            outcome = "wrong"
        rec["outcome"] = outcome
    elif fault == "power_cut" and truth.get("number") is not None:
        # the restarted board voids the spin if it sees the ball still running on the track, and
        # names it by its ball at rest if not (cut after the drop, or in the ball's last lap with
        # no pass after the boot: docs/internals/spin-logic.md, "Restart"); a result of another
        # number is paid wrongly
        rec["caught"] = result is not None and result.get("number") == truth["number"] or "void:restart" in labels
        rec["paid"] = result is not None and result.get("number") != truth["number"]
        rec["outcome"] = "caught" if rec["caught"] else ("paid" if rec["paid"] else (
            "other_void" if any(l.startswith("void:") for l in labels) else "missed"))
    else:
        expected = EXPECTED.get(fault or "", ())
        rec["caught"] = any(l in expected for l in labels)
        rec["paid"] = result is not None
        voided = any(l.startswith("void:") for l in labels)
        if rec["caught"]:
            rec["outcome"] = "caught"
        elif result is not None:
            rec["outcome"] = "paid"
        elif voided:
            rec["outcome"] = "other_void"
        else:
            rec["outcome"] = "missed"
    drop = truth.get("drop_us")
    if drop is not None and valid and rec["outcome"] != "void":      # a voided spin owes no call
        if rnvp is not None:
            rec["lead_us"] = drop - rnvp["t"]
            rec["rnvp_late"] = rnvp["t"] >= drop
            pred = rnvp.get("predicted_drop_t")
            rec["pred_error_us"] = pred - drop if isinstance(pred, int) else None
            at_call, at_drop = ball_laps(truth, rnvp["t"]), ball_laps(truth, drop)
            rec["lead_laps"] = at_drop - at_call if at_call is not None and at_drop is not None else None
        else:
            rec["lead_us"] = None
            rec["rnvp_late"] = True
    rest = truth.get("rest_us")
    if valid and rest is not None and result is not None and rec["outcome"] == "correct":
        rec["latency_us"] = result["t"] - rest
        rec["bound_us"] = bound_us if bound_us is not None else (
            truth["seen_us"] - rest if truth.get("seen_us") is not None else None)
        rec["rule_bound_us"] = rule_us
    return rec


def aggregate(records: list[dict]) -> dict:
    """All the bench's figures from the spin records."""
    valid = [r for r in records if r["valid"]]
    out: dict = {"spins": len(records), "valid": len(valid)}
    counts = {"correct": 0, "wrong": 0, "void": 0, "missing": 0}
    for r in valid:
        counts[r["outcome"]] += 1
    out["valid_outcomes"] = counts
    out["correct_rate"] = counts["correct"] / len(valid) if valid else None
    out["valid_failures"] = [{"chunk": r.get("chunk"), "spin": r["spin"], "outcome": r["outcome"],
                              "truth": r["truth_number"], "reported": r["number"], "labels": r["labels"]}
                             for r in valid if r["outcome"] != "correct"][:20]
    out["fault_failures"] = [{"chunk": r.get("chunk"), "spin": r["spin"], "fault": r["fault"],
                              "outcome": r["outcome"], "labels": r["labels"]}
                             for r in records if not r["valid"] and r["outcome"] in ("paid", "missed")][:20]
    table: dict = {}
    for r in records:
        if r["valid"]:
            continue
        row = table.setdefault(r["fault"], {"spins": 0, "caught": 0, "other_void": 0, "paid": 0, "missed": 0,
                                            "with_result": 0, "reports": {}})
        row["spins"] += 1
        row[r["outcome"]] += 1
        row["with_result"] += 1 if r["paid"] else 0      # a number reported, caught or not
        for l in sorted(set(r["labels"])) or ["(nothing)"]:
            row["reports"][l] = row["reports"].get(l, 0) + 1
    out["faults"] = {k: table[k] for k in sorted(table)}
    leads = [r["lead_us"] for r in valid if r.get("lead_us") is not None]
    out["rnvp_lead_us"] = summary(leads)
    out["rnvp_late"] = sum(1 for r in valid if r.get("rnvp_late"))
    out["rnvp_missing"] = sum(1 for r in valid if "lead_us" in r and r["lead_us"] is None)
    errs = [r["pred_error_us"] for r in valid if r.get("pred_error_us") is not None]
    sig, ab = summary(errs), summary([abs(e) for e in errs])
    out["rnvp_error_us"] = {"n": sig["n"], "median": sig["median"], "p1": sig["p1"], "p99": sig["p99"],
                            "abs_median": ab["median"], "abs_p99": ab["p99"], "abs_max": ab["max"]}
    # from the 20th spin of a wheel (a chunk of the bench, a feed): the controller has learnt it
    late = [abs(r["pred_error_us"]) for r in valid if r.get("pred_error_us") is not None
            and isinstance(r.get("spin"), int) and r["spin"] >= LEARNT_FROM]
    lab = summary(late)
    out["rnvp_error_us"]["learnt"] = {"n": lab["n"], "abs_median": lab["median"], "abs_p99": lab["p99"],
                                      "abs_max": lab["max"]}
    out["rnvp_unpredicted"] = sum(1 for r in valid if r.get("lead_us") is not None and r.get("pred_error_us") is None)
    laps = summary([r["lead_laps"] for r in valid if r.get("lead_laps") is not None])
    out["rnvp_lead_laps"] = {"n": laps["n"], "min": laps["min"], "median": laps["median"], "p99": laps["p99"]}
    lat = [r for r in valid if r.get("latency_us") is not None]
    out["result_latency_us"] = summary([r["latency_us"] for r in lat])
    bounded = [r for r in lat if r.get("bound_us") is not None]
    out["result_bound_us"] = summary([r["bound_us"] for r in bounded])
    out["latency_over_bound_us"] = summary([r["latency_us"] - r["bound_us"] for r in bounded])
    out["latency_below_bound"] = sum(1 for r in bounded if r["latency_us"] < r["bound_us"])
    ruled = [r for r in lat if r.get("rule_bound_us") is not None]
    over = [r["latency_us"] - r["rule_bound_us"] for r in ruled]
    out["result_rule_bound_us"] = summary([r["rule_bound_us"] for r in ruled])
    out["latency_over_rule_us"] = summary(over)
    out["latency_over_rule_late"] = sum(1 for d in over if d > OVER_RULE_US)
    out["latency_over_rule_late_us"] = OVER_RULE_US
    out["latency_below_rule"] = sum(1 for d in over if d < 0)
    out["latency_rule_unknown"] = len(lat) - len(ruled)
    out["latency_over_rule_worst"] = [
        {"chunk": r.get("chunk"), "spin": r["spin"], "latency_us": r["latency_us"], "rule_bound_us": r["rule_bound_us"],
         "rotor_rpm_x10": r.get("rotor_rpm_x10")}
        for r in sorted(ruled, key=lambda r: r["rule_bound_us"] - r["latency_us"])[:10]
        if r["latency_us"] - r["rule_bound_us"] > OVER_RULE_US]
    by_rpm = {}
    for lo in range(0, 60, 5):
        rows = [r for r in bounded if r.get("rotor_rpm_x10") is not None and lo * 10 <= r["rotor_rpm_x10"] < lo * 10 + 50]
        if rows:
            by_rpm["%d-%d" % (lo, lo + 5)] = {"n": len(rows),
                                              "latency_median_us": percentile([r["latency_us"] for r in rows], 50),
                                              "bound_median_us": percentile([r["bound_us"] for r in rows], 50),
                                              "bound_max_us": max(r["bound_us"] for r in rows)}
            rule = [r["rule_bound_us"] for r in rows if r.get("rule_bound_us") is not None]
            by_rpm["%d-%d" % (lo, lo + 5)]["rule_median_us"] = percentile(rule, 50)
    out["latency_by_rotor_rpm"] = by_rpm
    return out
