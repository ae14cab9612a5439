"""The statistics report as a PDF to file: A4 pages laid out by ReportLab's platypus (flowing
paragraphs, real tables, page breaks, running footer), the plots from report.py as images at the
text's width. The title block (casino, table, wheel, period, games) and the verdict in words come
first, then every test with its sample size, the details, and the method as an appendix.

The text is set in DejaVu Sans, the TrueType font matplotlib ships (so α, χ², → and the narrow
no-break space print on any machine), embedded in the PDF.
"""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

from . import analysis as A
from host_tools.table.libelles import accepted_by

from .wording import cadence, motif, periode, nombre, p_valeur, pluriel, signe, SECTEURS

LEVEL_COLOURS = {"alarme": ("#fbe3e6", "#c8102e"), "ok": ("#e3f3e8", "#00843d"), "insuffisant": ("#fff4d6", "#9a6b00")}
FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"


def _fonts():
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    if FONT in pdfmetrics.getRegisteredFontNames():
        return
    import matplotlib
    d = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    pdfmetrics.registerFont(TTFont(FONT, str(d / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont(BOLD, str(d / "DejaVuSans-Bold.ttf")))
    from reportlab.lib.fonts import addMapping
    addMapping(FONT, 0, 0, FONT)
    addMapping(FONT, 1, 0, BOLD)


def _styles():
    from reportlab.lib.styles import ParagraphStyle
    base = ParagraphStyle("base", fontName=FONT, fontSize=9.5, leading=12.5, spaceAfter=4)
    return {
        "base": base,
        "small": ParagraphStyle("small", parent=base, fontSize=8, leading=10),
        "cell": ParagraphStyle("cell", parent=base, fontSize=8.5, leading=10.5, spaceAfter=0),
        "title": ParagraphStyle("title", parent=base, fontName=BOLD, fontSize=17, leading=21, spaceAfter=8),
        "h1": ParagraphStyle("h1", parent=base, fontName=BOLD, fontSize=12.5, leading=16, spaceBefore=10, spaceAfter=5),
        "h2": ParagraphStyle("h2", parent=base, fontName=BOLD, fontSize=10.5, leading=13, spaceBefore=6, spaceAfter=3),
        "verdict": ParagraphStyle("verdict", parent=base, fontName=BOLD, fontSize=11, leading=14.5, spaceAfter=0),
    }


def _esc(s) -> str:
    """Text for a Paragraph: markup escaped, 'p = 0,32' and '17 sur 185' kept on one line."""
    s = str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for a, b in ((" = ", "\u00a0=\u00a0"), (" sur ", "\u00a0sur\u00a0"), (" ± ", "\u00a0±\u00a0"), ("&lt; ", "&lt;\u00a0")):
        s = s.replace(a, b)
    return s


def _table(rows, widths, header=True, numeric=(), shade=None):
    """A real table: header row in bold on grey, thin rules, numbers right-aligned; `shade` maps
    a row index to a background colour."""
    from reportlab.lib import colors
    from reportlab.platypus import Table, TableStyle
    st = _styles()["cell"]
    from reportlab.platypus import Paragraph
    data = [[c if not isinstance(c, str) else Paragraph(_esc(c), st) for c in r] for r in rows]
    t = Table(data, colWidths=widths, repeatRows=1 if header else 0, hAlign="LEFT")
    style = [("FONT", (0, 0), (-1, -1), FONT, 8.5), ("VALIGN", (0, 0), (-1, -1), "TOP"),
             ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.HexColor("#bbbbbb")),
             ("TOPPADDING", (0, 0), (-1, -1), 2.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 2.5)]
    if header:
        style += [("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8e8e8")), ("FONT", (0, 0), (-1, 0), BOLD, 8.5),
                  ("LINEBELOW", (0, 0), (-1, 0), 0.8, colors.HexColor("#555555"))]
    for c in numeric:
        style.append(("ALIGN", (c, 0), (c, -1), "RIGHT"))
    for i, colour in (shade or {}).items():
        style.append(("BACKGROUND", (0, i), (-1, i), colors.HexColor(colour)))
    t.setStyle(TableStyle(style))
    return t


