"""What the statistics can say, in the words a pit boss reads: each test with its sample size and
whether it had enough games to say anything, the verdict in one sentence, numbers the French way.

The analysis (analysis.py) computes; this module only words. A test below its minimum sample is
"pas assez de coups (n sur N)", never a clean bill of health: a verdict is "ok" only when at least
one test ran and none is significant after Holm's correction.
"""

from __future__ import annotations

import datetime as dt

from host_tools.table.libelles import VOID

NBSP = "\u202f"     # the narrow no-break space French typography puts between thousands


def nombre(x, decimals: int = 0) -> str:
    """1234.5 -> '1 234,5' (narrow no-break space between thousands, decimal comma)."""
    if x is None:
        return "—"
    s = f"{x:,.{decimals}f}"
    return s.replace(",", NBSP).replace(".", ",").replace("-", "−")


def signe(x, decimals: int = 2) -> str:
    """A z-score or a correlation with its sign: '+1,05', '−0,64'."""
    return ("+" if x >= 0 else "") + nombre(x, decimals)


def p_valeur(p) -> str:
    """A p-value for a person: two significant digits, decimal comma; '< 0,0001' below that."""
    if p is None:
        return "—"
    if p < 1e-4:
        return "< 0,0001"
    return ("%.2g" % p).replace(".", ",") if p < 0.1 or p >= 1 else nombre(p, 2)


def pourcent(x, decimals: int = 1) -> str:
    return "—" if x is None else nombre(100 * x, decimals) + NBSP + "%"


def date_heure(at) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%d/%m/%Y %H:%M") if at else "—"


