"""French labels (libellés) for the codes the wheel, the daemon and the API speak in English.

The API keeps its codes (`reason`, `code`, `type`, `status`): integrators match on them. What a
person reads (the pages, the croupier's announcements, the demo, the log's table lines) takes the
label from here, the one mapping: the pages load it as `/assets/libelles.js` (`ALL`, generated
from this module), the daemon imports it. Numbers are formatted the French way (`nombre`,
`euros`, `pourcent`): a decimal comma, a narrow no-break space between thousands and before the
unit. `tests/table/daemon/test_libelles.py` checks that every code the firmware and the host emit has a label.
"""

from __future__ import annotations

import json
from functools import lru_cache

NNBSP = "\u202f"          # espace fine insécable: between thousands and before € and %

# Why a spin is void (docs/integrators/wheel-events.md `void.reason`; the Cammegh reader's too): the trade's words.
VOID = {
    "few_laps": "bille lancée trop court (trop peu de tours)",
    "same_direction": "bille lancée dans le sens du cylindre",
    "rotor_not_reversed": "cylindre non inversé",
    "rotor_not_actuated": "cylindre non relancé depuis le coup précédent",
    "rotor_slow": "cylindre hors vitesse",
    "launch_slow": "lancer trop lent",
    "no_result": "numéro non lu",
    "ball_off_wheel": "bille sortie du cylindre",
    "void_button": "coup annulé par le croupier",
    "sensor_fault": "capteur en défaut",
    "encoder_mismatch": "codeur du cylindre incohérent",
    "restart": "cylindre redémarré pendant le coup",
    "outbox_full": "liaison saturée",
    "table_closed": "table fermée pendant le coup",
    "misspin": "lancer manqué",
}

# The wheel's faults (docs/integrators/wheel-events.md `fault.code`) and the Cammegh reader's.
FAULT = {
    "sensor_stuck": "capteur bloqué",
    "sensor_silent": "capteur muet",
    "encoder_mismatch": "codeur du cylindre incohérent",
    "watchdog_reset": "contrôleur redémarré par le chien de garde",
    "outbox_full": "liaison saturée : événements en attente",
    "store_failed": "mémoire flash illisible ou pleine",
    "edges_lost": "capteur trop bavard : impulsions perdues",
    "samples_lost": "vitesse du cylindre non mesurée : minuterie relancée",
    "result_refused": "résultat refusé pour un coup annulé",
    "result_lost": "numéro perdu par le lecteur",
    "garbled": "ligne illisible du lecteur",
    "silent": "lecteur muet",
    "line_missing": "ligne d'état manquante",
    "sequence": "séquence du lecteur incohérente",
    "game_jump": "numéro de partie sauté",
    "result_mismatch": "numéros contradictoires",
    "number_missing": "ligne du numéro manquante",
    "slow_line": "liaison lente : états du cylindre trop tardifs pour prendre des mises",
}

# The pit's alerts (alerts.CODES).
ALERT = {
    "run_length": "série sur une chance simple",
    "void_rate": "trop de coups nuls",
    "article53": "lancers en infraction (article 53)",
    "games_per_hour": "cadence hors normes",
    "link_down": "liaison avec le cylindre coupée",
    "link_fault": "liaison en défaut (mauvaise clé, mauvais cylindre ou octets illisibles)",
    "wheel_unknown": "cylindre inconnu de la table",
    "statistics": "écart statistique du cylindre",
}
LEVEL = {"warning": "attention", "critical": "critique"}

# Bet types as the rules name them (cylindre.rules.names): the trade's words.
BET = {
    "plein": "plein", "cheval": "cheval", "transversale": "transversale", "carre": "carré",
    "sixain": "sixain", "douzaine": "douzaine", "colonne": "colonne", "simple": "chance simple",
    "rouge": "rouge", "noir": "noir", "pair": "pair", "impair": "impair", "manque": "manque",
    "passe": "passe",
    "voisins": "voisins du zéro", "tiers": "tiers du cylindre", "orphelins": "orphelins",
    "orphelins_plein": "orphelins en plein", "nassa": "nassa", "jeu_zero": "jeu zéro",
    "voisins_numero": "numéro et voisins", "finale": "finale en plein",
    "finale_cheval": "finale à cheval", "finale_chevaux": "finale avec chevaux",
}

# A bet's status (GET /bets) and a result's outcome (docs/integrators/settle.md).
STATUS = {
    "open": "posée", "locked": "rien ne va plus", "refused": "refusée", "cancelled": "retirée",
    "settled": "réglée", "held": "retenue", "refunded": "remboursée", "awaiting_consent": "en attente du chef",
}
OUTCOME = {
    "won": "gagne", "lost": "perd", "imprisoned": "en prison", "released": "libérée de prison",
    "partage": "partage", "split": "partagée (quatrième zéro)",
}
REFUSAL = {
    "table_closed": "table fermée", "poussette": "poussette : mise arrivée après rien ne va plus",
    "wheel_not_heard": "cylindre pas entendu : mise refusée", "no_more_bets": "rien ne va plus",
}