def _right(rows, cols):
    """Paragraph cells of the numeric columns aligned right."""
    from reportlab.lib.enums import TA_RIGHT
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph
    st = ParagraphStyle("num", parent=_styles()["cell"], alignment=TA_RIGHT)
    return [[Paragraph(_esc(c), st) if j in cols and isinstance(c, str) else c for j, c in enumerate(r)] for r in rows]


def _image(fig, width):
    from reportlab.platypus import Image
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=200)
    buf.seek(0)
    w, h = fig.get_size_inches()
    return Image(buf, width=width, height=width * h / w)


def _when(at) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%d/%m/%Y %H:%M:%S") if at else "—"


def _provenance_rows(a, casino, table, signer) -> list:
    """The title block's rows on where the report comes from: the wheel, the software, the journal."""
    pv = a.get("provenance") or {}
    seal, wheels = pv.get("seal") or {}, pv.get("wheels") or []
    serials = ", ".join(dict.fromkeys(w["serial"] for w in wheels if w.get("serial"))) or "non annoncé par le cylindre"
    fw = "; ".join(f"{f['firmware']} ({pluriel(f['boots'], 'démarrage')})" for f in pv.get("firmware") or []) \
        or "aucun démarrage du cylindre dans la période"
    rows = [["Cylindre", f"{a['wheel'] or '—'} — numéro de série : {serials}"],
            ["Logiciels", f"table : {pv.get('software') or '—'} (qui a fait ce rapport) ; cylindre : {fw}"]]
    if seal:
        until = seal.get("until")
        rows.append(["Journal", f"empreinte SHA-256 {seal['sha256']} de {pluriel(seal['events'], 'événement')}, "
                                f"{pluriel(seal['settlements'], 'règlement')} et {pluriel(seal['duty'], 'relève')} de "
                                f"croupier, du {_when(seal['first_at'])} au {_when(seal['last_at'])}. À vérifier sur une "
                                f"copie du journal : cylindre stats --journal FICHIER --wheel {a['wheel']} --until "
                                f"{until!r} redonne cette empreinte."])
    if signer:
        rows.append(["Signature", f"ce fichier est signé (Ed25519, clé {signer}) : la signature est le fichier de même "
                                  "nom suivi de .sig ; à vérifier par cylindre floor verify CE_FICHIER.pdf --pub "
                                  "CLÉ_PUBLIQUE.pub"])
    return rows


def _wheel_history(a, S, W):
    """The wheels the table has known under this id, one row each (a board changed, a counter reset)."""
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph
    wheels = (a.get("provenance") or {}).get("wheels") or []
    out = [Paragraph("Le cylindre à cette table", S["h2"])]
    if not wheels:
        return out + [Paragraph("Aucun cylindre n'est enregistré dans ce journal sous cet identifiant (journal tenu "
                                "avant l'identification des cylindres, ou cylindre jamais entendu).", S["small"])]
    rows = [["N°", "Numéro de série", "Clé (empreinte)", "Compteur", "Depuis", "Accepté par", "Premier coup"]]
    for w in wheels:
        rows.append([str(w["n"]), w.get("serial") or "—", w.get("key") or "—", w.get("epoch") or "—",
                     _when(w.get("since")), accepted_by(w.get("accepted_by")),
                     str(w["first_spin"]) if w.get("first_spin") is not None else "—"])
    return out + [_table(_right(rows, (0, 6)), [10 * mm, 30 * mm, 30 * mm, 24 * mm, 30 * mm, 26 * mm, 20 * mm])]


