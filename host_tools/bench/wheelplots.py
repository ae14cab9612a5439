"""The wheel bench's plots (`make bench ARGS=wheel`, without `--no-plots`): the laps the firmware
saw, how far ahead of the drop it called rien ne va plus, its prediction's error, and how long after
the ball came to rest it named the number; PNG files in the bench's output folder.
"""

from __future__ import annotations

from pathlib import Path


def _save(plt, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plots(records, traces, out: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    if traces:
        fig, axes = plt.subplots(len(traces), 1, figsize=(8, 2.8 * len(traces)), squeeze=False)
        for ax, tr in zip(axes[:, 0], traces):
            truth = tr["truth"]
            xs = [a for a, _ in tr["laps"]]
            ys = [p for _, p in tr["laps"]]
            ax.plot(xs, ys, "o-", ms=3, label="lap period (BALL0)")
            drop = (truth["drop_us"] - truth["launch_us"]) / 1e6
            ax.axvline(drop, color="k", ls="--", label="real drop")
            for ev in tr.get("events", []):
                if ev["ev"] == "rnvp":
                    ax.axvline((ev["t"] - truth["launch_us"]) / 1e6, color="r", label="rien ne va plus")
            ax.set_ylabel("lap (s)")
            ax.set_title("spin %s: %.1f laps, rotor %.1f rpm" % (truth["spin"], truth["laps"], truth["rotor_rpm_x10"] / 10), fontsize=9)
            ax.legend(fontsize=7, loc="upper left")
        axes[-1, 0].set_xlabel("time since launch (s)")
        paths.append(_save(plt, fig, out / "wheel_laps.png"))
    leads = [r["lead_us"] / 1e6 for r in records if r.get("lead_us") is not None]
    if leads:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        ax.hist(leads, bins=50)
        ax.axvline(0, color="r")
        ax.set_xlabel("rien ne va plus lead before the real drop (s); left of red = too late")
        ax.set_ylabel("spins")
        paths.append(_save(plt, fig, out / "wheel_rnvp_lead.png"))
    errs = [r["pred_error_us"] / 1e3 for r in records if r.get("pred_error_us") is not None]
    laps = [r["lead_laps"] for r in records if r.get("lead_laps") is not None]
    if errs:
        fig, axes = plt.subplots(1, 2 if laps else 1, figsize=(11 if laps else 6, 3.5), squeeze=False)
        ax = axes[0, 0]
        ax.hist(errs, bins=60)
        ax.axvline(0, color="k", lw=1)
        ax.set_xlabel("predicted drop - real drop at rien ne va plus (ms); > 0: predicted late")
        ax.set_ylabel("spins")
        if laps:
            ax = axes[0, 1]
            ax.hist(laps, bins=50)
            ax.axvline(0, color="r")
            ax.set_xlabel("laps the ball ran from rien ne va plus to the real drop")
        paths.append(_save(plt, fig, out / "wheel_rnvp_error.png"))
    lat = [r for r in records if r.get("latency_us") is not None and r.get("rule_bound_us") is not None]
    if lat:
        fig, axes = plt.subplots(1, 2, figsize=(12, 5))
        ax = axes[0]
        b = [r["rule_bound_us"] / 1e6 for r in lat]
        l = [r["latency_us"] / 1e6 for r in lat]
        rpm = [(r.get("rotor_rpm_x10") or 0) / 10 for r in lat]
        sc = ax.scatter(b, l, c=rpm, s=6, cmap="viridis")
        m = max(max(b), max(l))
        ax.plot([0, m], [0, m], "k--", lw=1, label="latency = rule bound")
        ax.set_xlabel("confirmation rule's bound: its last sighting of the resting ball ends (s)")
        ax.set_ylabel("result latency after rest (s)")
        fig.colorbar(sc, ax=ax, label="rotor rpm")
        ax.legend(fontsize=8)
        ax = axes[1]
        ax.scatter(rpm, b, s=6, marker="x", label="rule bound", color="C3")
        ax.scatter(rpm, l, s=16, label="result", facecolors="none", edgecolors="C0", linewidths=0.7)
        first = [(rp, r["bound_us"] / 1e6) for rp, r in zip(rpm, lat) if r.get("bound_us") is not None]
        if first:
            ax.scatter([x for x, _ in first], [y for _, y in first], s=4, label="first sighting", color="0.6")
        ax.set_xlabel("rotor rpm at launch")
        ax.set_ylabel("time after the ball's rest (s)")
        ax.legend(fontsize=8)
        paths.append(_save(plt, fig, out / "wheel_latency.png"))
    return paths
