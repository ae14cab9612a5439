"""The statistics for people: the summary `cylindre stats` prints, the plots (PNG, matplotlib's
Agg backend: no display needed) and the PDF report (pdf.py) — all in French, numbers the French
way, the verdict first and every test with the games it had (wording.py)."""

from __future__ import annotations

import math
from pathlib import Path

from cylindre.rules import wheel as W

from .wording import FEWEST_FOR_A_RATE, cadence, duree, motif, nombre, p_valeur, periode, pluriel, signe, SECTEURS

COLOURS = {"rouge": "#c8102e", "noir": "#111111", None: "#00843d"}
BLUE, GREY, RUST = "#4a6fa5", "#888888", "#a5674a"
WIDTH_IN = 6.7           # a plot spans the A4 page's text width (170 mm)



def text(a: dict) -> str:
    """The summary `cylindre stats` prints: the verdict first, then one block per test."""
    L = [f"Cylindre {a['wheel'] or '?'} — {pluriel(a['games'], 'coup')}, {periode(a)}"
         + (f"; {pluriel(a['skipped'], 'événement illisible ignoré', 'événements illisibles ignorés')}" if a["skipped"] else "")]
    seal = (a.get("provenance") or {}).get("seal")
    if seal:
        L.append(f"Journal : empreinte SHA-256 {seal['sha256']} ({pluriel(seal['events'], 'événement')}, "
                 f"{pluriel(seal['settlements'], 'règlement')}, jusqu'à {seal['until']!r})")
    L.append("")
    L.append(a["verdict"]["text"])
    if not a["games"]:
        v = a["voids"]
        L.append(f"({pluriel(v['launches'], 'lancer')}, {pluriel(v['voids'], 'coup nul', 'coups nuls')})")
        return "\n".join(L)
    L.append("")
    L.append("Tests (α = %s pour l'ensemble, correction de Holm) :" % nombre(a["alpha"], 2))
    w = max(len(t["label"]) for t in a["tests"])
    for t in a["tests"]:
        ps = f"p = {p_valeur(t['p'])}, p Holm = {p_valeur(t['p_holm'])}" if t["ran"] else ""
        L.append(f"  {t['label']:<{w}}  {nombre(t['n']):>7} / {nombre(t['needed']):<5}  {t['status']:<34} {ps}".rstrip())
    fr = a["numbers"]
    L.append("")
    L.append(f"Numéros : khi-deux = {nombre(fr['chi2'], 1)} ({fr['df']} ddl), p = {p_valeur(fr['p'])}")
    L.append("  chauds : " + "  ".join(f"{k} ({fr['counts'][k]})" for k in fr["hot"])
             + "   froids : " + "  ".join(f"{k} ({fr['counts'][k]})" for k in fr["cold"]))
    arc = a["arc"]
    if arc["numbers"]:
        L.append(f"  arc le plus chaud : {'-'.join(map(str, arc['numbers']))}, {arc['hits']} coups pour "
                 f"{nombre(arc['expected'], 1)} attendus, z = {signe(arc['z'])}, p = {p_valeur(arc['p'])} "
                 f"(Bonferroni sur {arc['scanned']} arcs)")
    d = a["drop"]
    if d["n"]:
        L.append(f"Zone de chute : {pluriel(d['n'], 'chute')}, angle principal {nombre(d['main_angle_deg'])}°, "
                 f"concentration R = {nombre(d['concentration'], 3)} (Rayleigh p = {p_valeur(d['rayleigh_p'])})")
    else:
        L.append("Zone de chute : le journal ne porte pas l'angle de chute (drop_angle_x10, firmware antérieur)")
    if d["landing_n"]:
        L.append(f"Chute → case : {nombre(d['landing_mean'], 1)} cases en moyenne sur {pluriel(d['landing_n'], 'coup')}")
    L.append("Cadence : " + cadence(a))
    v = a["voids"]
    L.append(f"Coups nuls : {nombre(v['voids'])} sur {pluriel(v['launches'], 'lancer')}"
             + (f" ({nombre(100 * v['rate'], 1)} %)" if v["rate"] is not None else "")
             + (" : " + ", ".join(f"{motif(k)} {n}" for k, n in v["by_reason"].items()) if v["by_reason"] else ""))
    a53 = a["article53"]
    L.append(f"Article 53 : {pluriel(a53['launches_with_violation'], 'lancer')} en infraction"
             + (" (" + ", ".join(f"{motif(k)} {n}" for k, n in a53["by_kind"].items()) + ")" if a53["by_kind"] else ""))
    for c in a["croupiers"]:
        rpm, laps = c["rotor_rpm"], c["laps"]
        L.append(f"Croupier {c['croupier']} : {pluriel(c['games'], 'coup')}, {pluriel(c['voids'], 'nul', 'nuls')}; rotor "
                 + (f"{nombre(rpm['mean'], 1)} ± {nombre(rpm['sd'], 1)} tr/min" if rpm["n"] else "—")
                 + "; tours de bille " + (f"{nombre(laps['mean'], 1)} ± {nombre(laps['sd'], 1)}" if laps["n"] else "—")
                 + ("" if c["signature_n"] else "; signature : pas de case de lâcher (release_pocket) dans le journal"))
    return "\n".join(L)