def _approval(S, W):
    """The approval block: who made, checked and approved the report, by hand, on paper."""
    from reportlab.lib import colors
    from reportlab.lib.units import mm
    from reportlab.platypus import KeepTogether, Paragraph, Table, TableStyle
    st = S["cell"]
    head = [Paragraph(_esc(t), st) for t in ("", "Nom", "Fonction", "Date", "Signature")]
    rows = [head] + [[Paragraph(_esc(t), st), "", "", "", ""] for t in ("Établi par", "Contrôlé par", "Approuvé par")]
    t = Table(rows, colWidths=[28 * mm, 40 * mm, 36 * mm, 24 * mm, 42 * mm], rowHeights=[None, 16 * mm, 16 * mm, 16 * mm])
    t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.6, colors.HexColor("#555555")),
                           ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#e8e8e8")),
                           ("FONT", (0, 0), (-1, -1), FONT, 8.5), ("VALIGN", (0, 0), (-1, -1), "TOP")]))
    return KeepTogether([Paragraph("Visa", S["h1"]),
                         Paragraph("Le rapport est établi à partir du journal de la table désigné ci-dessus (son "
                                   "empreinte), contrôlé et approuvé par les personnes habilitées du casino.", S["small"]),
                         t])


def story(a: dict, figs, casino: str | None, table: str | None, now: float, signer: str | None = None) -> list:
    """The report's flowables, in reading order."""
    from reportlab.lib import colors
    from reportlab.lib.units import mm
    from reportlab.platypus import PageBreak, Paragraph, Spacer, Table, TableStyle

    S = _styles()
    W = 170 * mm
    figs = dict(figs)
    out = [Paragraph("Rapport d'intégrité du cylindre", S["title"])]
    v = a["voids"]
    if not casino or not table:
        raise ValueError("a report to file names its casino and its table (casino, table_name)")
    title = [
        ["Casino", casino],
        ["Table", table],
        *_provenance_rows(a, casino, table, signer)[:1],
        ["Période", periode(a)],
        ["Coups", f"{pluriel(a['games'], 'coup')} avec un numéro ; {pluriel(v['launches'], 'lancer')}, "
                  f"{pluriel(v['voids'], 'coup nul', 'coups nuls')}"],
        ["Seuil", f"α = {nombre(a['alpha'], 2)} pour l'ensemble des tests (correction de Holm)"],
        *_provenance_rows(a, casino, table, signer)[1:],
        ["Édité le", dt.datetime.fromtimestamp(now).strftime("%d/%m/%Y à %H:%M")],
    ]
    out.append(_table(title, [30 * mm, W - 30 * mm], header=False))
    out += _wheel_history(a, S, W)
    out.append(Spacer(1, 5 * mm))

    bg, fg = LEVEL_COLOURS[a["verdict"]["level"]]
    box = Table([[Paragraph(_esc(a["verdict"]["text"]), S["verdict"])]], colWidths=[W])
    box.setStyle(TableStyle([("BACKGROUND", (0, 0), (-1, -1), colors.HexColor(bg)),
                             ("BOX", (0, 0), (-1, -1), 1.2, colors.HexColor(fg)),
                             ("LEFTPADDING", (0, 0), (-1, -1), 8), ("RIGHTPADDING", (0, 0), (-1, -1), 8),
                             ("TOPPADDING", (0, 0), (-1, -1), 7), ("BOTTOMPADDING", (0, 0), (-1, -1), 7)]))
    out += [Paragraph("Verdict", S["h1"]), box, Spacer(1, 4 * mm)]

    out.append(Paragraph("Les tests", S["h1"]))
    out.append(Paragraph(
        "Chaque test compare ce que le cylindre a donné à ce qu'un cylindre sans défaut donnerait. Un test ne dit "
        "quelque chose qu'à partir d'un nombre minimal de coups (colonne « coups ») ; en dessous, il n'est pas fait "
        "et ne compte ni pour ni contre le cylindre.", S["small"]))
    rows = [["Test", "Coups (minimum)", "p brut", "p Holm", "Résultat"]]
    shade = {}
    for i, t in enumerate(a["tests"], start=1):
        rows.append([t["label"], f"{nombre(t['n'])} ({nombre(t['needed'])})",
                     p_valeur(t["p"]) if t["ran"] else "—", p_valeur(t["p_holm"]) if t["ran"] else "—", t["status"]])
        if t["significant"]:
            shade[i] = "#fbe3e6"
        elif not t["ran"]:
            shade[i] = "#f4f4f4"
    out.append(_table(_right(rows, (1, 2, 3)), [56 * mm, 24 * mm, 19 * mm, 19 * mm, 52 * mm], shade=shade))

    out.append(_approval(S, W))
    if a["games"]:
        out += _details(a, figs, S, W)
    out.append(PageBreak())
    out += _method(a, S)
    return out


