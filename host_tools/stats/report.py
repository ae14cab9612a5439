"""The statistics for people: a text summary (French labels, English beside them once), PNG plots
and a PDF report of them (matplotlib, its Agg backend: no display needed)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cylindre.rules import wheel as W

COLOURS = {"rouge": "#c8102e", "noir": "#111111", None: "#00843d"}


def _p(p):
    return "%.2g" % p if p >= 1e-4 else "<1e-4"


def _t(at):
    return dt.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M") if at else "—"


def text(a: dict) -> str:
    """The summary `cylindre stats` prints."""
    L = []
    fr = a["numbers"]
    pace = a["pace"]
    L.append(f"Cylindre {a['wheel'] or '?'} — {a['games']} coups (games) du {_t(pace['first_at'])} au {_t(pace['last_at'])}"
             + (f"; {a['skipped']} événements illisibles ignorés" if a["skipped"] else ""))
    if not a["games"]:
        v = a["voids"]
        L.append(f"Aucun coup dans ce journal ({v['launches']} lancers, {v['voids']} nuls): rien à tester.")
        return "\n".join(L)
    L.append(f"Seuil: erreur de famille alpha = {a['alpha']} (Holm sur {len(a['family'])} tests)")
    if a["alarms"]:
        L.append("ALARMES (significatives après correction): " + ", ".join(a["alarms"]))
    else:
        L.append("Aucune alarme: rien de significatif après correction.")
    L.append("")
    L.append(f"Numéros (number frequencies): chi2 = {fr['chi2']:.1f}, {fr['df']} ddl, p = {_p(fr['p'])}"
             + ("" if fr["valid"] else " (trop peu de coups: hors famille)"))
    L.append("  chauds (hot): " + " ".join(f"{k}×{fr['counts'][k]}" for k in fr["hot"])
             + "   froids (cold): " + " ".join(f"{k}×{fr['counts'][k]}" for k in fr["cold"]))
    arc = a["arc"]
    if arc["numbers"]:
        L.append(f"Arc le plus chaud (hottest arc): {' '.join(map(str, arc['numbers']))}: {arc['hits']} / attendu "
                 f"{arc['expected']:.1f}, z = {arc['z']:+.2f}, p = {_p(arc['p'])} (Bonferroni sur {arc['scanned']} arcs)")
    L.append("Secteurs (sectors), z binomial:")
    for s in a["sectors"]:
        L.append(f"  {s['name']:<10} {s['pockets']:>2} cases  {s['hits']:>6} / attendu {s['expected']:8.1f}  "
                 f"z = {s['z']:+.2f}  p = {_p(s['p'])}")
    L.append("Séries (runs), Wald–Wolfowitz, zéro exclu:")
    for r in a["runs"]:
        L.append(f"  {r['chance']:<14} {r['runs']:>6} séries  z = {r['z']:+.2f}  p = {_p(r['p'])}  "
                 f"plus longue: {r['longest']} × {r['longest_of']}")
    se = a["serial"]
    L.append(f"Corrélation sérielle (serial): lag-1 r = {se['lag1_r']:+.3f} (p = {_p(se['lag1_p'])}); "
             f"écart au coup suivant sur le cylindre: chi2 = {se['steps_chi2']:.1f}, p = {_p(se['steps_p'])}")
    d = a["drop"]
    if d["n"]:
        L.append(f"Zone de chute (drop zone): {d['n']} chutes, angle principal {d['main_angle_deg']:.0f}°, "
                 f"concentration R = {d['concentration']:.3f} (Rayleigh p = {_p(d['rayleigh_p'])})")
    else:
        L.append("Zone de chute: le journal ne porte pas drop_angle_x10 (firmware antérieur)")
    if d["landing_n"]:
        L.append(f"Distance chute → case (landing distance): moyenne {d['landing_mean']:.1f} cases sur {d['landing_n']} coups")
    if pace["median"] is not None:
        L.append(f"Cadence (games per hour): médiane {pace['median']}, min {pace['min']}, max {pace['max']} "
                 f"sur {pace['hours']} heures (première et dernière heures partielles exclues)")
    v = a["voids"]
    rate = "—" if v["rate"] is None else f"{100 * v['rate']:.1f} %"
    L.append(f"Coups nuls (voids): {v['voids']} sur {v['launches']} lancers ({rate}): "
             + (", ".join(f"{k} {n}" for k, n in v["by_reason"].items()) or "aucun"))
    a53 = a["article53"]
    L.append(f"Article 53: {a53['launches_with_violation']} lancers en infraction "
             + (str(a53["by_kind"]) if a53["by_kind"] else ""))
    L.append("Par croupier (per croupier on duty):")
    for c in a["croupiers"]:
        rpm, laps = c["rotor_rpm"], c["laps"]
        sig = (f"signature sur {c['signature_n']}: chi2 p = {_p(c['signature_p'])}, Rayleigh p = {_p(c['signature_rayleigh_p'])}, "
               f"pic à {c['signature_peak']} cases" if c["signature_n"] else "signature: pas de release_pocket")
        L.append(f"  {c['croupier']:<12} {c['games']:>5} coups, {c['voids']} nuls; rotor "
                 + (f"{rpm['mean']:.1f}±{rpm['sd']:.1f} tr/min" if rpm["n"] else "—")
                 + "; tours de bille " + (f"{laps['mean']:.1f}±{laps['sd']:.1f}" if laps["n"] else "—") + "; " + sig)
    L.append("")
    L.append("Famille de tests (p brut → p Holm):")
    for f in a["family"]:
        L.append(f"  {'*' if f['significant'] else ' '} {f['test']:<28} {_p(f['p']):>8} → {_p(f['p_holm'])}")
    return "\n".join(L)


def names(a: dict) -> list[str]:
    """The names of the figures `figures(a)` draws, in order (the PNG files without .png)."""
    return ["numeros", "secteurs", "chute", "cadence"] + (["croupiers"] if any(c["signature_n"] for c in a["croupiers"]) else [])


def figures(a: dict):
    """[(name, matplotlib Figure)] for the PNGs and the PDF."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    out = []
    fr = a["numbers"]
    fig = Figure(figsize=(11, 4))
    ax = fig.subplots()
    xs = list(range(37))
    ax.bar(xs, [fr["counts"][n] for n in W.ORDER], color=[COLOURS[W.colour(n)] for n in W.ORDER])
    ax.set_xticks(xs, [str(n) for n in W.ORDER], fontsize=7)
    if fr["n"]:
        ax.axhline(fr["n"] / 37, color="#888", linestyle="--", label="attendu")
    ax.set_title(f"Fréquence des numéros, ordre du cylindre — chi2 {fr['chi2']:.1f} (36 ddl), p = {_p(fr['p'])}")
    ax.set_ylabel("coups")
    out.append(("numeros", fig))

    fig = Figure(figsize=(9, 4))
    ax = fig.subplots()
    names = [s["name"] for s in a["sectors"]] + ["séries " + r["chance"] for r in a["runs"]]
    zs = [s["z"] for s in a["sectors"]] + [r["z"] for r in a["runs"]]
    ax.barh(names, zs, color=["#c8102e" if abs(z) > 2.576 else "#4a6fa5" for z in zs])
    for z in (-2.576, 2.576):
        ax.axvline(z, color="#888", linestyle="--")
    ax.set_title("Secteurs et séries: z (tirets: |z| = 2.576, p = 0.01 avant correction)")
    ax.invert_yaxis()
    fig.tight_layout()
    out.append(("secteurs", fig))

    d = a["drop"]
    fig = Figure(figsize=(11, 4.5))
    ax1 = fig.add_subplot(1, 2, 1, projection="polar")
    import math
    ax1.bar([math.radians(10 * i + 5) for i in range(36)], d["zone_10deg"], width=math.radians(10), color="#4a6fa5")
    ax1.set_title("Zone de chute (angle de la cuvette)" if d["n"] else "Zone de chute: pas de données")
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.bar(range(37), d["landing_hist"], color="#4a6fa5")
    ax2.set_title("Distance chute → case (cases, sens de la bille)")
    ax2.set_xlabel("cases")
    out.append(("chute", fig))

    pace, v = a["pace"], a["voids"]
    fig = Figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(range(len(pace["per_hour"])), pace["per_hour"], marker="o", color="#4a6fa5")
    ax1.set_title("Coups par heure")
    ax1.set_xlabel("heure du journal")
    reasons = list(v["by_reason"])
    ax2.bar(reasons, [v["by_reason"][r] for r in reasons], color="#a5674a")
    ax2.set_title(f"Coups nuls par motif ({v['voids']} / {v['launches']} lancers)")
    ax2.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.tight_layout()
    out.append(("cadence", fig))

    cs = [c for c in a["croupiers"] if c["signature_n"]]
    if cs:
        fig = Figure(figsize=(11, 2.6 * len(cs)))
        axes = fig.subplots(len(cs), 1, squeeze=False)
        for ax, c in zip(axes[:, 0], cs):
            ax.bar(range(37), c["signature_hist"], color="#4a6fa5")
            ax.axhline(c["signature_n"] / 37, color="#888", linestyle="--")
            ax.set_title(f"{c['croupier']}: lâcher → case ({c['signature_n']} coups), chi2 p = {_p(c['signature_p'])}, "
                         f"Rayleigh p = {_p(c['signature_rayleigh_p'])}", fontsize=9)
        fig.tight_layout()
        out.append(("croupiers", fig))
    return out


def write(a: dict, out_dir) -> list[Path]:
    """PNG per figure and report.pdf (the summary first) into out_dir; the paths written."""
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = figures(a)
    paths = []
    for name, fig in figs:
        p = out / f"{name}.png"
        fig.savefig(p, dpi=110)
        paths.append(p)
    pdf = out / "report.pdf"
    with PdfPages(pdf) as book:
        lines = text(a).splitlines()
        for i in range(0, len(lines), 60):
            page = Figure(figsize=(8.27, 11.69))
            page.text(0.05, 0.97, "\n".join(lines[i:i + 60]), va="top", family="monospace", fontsize=6.5)
            book.savefig(page)
        for _, fig in figs:
            book.savefig(fig)
    paths.append(pdf)
    return paths