def names(a: dict) -> list[str]:
    """The names of the figures `figures(a)` draws, in order (the PNG files without .png)."""
    return ["numeros", "secteurs", "chute", "cadence"] + (["croupiers"] if any(c["signature_n"] for c in a["croupiers"]) else [])


def _comma(ax, axis="y"):
    """Tick labels with a decimal comma."""
    from matplotlib.ticker import FuncFormatter
    f = FuncFormatter(lambda x, _: ("%g" % x).replace(".", ",").replace("-", "−"))
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(f)


def _count_axis(ax, top):
    """A count axis from 0, whole numbers, a little room above the highest bar."""
    from matplotlib.ticker import MaxNLocator
    ax.set_ylim(0, max(1, top) * 1.15)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def figures(a: dict):
    """[(name, matplotlib Figure)] for the PNGs and the PDF, each the width of an A4 page's text."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    out = []
    fr = a["numbers"]
    fig = Figure(figsize=(WIDTH_IN, 2.9), layout="constrained")
    ax = fig.subplots()
    xs = list(range(37))
    ax.bar(xs, [fr["counts"][n] for n in W.ORDER], color=[COLOURS[W.colour(n)] for n in W.ORDER])
    ax.set_xticks(xs, [str(n) for n in W.ORDER], fontsize=6.5)
    ax.set_xlim(-0.7, 36.7)
    if fr["n"]:
        ax.axhline(fr["n"] / 37, color=GREY, linestyle="--", linewidth=1, label="attendu (n / 37)")
        ax.legend(loc="upper right", fontsize=7, frameon=False)
    _count_axis(ax, max(fr["counts"]))
    ax.set_title(f"Fréquence des numéros dans l'ordre du cylindre ({pluriel(fr['n'], 'coup')})", fontsize=9)
    ax.set_ylabel("coups", fontsize=8)
    out.append(("numeros", fig))

    rows = [SECTEURS.get(s["name"], s["name"]) for s in a["sectors"]] + ["séries " + r["chance"].replace("/", " / ") for r in a["runs"]]
    zs = [s["z"] for s in a["sectors"]] + [r["z"] for r in a["runs"]]
    fig = Figure(figsize=(WIDTH_IN, 3.4), layout="constrained")
    ax = fig.subplots()
    ax.barh(rows, zs, color=[RUST if abs(z) > 2.576 else BLUE for z in zs])
    for z in (-2.576, 2.576):
        ax.axvline(z, color=GREY, linestyle="--", linewidth=1)
    ax.axvline(0, color="#333", linewidth=0.8)
    lim = max(3.5, max((abs(z) for z in zs), default=0) * 1.1)
    ax.set_xlim(-lim, lim)
    _comma(ax, "x")
    ax.tick_params(labelsize=7.5)
    ax.set_xlabel("z (tirets : |z| = 2,576, soit p = 0,01 avant correction)", fontsize=8)
    ax.set_title("Secteurs et séries : écart à l'attendu en z", fontsize=9)
    ax.invert_yaxis()
    out.append(("secteurs", fig))

    d = a["drop"]
    fig = Figure(figsize=(WIDTH_IN, 3.0), layout="constrained")
    ax1 = fig.add_subplot(1, 2, 1, projection="polar")
    ax1.bar([math.radians(10 * i + 5) for i in range(36)], d["zone_10deg"], width=math.radians(10), color=BLUE)
    ax1.set_theta_zero_location("N")
    ax1.set_theta_direction(-1)
    ax1.tick_params(labelsize=7)
    from matplotlib.ticker import MaxNLocator
    ax1.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
    ax1.set_rlabel_position(100)
    ax1.set_title(f"Zone de chute ({pluriel(d['n'], 'chute')})" if d["n"] else "Zone de chute : pas de données",
                  fontsize=9)
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.bar(range(37), d["landing_hist"], color=BLUE)
    _count_axis(ax2, max(d["landing_hist"]))
    ax2.set_xlim(-0.7, 36.7)
    ax2.tick_params(labelsize=7)
    ax2.set_title("Chute → case (cases, sens de la bille)", fontsize=9)
    ax2.set_xlabel("cases", fontsize=8)
    ax2.set_ylabel("coups", fontsize=8)
    out.append(("chute", fig))

    fig = Figure(figsize=(WIDTH_IN, 2.9), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2, width_ratios=(1.25, 1))
    _pace(ax1, a)
    v = a["voids"]
    reasons = list(v["by_reason"])
    if reasons:
        import textwrap
        ax2.barh(["\n".join(textwrap.wrap(motif(r).split(" (")[0], 20)) for r in reasons],
                 [v["by_reason"][r] for r in reasons], color=RUST)
        ax2.invert_yaxis()
        ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax2.set_xlabel("coups nuls", fontsize=8)
    else:
        ax2.text(0.5, 0.5, "aucun coup nul", ha="center", va="center", transform=ax2.transAxes, fontsize=9)
        ax2.set_xticks([])
        ax2.set_yticks([])
    ax2.tick_params(labelsize=7)
    ax2.set_title(f"Coups nuls : {nombre(v['voids'])} sur {pluriel(v['launches'], 'lancer')}", fontsize=9)
    out.append(("cadence", fig))

    cs = [c for c in a["croupiers"] if c["signature_n"]]
    if cs:
        fig = Figure(figsize=(WIDTH_IN, 0.4 + 2.0 * len(cs)), layout="constrained")
        axes = fig.subplots(len(cs), 1, squeeze=False)
        for ax, c in zip(axes[:, 0], cs):
            ax.bar(range(37), c["signature_hist"], color=BLUE)
            ax.axhline(c["signature_n"] / 37, color=GREY, linestyle="--", linewidth=1)
            _count_axis(ax, max(c["signature_hist"]))
            ax.set_xlim(-0.7, 36.7)
            ax.tick_params(labelsize=7)
            ax.set_title(f"{c['croupier']} : lâcher → case, en cases ({pluriel(c['signature_n'], 'coup')})", fontsize=9)
        out.append(("croupiers", fig))
    return out


def _pace(ax, a):
    """Games per clock hour when the period has whole hours; else the games one after the other
    against the minutes of the session (one dot on an hour axis says nothing)."""
    import datetime as dt
    pace = a["pace"]
    if pace["full_hours"]:
        h0 = pace["first_hour_at"]
        xs = list(range(len(pace["per_hour"])))
        last = len(xs) - 1
        ax.bar(xs, pace["per_hour"], color=[GREY if i in (0, last) else BLUE for i in xs])
        step = max(1, len(xs) // 8)
        ax.set_xticks(xs[::step], [dt.datetime.fromtimestamp(h0 + 3600 * i).strftime("%Hh") for i in xs[::step]])
        _count_axis(ax, max(pace["per_hour"]))
        ax.set_title("Coups par heure (gris : heures entamées)", fontsize=9)
        ax.set_ylabel("coups", fontsize=8)
    elif pace["span_s"]:
        mins = [t / 60 for t in pace["offsets_s"]]
        ax.step(mins, range(1, len(mins) + 1), where="post", color=BLUE)
        ax.plot(mins, range(1, len(mins) + 1), "o", color=BLUE, markersize=3)
        ax.set_xlim(0, max(1.0, mins[-1]) * 1.05)
        _count_axis(ax, len(mins))
        _comma(ax, "x")
        ax.set_xlabel("minutes depuis le premier coup", fontsize=8)
        ax.set_ylabel("coups joués", fontsize=8)
        rate = (f" : environ {nombre(pace['rate_per_hour'])} coups/heure" if len(mins) >= FEWEST_FOR_A_RATE
                else f" : {pluriel(len(mins), 'coup')}")
        ax.set_title(f"Session de {duree(pace['span_s'])}{rate}", fontsize=9)
    else:
        ax.text(0.5, 0.5, "pas de cadence mesurable", ha="center", va="center", transform=ax.transAxes, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title("Cadence", fontsize=9)
    ax.tick_params(labelsize=7)


class NeedsNames(ValueError):
    """A report to file names its casino and its table: say where to set them."""


def write_plots(a: dict, out_dir, figs=None) -> list[Path]:
    """A PNG per figure into out_dir; the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fig in figs or figures(a):
        p = out / f"{name}.png"
        fig.savefig(p, dpi=130)
        paths.append(p)
    return paths