def _details(a, figs, S, W):
    from reportlab.lib.units import mm
    from reportlab.platypus import KeepTogether, Paragraph, Spacer
    fr, arc = a["numbers"], a["arc"]
    T = lambda t: Paragraph(_esc(t), S["base"])      # noqa: E731
    out = [KeepTogether([Paragraph("Numéros", S["h1"]), _image(figs["numeros"], W)])]
    waiting = [t for t in a.get("tests", []) if not t.get("ran")]
    if waiting:     # a p beside a test below its minimum must not read as a result
        out.append(T(f"{pluriel(len(waiting), 'test')} sur {len(a.get('tests', []))} "
                     + ("n'a" if len(waiting) == 1 else "n'ont") + " pas encore leur minimum de "
                     "coups : leurs chiffres ci-dessous (khi-deux, z, p) décrivent les coups joués et ne concluent rien."))
    out.append(T(
        f"Khi-deux des 37 numéros : {nombre(fr['chi2'], 1)} pour {fr['df']} degrés de liberté, p = {p_valeur(fr['p'])}. "
        "Numéros chauds : " + ", ".join(f"{k} ({fr['counts'][k]})" for k in fr["hot"])
        + " ; froids : " + ", ".join(f"{k} ({fr['counts'][k]})" for k in fr["cold"]) + "."))
    if arc["numbers"]:
        out.append(T(
            f"Arc le plus chaud : {'-'.join(map(str, arc['numbers']))}, {arc['hits']} coups pour "
            f"{nombre(arc['expected'], 1)} attendus (z = {signe(arc['z'])}, p = {p_valeur(arc['p'])} après Bonferroni "
            f"sur les {arc['scanned']} arcs examinés)."))
    out.append(KeepTogether([Paragraph("Secteurs et séries", S["h1"]), _image(figs["secteurs"], W)]))
    rows = [["Secteur", "Cases", "Coups", "Attendus", "z", "p"]]
    for s in a["sectors"]:
        rows.append([SECTEURS.get(s["name"], s["name"]), str(s["pockets"]), nombre(s["hits"]), nombre(s["expected"], 1),
                     signe(s["z"]), p_valeur(s["p"])])
    out.append(KeepTogether(_table(_right(rows, (1, 2, 3, 4, 5)), [62 * mm, 18 * mm, 20 * mm, 24 * mm, 20 * mm, 26 * mm])))
    out.append(Spacer(1, 3 * mm))
    rows = [["Chances simples (zéro exclu)", "Coups", "Séries", "z", "p", "Plus longue série"]]
    for r in a["runs"]:
        rows.append([r["chance"].replace("/", " / "), nombre(r["n"]), nombre(r["runs"]), signe(r["z"]), p_valeur(r["p"]),
                     f"{r['longest']} × {r['longest_of']}" if r["longest_of"] else "—"])
    out.append(KeepTogether(_table(_right(rows, (1, 2, 3, 4)), [52 * mm, 18 * mm, 20 * mm, 20 * mm, 22 * mm, 38 * mm])))
    se = a["serial"]
    out.append(Spacer(1, 3 * mm))
    out.append(T(
        f"D'un coup au suivant : corrélation r = {signe(se['lag1_r'], 3)} (p = {p_valeur(se['lag1_p'])}) ; "
        f"écart sur le cylindre, khi-deux = {nombre(se['steps_chi2'], 1)} (p = {p_valeur(se['steps_p'])})."))

    d = a["drop"]
    out.append(KeepTogether([Paragraph("Chute et rebond (décrits, non testés)", S["h1"]), _image(figs["chute"], W)]))
    if d["n"]:
        out.append(T(
            f"{pluriel(d['n'], 'chute')} ; angle principal {nombre(d['main_angle_deg'])}°, concentration "
            f"R = {nombre(d['concentration'], 3)} (Rayleigh p = {p_valeur(d['rayleigh_p'])}). Un cylindre a toujours "
            "une zone de chute privilégiée (ses déflecteurs) : elle se surveille d'un rapport à l'autre."))
    if d["landing_n"]:
        out.append(T(f"De la chute à la case : {nombre(d['landing_mean'], 1)} cases en moyenne sur "
                     f"{pluriel(d['landing_n'], 'coup')}."))
    out += [KeepTogether([Paragraph("Cadence et coups nuls", S["h1"]), _image(figs["cadence"], W)]),
            T("Cadence : " + cadence(a) + ".")]
    v, a53 = a["voids"], a["article53"]
    if v["by_reason"]:
        rows = [["Motif du coup nul", "Coups"]] + [[motif(k), nombre(n)] for k, n in v["by_reason"].items()]
        out.append(KeepTogether(_table(_right(rows, (1,)), [130 * mm, 30 * mm])))
    out.append(Spacer(1, 2 * mm))
    out.append(T(
        f"Article 53 : {pluriel(a53['launches_with_violation'], 'lancer')} en infraction"
        + (" — " + ", ".join(f"{motif(k)} : {n}" for k, n in a53["by_kind"].items()) if a53["by_kind"] else "") + "."))

    out += [Paragraph("Croupiers", S["h1"])]
    rows = [["Croupier", "Coups", "Nuls", "Rotor (tr/min)", "Tours de bille", "Lâcher → case"]]
    for c in a["croupiers"]:
        rpm, laps = c["rotor_rpm"], c["laps"]
        rows.append([c["croupier"], nombre(c["games"]), nombre(c["voids"]),
                     f"{nombre(rpm['mean'], 1)} ± {nombre(rpm['sd'], 1)}" if rpm["n"] else "—",
                     f"{nombre(laps['mean'], 1)} ± {nombre(laps['sd'], 1)}" if laps["n"] else "—",
                     pluriel(c["signature_n"], "coup") if c["signature_n"] else "—"])
    out.append(KeepTogether(_table(_right(rows, (1, 2, 3, 4)), [40 * mm, 18 * mm, 16 * mm, 30 * mm, 30 * mm, 36 * mm])))
    if "croupiers" in figs:
        out += [Spacer(1, 3 * mm), _image(figs["croupiers"], W)]
    return out