def duree(seconds) -> str:
    """A span as a person says it: '45 s', '4 min', '2 h 05'."""
    if seconds is None:
        return "—"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {s % 3600 // 60:02d}"


def periode(a: dict) -> str:
    """The analysis' period: 'du 27/11/2026 08:21 au 27/11/2026 09:40 (1 h 19)'."""
    pace = a["pace"]
    if not pace["first_at"]:
        return "aucun coup"
    return f"du {date_heure(pace['first_at'])} au {date_heure(pace['last_at'])} ({duree(pace['span_s'])})"


def pluriel(n: int, mot: str, pluriel_de: str | None = None) -> str:
    return f"{nombre(n)} {mot if abs(n) < 2 else (pluriel_de or mot + 's')}"


SECTEURS = {
    "voisins": "voisins du zéro", "tiers": "tiers du cylindre", "orphelins": "orphelins",
    "moitie_1": "première moitié du cylindre", "moitie_2": "seconde moitié du cylindre",
    "quart_1": "premier quart du cylindre", "quart_2": "deuxième quart du cylindre",
    "quart_3": "troisième quart du cylindre", "quart_4": "quatrième quart du cylindre",
}

def motif(code: str) -> str:
    """A void reason (or an Article 53 violation) in French, the wheel's code beside it; the words
    are libelles.VOID's, the one mapping the pages, the calls and the log use too."""
    return f"{VOID[code]} ({code})" if code in VOID else code


def test_label(name: str) -> str:
    """The family's test names (analysis.py) in French."""
    if name == "numbers":
        return "Fréquence des 37 numéros (khi-deux)"
    if name == "arc":
        return "Arc de cases le plus chaud"
    kind, _, rest = name.partition(":")
    if kind == "sector":
        return "Secteur : " + SECTEURS.get(rest, rest)
    if kind == "runs":
        return "Séries " + {"rouge": "rouge / noir", "pair": "pair / impair", "manque": "manque / passe"}.get(rest, rest)
    if name == "serial:lag1":
        return "Corrélation d'un coup au suivant"
    if name == "serial:steps":
        return "Écart sur le cylindre d'un coup au suivant"
    if kind == "croupier":
        who, _, how = rest.rpartition(":")
        return f"Signature de {who} ({'khi-deux' if how == 'chi2' else 'Rayleigh'})"
    return name


def is_main(name: str) -> bool:
    """The main tests: those on the whole wheel (the 37 numbers, the hottest arc, the sectors, the
    even chances' runs, one spin to the next). A clean verdict needs every one of them run; the
    croupiers' signatures come on top."""
    return not name.startswith("croupier:")


def tests(a: dict, minimum: dict) -> list[dict]:
    """Every test the analysis knows, run or not: name, label, n (games it had), needed, ran,
    p, p_holm, significant, and `status` in words. `minimum` maps a test name to its N."""
    fam = {f["test"]: f for f in a["family"]}
    rows = []

    def add(name, n, needed, p):
        f = fam.get(name)
        ran = f is not None
        if not ran:
            status = f"pas assez de coups ({nombre(n)} sur {nombre(needed)})"
        elif f["significant"]:
            status = "ÉCART SIGNIFICATIF"
        else:
            status = "pas d'écart"
        rows.append({"test": name, "label": test_label(name), "n": n, "needed": needed, "ran": ran,
                     "p": p, "p_holm": f["p_holm"] if ran else None, "main": is_main(name),
                     "significant": bool(ran and f["significant"]), "status": status})

    n = a["games"]
    add("numbers", n, minimum["numbers"], a["numbers"]["p"])
    add("arc", n, minimum["arc"], a["arc"]["p"])
    for s in a["sectors"]:
        add("sector:" + s["name"], n, minimum["sector"], s["p"])
    for r in a["runs"]:
        add("runs:" + r["chance"].split("/")[0], r["n"], minimum["runs"], r["p"])
    add("serial:lag1", n, minimum["serial"], a["serial"]["lag1_p"])
    add("serial:steps", n, minimum["serial"], a["serial"]["steps_p"])
    for c in a["croupiers"]:
        if c["croupier"] == "(inconnu)" or not c["games"]:
            continue
        add(f"croupier:{c['croupier']}:chi2", c["signature_n"], minimum["signature"], c["signature_p"])
        add(f"croupier:{c['croupier']}:rayleigh", c["signature_n"], minimum["rayleigh"], c["signature_rayleigh_p"])
    return rows


def verdict(a: dict, rows: list[dict]) -> dict:
    """{level: alarme|ok|insuffisant, short (a badge), text (the sentence that opens the report)}."""
    ran = [r for r in rows if r["ran"]]
    waiting = [r for r in rows if not r["ran"]]
    alpha = nombre(a["alpha"], 2 if a["alpha"] >= 0.01 else 3)
    if not a["games"]:
        return {"level": "insuffisant", "short": "aucun coup",
                "text": "Aucun coup dans ce journal : il n'y a rien à tester."}
    if a["alarms"]:
        bad = [r["label"] for r in rows if r["significant"]]
        return {"level": "alarme", "short": f"{pluriel(len(bad), 'écart significatif', 'écarts significatifs')}",
                "text": f"ÉCART SIGNIFICATIF sur {pluriel(len(bad), 'test')} : {', '.join(bad)} "
                        f"(p corrigé par Holm sous α = {alpha}). Le cylindre est à faire vérifier."}
    if not ran:
        least = min(r["needed"] for r in rows)
        return {"level": "insuffisant", "short": f"pas assez de coups ({nombre(a['games'])} sur {nombre(least)})",
                "text": f"Pas assez de coups pour conclure : {pluriel(a['games'], 'coup')}, aucun test n'a "
                        f"l'échantillon qu'il lui faut (le premier en demande {nombre(least)}). "
                        "Ce rapport ne dit rien encore de l'intégrité du cylindre."}
    main_waiting = [r for r in waiting if r["main"]]
    if main_waiting:
        # no clean bill of health until every main test has its games: the 37-number test above all
        most = max(r["needed"] for r in main_waiting)
        names = ", ".join(r["label"] for r in main_waiting)
        return {"level": "insuffisant",
                "short": f"insuffisant : {nombre(a['games'])} coups sur les {nombre(most)} des tests principaux",
                "text": f"Insuffisant pour conclure : {pluriel(a['games'], 'coup')}. Aucun écart significatif sur "
                        f"{pluriel(len(ran), 'test fait', 'tests faits')} (seuil α = {alpha}, correction de Holm), mais "
                        f"{pluriel(len(main_waiting), 'test principal', 'tests principaux')} n'ont pas encore leurs coups "
                        f"({names} ; jusqu'à {nombre(most)} coups). Le verdict attend ces tests."
                        if len(main_waiting) > 1 else
                        f"Insuffisant pour conclure : {pluriel(a['games'], 'coup')}. Aucun écart significatif sur "
                        f"{pluriel(len(ran), 'test fait', 'tests faits')} (seuil α = {alpha}, correction de Holm), mais "
                        f"le test principal « {names} » n'a pas encore ses {nombre(most)} coups. Le verdict l'attend."}
    text = (f"Aucun écart significatif sur {pluriel(len(ran), 'test fait', 'tests faits')} "
            f"(seuil α = {alpha} pour l'ensemble, correction de Holm).")
    if waiting:
        text += (f" {pluriel(len(waiting), 'test')} n'ont pas encore assez de coups et ne disent rien "
                 "(détail ci-dessous).") if len(waiting) > 1 else \
                " 1 test n'a pas encore assez de coups et ne dit rien (détail ci-dessous)."
    return {"level": "ok", "short": f"aucun écart significatif ({len(ran)} sur {len(rows)} tests faits)", "text": text}


FEWEST_FOR_A_RATE = 5       # below, two or three coups' gaps make any hourly figure up


def cadence(a: dict) -> str:
    """The pace in words that fit the session: per whole clock hour when there are some, else the
    session's own rate (a one-minute session has no hour to take a median of)."""
    pace = a["pace"]
    if pace["full_hours"]:
        return (f"médiane {nombre(pace['median'])} coups par heure (de {nombre(pace['min'])} à {nombre(pace['max'])}) "
                f"sur {pluriel(pace['full_hours'], 'heure pleine', 'heures pleines')}; la première et la dernière "
                "heure de la période, entamées, ne comptent pas")
    if pace["rate_per_hour"] and a["games"] < FEWEST_FOR_A_RATE:
        return (f"{pluriel(a['games'], 'coup')} en {duree(pace['span_s'])} : trop peu pour une cadence "
                f"(il en faut {FEWEST_FOR_A_RATE})")
    if pace["rate_per_hour"]:
        return (f"{pluriel(a['games'], 'coup')} en {duree(pace['span_s'])}, soit environ "
                f"{nombre(pace['rate_per_hour'])} coups par heure à ce rythme (aucune heure pleine dans la période)")
    return f"{pluriel(a['games'], 'coup')}: pas de cadence mesurable"