def write_report(a: dict, out_dir, casino: str | None, table: str | None, sign_key=None, figs=None) -> list[Path]:
    """report.pdf into out_dir, and report.pdf.sig beside it when `sign_key` (an Ed25519 private
    key: table/journal/seal.py, the floor's format) is given; NeedsNames without both names."""
    from . import pdf
    from host_tools.table.journal.seal import fingerprint, sign_file
    if not (casino and casino.strip()) or not (table and table.strip()):
        missing = " et ".join(w for w, v in (("du casino", casino), ("de la table", table)) if not (v and v.strip()))
        raise NeedsNames(f"le rapport à déposer demande le nom {missing}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    p = out / "report.pdf"
    signer = fingerprint(sign_key.public_key()) if sign_key is not None else None
    pdf.write(a, figs or figures(a), p, casino=casino.strip(), table=table.strip(), signer=signer)
    paths = [p]
    if sign_key is not None:
        seal = (a.get("provenance") or {}).get("seal") or {}
        subject = {"kind": "rapport statistique du cylindre", "site": casino.strip(), "tables": [table.strip()],
                   "wheel": a.get("wheel"), "journal_sha256": seal.get("sha256"),
                   "period": [seal.get("first_at"), seal.get("until")]}
        # signed by its name alone: the report travels (a download, a regulator's folder) with its .sig
        paths.append(sign_file(p, sign_key, subject, place=p.name))
    return paths


def write(a: dict, out_dir, casino: str | None = None, table: str | None = None, sign_key=None) -> list[Path]:
    """The PNG plots and report.pdf (signed when `sign_key`) into out_dir; the paths written.
    NeedsNames (after the plots) when the casino's or the table's name is missing."""
    figs = figures(a)
    return write_plots(a, out_dir, figs) + write_report(a, out_dir, casino, table, sign_key, figs)