def _method(a, S):
    from reportlab.platypus import Paragraph
    P = lambda t: Paragraph(t, S["base"])        # noqa: E731
    n = nombre
    return [
        Paragraph("Annexe : méthode", S["h1"]),
        P("Les coups sont lus dans le journal de la table (SQLite), tels que le cylindre les a envoyés : un coup est "
          "un lancer qui a donné un numéro ; les coups nuls sont comptés à part et n'entrent dans aucun test. Les "
          "résultats refusés par la table comme anomalies sont écartés ; les résultats repris de la mémoire du "
          "cylindre après une coupure de courant sont comptés."),
        P(f"<b>Les tests.</b> Fréquence des 37 numéros : khi-deux de Pearson, 36 degrés de liberté (au moins "
          f"{n(A.MIN_CHI2)} coups, 5 attendus par case). Arc le plus chaud : de tous les arcs de 1, 3, 5 et 9 cases "
          f"voisines, celui qui dépasse le plus sa part, en z binomial unilatéral, corrigé par Bonferroni sur les 148 "
          f"arcs (au moins {n(A.MIN_SECTOR)} coups) ; il voit une case chaude ou un secteur de frettes plus tôt que le "
          f"khi-deux. Secteurs (voisins du zéro, tiers, orphelins, moitiés et quarts du cylindre) : z binomial (au moins "
          f"{n(A.MIN_SECTOR)} coups). Séries sur rouge / noir, pair / impair, manque / passe, zéro exclu : test des "
          f"séries de Wald–Wolfowitz (au moins {n(A.MIN_RUNS)} coups sans zéro). D'un coup au suivant : corrélation "
          f"de rang 1 et khi-deux de l'écart sur le cylindre (au moins {n(A.MIN_CHI2)} coups). Signature d'un "
          f"croupier : l'écart en cases du lâcher de la bille à la case gagnante, khi-deux (au moins "
          f"{n(A.MIN_SIGNATURE)} coups) et test de Rayleigh d'un écart préféré (au moins {n(A.MIN_RAYLEIGH)} coups)."),
        P(f"<b>L'ensemble des tests.</b> Faire beaucoup de tests fait sortir des écarts par hasard : les p de tous les "
          f"tests faits sont corrigés ensemble par la méthode de Holm, qui garde à α = {n(a['alpha'], 2)} la probabilité "
          "qu'un seul d'entre eux sonne à tort, sans hypothèse sur leurs liens. Un test est « significatif » quand son p "
          "corrigé (p Holm) est sous α. Un test sans assez de coups n'est pas fait : il est listé avec le nombre de coups "
          "qu'il avait et celui qu'il lui faut."),
        P("<b>Ce que le verdict veut dire.</b> « Aucun écart significatif » dit que les tests faits n'ont rien trouvé "
          f"qu'un cylindre sans défaut ne donnerait pas une fois sur {n(round(1 / a['alpha']))} ; il ne prouve pas l'absence de défaut, et un "
          "petit défaut ne se voit qu'après des milliers de coups (docs/pit/statistics.md donne la puissance mesurée des tests). "
          "« Pas assez de coups » dit qu'aucun test n'a encore pu être fait."),
        P("<b>Décrits, non testés.</b> La zone de chute (angle du point de chute, en secteurs de 10°), la distance de la "
          "chute à la case, la cadence et les coups nuls : un cylindre a une zone de chute et une longueur de rebond "
          "qui lui sont propres ; on les compare d'un rapport à l'autre. La cadence se compte par heure pleine du "
          "journal ; une période sans heure pleine donne le rythme de la session."),
    ]