# The wheel's state (status.state), its sensors' health, why "rien ne va plus" was called.
STATE = {
    "idle": "au repos", "ball_in_rim": "bille lancée", "no_more_bets": "rien ne va plus",
    "ball_dropped": "bille tombée", "result": "résultat", "void": "coup nul", "fault": "en défaut",
}
SENSOR = {"ok": "bon", "stuck": "bloqué", "silent": "muet"}
RNVP_WHY = {
    "prediction": "à l'avance voulue sur la chute prévue",
    "slow_lap": "tour de bille trop lent",
    "drop": "la bille est tombée avant l'annonce",
    "croupier": "annoncé par le croupier",
    "unseen": "bille plus vue par les capteurs de piste",
}
PHASE = {"closed": "table fermée", "betting": "faites vos jeux", "no_more_bets": "rien ne va plus"}
# What the table says now (game/annonce.py): "faites vos jeux" only while a bet would be taken.
ANNONCE = {"betting": "faites vos jeux", "no_more_bets": "rien ne va plus", "closed": "table fermée",
           "suspended": "mises suspendues", "unknown": "état inconnu"}
# Why an open table takes no bet now (the window's refusal, `table.refusing`), as a screen says it.
SUSPENDU = {"wheel_not_heard": "en attente du cylindre", "wheel_unknown": "cylindre inconnu de la table",
            "unknown": "état de la table inconnu", "silent": "la table ne publie plus rien"}
CROUPIER = {"gauche": "croupier de gauche", "droite": "croupier de droite"}

# Frames the link refused (docs/integrators/link-protocol.md `reject.reason`).
REJECT = {
    "cobs": "trame mal délimitée", "short": "trame trop courte", "crc": "somme de contrôle fausse",
    "length": "longueur fausse", "type": "type de trame inconnu", "version": "version du protocole inconnue",
    "mac": "signature fausse (mauvaise clé)", "json": "contenu illisible", "overflow": "trame trop longue",
    "direction": "trame dans le mauvais sens", "wheel": "mauvais cylindre", "garbled": "ligne illisible",
    "too_long": "trame trop longue", "status": "état du cylindre illisible",
}

TABLES = {"void": VOID, "fault": FAULT, "alert": ALERT, "level": LEVEL, "bet": BET, "status": STATUS,
          "outcome": OUTCOME, "refusal": REFUSAL, "state": STATE, "sensor": SENSOR, "rnvp_why": RNVP_WHY,
          "phase": PHASE, "annonce": ANNONCE, "suspendu": SUSPENDU, "croupier": CROUPIER, "reject": REJECT}


def label(table: str, code) -> str:
    """The French label of `code` in `table`; an unknown code is shown as it is (never hidden)."""
    return TABLES[table].get(code, str(code))


def accepted_by(who) -> str:
    """Who accepted a wheel at the table (identity.py): a token's name, or the table's own first contact."""
    return "au premier contact" if who == "first contact" else (who or "—")


def void_fr(reason) -> str:
    return label("void", reason) if reason else "raison inconnue"


def coup_nul(reason) -> str:
    """What the croupier says at a void: 'coup nul : cylindre non inversé'."""
    return "coup nul : " + void_fr(reason)


def direction(d) -> str:
    """1 clockwise, -1 counter-clockwise, seen from above (docs/integrators/wheel-events.md)."""
    return {1: "sens horaire", -1: "sens anti-horaire"}.get(d, "sens inconnu")


# -- numbers as a French reader expects them ---------------------------------------------------------
def nombre(x, decimals=0) -> str:
    """12345.6 -> '12 345,6' (narrow no-break space between thousands, decimal comma, '−' sign)."""
    s = f"{abs(x):,.{decimals}f}".replace(",", NNBSP).replace(".", ",")
    return ("\u2212" if x < 0 and float(s.replace(NNBSP, "").replace(",", ".")) != 0 else "") + s


def euros(cents) -> str:
    """Integer cents -> '1 160,00 €' (exact: no float)."""
    if cents is None:
        return "—"
    c = abs(int(cents))
    whole = f"{c // 100:,}".replace(",", NNBSP)
    return ("\u2212" if cents < 0 else "") + f"{whole},{c % 100:02d}{NNBSP}€"


def pourcent(x, decimals=1) -> str:
    """-0.1412 (a percentage already) -> '−0,1 %'."""
    return nombre(x, decimals) + NNBSP + "%"


# -- bets as the announcements name them ------------------------------------------------------------
@lru_cache(maxsize=4096)
def _bet_label(body_json: str) -> str | None:
    from cylindre.rules.bets import BetError, parse_bet
    from cylindre.rules.limits import KINDS, MAX_CENTS, Limits
    try:
        body = json.loads(body_json)
        body.pop("zero_choice", None)
        body.setdefault("id", "b")
        # limits wide open: a stored bet's label never depends on the table's limits of today
        return parse_bet(body, Limits({k: (0, MAX_CENTS) for k in KINDS})).label
    except (BetError, ValueError, TypeError, KeyError, AttributeError):
        return None


def bet_label(body: dict) -> str:
    """The French label the rules give a bet ('cheval 14/17', 'jeu zéro', 'première douzaine'), the
    form of the croupier's announcements (annonce_fr); the type's label if the rules cannot read it."""
    try:
        key = json.dumps(body, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    found = _bet_label(key) if key is not None else None
    return found or label("bet", (body or {}).get("type"))


def as_js() -> str:
    """The tables as a script the pages load (`/assets/libelles.js`): one source for both."""
    return ("/* Generated by host_tools/table/libelles.py: the French labels of the API's codes. */\n"
            "\"use strict\";\nconst LIBELLES = " + json.dumps(TABLES, ensure_ascii=False, sort_keys=True) + ";\n")