def write(a: dict, figs, path, casino: str | None = None, table: str | None = None, now: float | None = None,
          signer: str | None = None) -> Path:
    """Lay out the report into `path` (A4 portrait, every page, "page N sur M" at the foot).
    ValueError without the casino's and the table's names: a report to file names both.
    `signer`: the fingerprint of the key that will sign it, said on page 1."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import mm
    from reportlab.pdfgen.canvas import Canvas
    from reportlab.platypus import SimpleDocTemplate

    _fonts()
    now = now if now is not None else dt.datetime.now().timestamp()
    wheel = a["wheel"] or "?"
    digest = ((a.get("provenance") or {}).get("seal") or {}).get("sha256")

    class Numbered(Canvas):
        """Pages held until the last is laid out, so each can say "page N sur M"."""

        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            self._pages = []

        def showPage(self):
            self._pages.append(dict(self.__dict__))
            self._startPage()

        def save(self):
            total = len(self._pages)
            for state in self._pages:
                self.__dict__.update(state)
                self.setFont(FONT, 7.5)
                self.setFillColorRGB(0.35, 0.35, 0.35)
                self.drawString(20 * mm, 12 * mm, f"Cylindre — rapport d'intégrité du cylindre {wheel} — {table} — {casino}")
                self.drawRightString(A4[0] - 20 * mm, 12 * mm, f"page {self._pageNumber} sur {total}")
                if digest:
                    self.drawString(20 * mm, 8.5 * mm, f"journal : SHA-256 {digest}")
                super().showPage()
            super().save()

    path = Path(path)
    doc = SimpleDocTemplate(os.fspath(path), pagesize=A4, leftMargin=20 * mm, rightMargin=20 * mm, topMargin=18 * mm,
                            bottomMargin=20 * mm, title=f"Rapport d'intégrité du cylindre {wheel}",
                            author=casino or "Cylindre", subject="statistiques du cylindre", lang="fr")
    doc.build(story(a, figs, casino, table, now, signer), canvasmaker=Numbered)
    return path
