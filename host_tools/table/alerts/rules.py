"""Alerts for the pit (alertes): thresholds from the config, what the journal says now → the
alerts that hold now; and the chef's acknowledgement of one. Pure functions on plain dicts; the
shell that journals them is `alerts/store.py`.

An alert is raised once per occurrence of its condition: its `key` names the occurrence (a run
names the spin it started at, an Article 53 violation its spin, a link outage its start), so a
run of 16 that becomes 17 is still one alert, and the next run is another. An alert stays on the
pit page until a chef acknowledges it with a comment, even after its condition ended.
"""

from __future__ import annotations

from cylindre.rules import wheel as W

from host_tools.table.libelles import label

# [alerts] in the daemon's config; every key optional (docs/pit/alerts.md)
DEFAULTS = {
    "p_value": 0.01,                # family-wise alpha (Holm) of the wheel statistics
    "stats_min_games": 500,         # no statistics alert on fewer games than this
    "run_length": 14,               # the same even chance this many times in a row (zero breaks a run)
    "void_rate": 0.15,              # share of void launches over the last `void_window` launches
    "void_window": 40,
    "article53": 1,                 # launches breaking Article 53 among the last `void_window`
    "games_per_hour_min": 20,       # results in the last hour, once the table has been open an hour
    "games_per_hour_max": 90,
    "link_down_s": 30,              # the wheel unheard for this long while the table is open
    "every_s": 5,                   # the daemon checks the thresholds this often, and on each game's end
    "stats_every_s": 600,           # the wheel statistics (the whole journal) at most this often
}

CODES = ("run_length", "void_rate", "article53", "games_per_hour", "link_down", "link_fault", "wheel_unknown",
         "statistics")
# link causes (linkwatch.py) that are a fault to fix, not a wait: alerted at once, table open or not
FAULTS = ("wrong_wheel", "not_authentic", "garbage")
_INT_KEYS = ("stats_min_games", "run_length", "void_window", "article53", "games_per_hour_min", "games_per_hour_max")


class ConfigError(ValueError):
    pass


def thresholds(config: dict | None) -> dict:
    """DEFAULTS overridden by `config` (the [alerts] table), checked: a clear error, never a
    silently ignored key."""
    config = dict(config or {})
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise ConfigError("alerts: unknown setting(s) %s (known: %s)" % (", ".join(unknown), ", ".join(sorted(DEFAULTS))))
    th = dict(DEFAULTS)
    for k, v in config.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ConfigError(f"alerts.{k} must be a number, not {v!r}")
        if k in _INT_KEYS and (v != int(v) or v < 1):
            raise ConfigError(f"alerts.{k} must be a whole number of at least 1, not {v!r}")
        th[k] = int(v) if k in _INT_KEYS else float(v)
    if not 0 < th["p_value"] < 1:
        raise ConfigError(f"alerts.p_value must be between 0 and 1, not {th['p_value']}")
    if not 0 < th["void_rate"] <= 1:
        raise ConfigError(f"alerts.void_rate must be in (0, 1], not {th['void_rate']}")
    for k in ("link_down_s", "every_s", "stats_every_s"):
        if th[k] <= 0:
            raise ConfigError(f"alerts.{k} must be positive")
    if th["games_per_hour_min"] > th["games_per_hour_max"]:
        raise ConfigError("alerts.games_per_hour_min is above games_per_hour_max")
    return th


def _p(x):
    """A p-value as a French reader writes it: 0,0042."""
    return f"{x:.2g}".replace(".", ",")


def _alert(code, key, level, message, value=None, threshold=None):
    return {"code": code, "key": key, "level": level, "message": message, "value": value, "threshold": threshold}


def current_runs(results):
    """For each even chance, the run of it in progress at the end of `results` ([(spin, number)],
    oldest first): {chance: (length, first spin)}; zero ends every run."""
    out = {}
    for chance in W.CHANCES:
        n, first = 0, None
        for spin, number in results:
            if W.chance_wins(chance, number):
                n, first = n + 1, (first if n else spin)
            else:
                n, first = 0, None
        if n:
            out[chance] = (n, first)
    return out


def evaluate(signals: dict, th: dict, now: float) -> list:
    """The alerts that hold now. `signals` (every key optional):
      results        [(spin, number)] the recent results, oldest first
      launches       [{"spin", "at", "violations"}] the recent launches, oldest first
      voids          [{"spin", "at", "reason"}] voids of those launches
      table_open     bool;  open_since: when the table last opened (epoch s)
      results_last_hour  number of results in [now - 3600, now]
      link_up        bool;  link_down_since: epoch s the wheel was last heard (None: never)
      link_problem   (code, text, advice) from linkwatch.LinkWatch.cause, or None
      stats          {"games": n, "family": [{"test", "p", "p_holm"}]} from host_tools.stats
    """
    out = []
    is_open = bool(signals.get("table_open"))

    for chance, (n, first) in sorted(current_runs(signals.get("results") or []).items()):
        if n >= th["run_length"]:
            out.append(_alert("run_length", f"run:{chance}:{first}", "warning",
                              f"série de {n} × {chance} depuis le coup {first}", n, th["run_length"]))

    launches = (signals.get("launches") or [])[-th["void_window"]:]
    if launches:
        spins = {g.get("spin") for g in launches}
        voids = [v for v in signals.get("voids") or [] if v.get("spin") in spins]
        rate = len(voids) / len(launches)
        if len(launches) >= th["void_window"] and rate > th["void_rate"]:
            out.append(_alert("void_rate", "void_rate", "warning",
                              f"coups nuls : {len(voids)} sur les {len(launches)} derniers lancers ({100 * rate:.0f} %)",
                              round(rate, 4), th["void_rate"]))
        bad = [g for g in launches if g.get("violations")]
        if len(bad) >= th["article53"]:
            last = bad[-1]
            out.append(_alert("article53", f"article53:{last.get('spin')}", "critical",
                              f"Article 53 : {len(bad)} lancer(s) en infraction sur les {len(launches)} derniers "
                              f"(coup {last.get('spin')} : {', '.join(label('void', v) for v in last['violations'])})",
                              len(bad), th["article53"]))

    since = signals.get("open_since")
    if is_open and since is not None and now - since >= 3600 and signals.get("results_last_hour") is not None:
        n = signals["results_last_hour"]
        if not th["games_per_hour_min"] <= n <= th["games_per_hour_max"]:
            out.append(_alert("games_per_hour", "games_per_hour", "warning",
                              f"{n} coups dans la dernière heure (attendu {th['games_per_hour_min']}–{th['games_per_hour_max']})",
                              n, [th["games_per_hour_min"], th["games_per_hour_max"]]))

    problem = signals.get("link_problem")
    if is_open and not signals.get("link_up", True):
        down = signals.get("link_down_since")
        for_s = None if down is None else now - down
        if for_s is None or for_s >= th["link_down_s"]:
            why = f" : {problem[1]}" if problem and problem[0] != "wheel_unknown" else ""
            # keyed by its cause too: when the cause changes (a wrong wheel, then a silent one)
            # the alert of the old cause ends and one that says the new cause is raised
            cause = f":{problem[0]}" if problem else ""
            out.append(_alert("link_down", f"link_down:{down}{cause}", "critical",
                              "liaison avec le cylindre coupée" + ("" if for_s is None else f" depuis {for_s:.0f} s") + why,
                              None if for_s is None else round(for_s, 1), th["link_down_s"]))
    if problem and problem[0] in FAULTS:
        out.append(_alert("link_fault", f"link_fault:{problem[0]}", "critical", f"{problem[1]} — à faire : {problem[2]}"))
    if problem and problem[0] == "wheel_unknown":
        out.append(_alert("wheel_unknown", f"wheel_unknown:{problem[1]}", "critical",
                          f"{problem[1]} — à faire : {problem[2]}"))

    st = signals.get("stats")
    if st and st.get("games", 0) >= th["stats_min_games"]:
        for f in st.get("family") or []:
            if f.get("p_holm", 1.0) < th["p_value"]:
                out.append(_alert("statistics", f"stats:{f['test']}", "critical",
                                  f"statistique du cylindre : {f['test']} significatif sur {st['games']} coups "
                                  f"(p = {_p(f['p'])}, corrigé Holm {_p(f['p_holm'])})", f["p_holm"], th["p_value"]))
    return out


def changes(open_keys, current) -> tuple[list, set]:
    """(alerts to raise: in `current`, not yet raised; keys whose condition has ended)."""
    now_keys = {a["key"] for a in current}
    return [a for a in current if a["key"] not in open_keys], set(open_keys) - now_keys


def acknowledgement(alert: dict, by: str, comment: str, now: float) -> dict:
    """The chef's acknowledgement of `alert` (a stored row), checked: who and why are required."""
    if alert.get("acked_at") is not None:
        raise ValueError(f"alert {alert.get('id')} was already acknowledged by {alert.get('acked_by')}")
    if not isinstance(by, str) or not by.strip():
        raise ValueError("an acknowledgement needs the name of the chef")
    if not isinstance(comment, str) or not comment.strip():
        raise ValueError("an acknowledgement needs a comment (what was checked, what was done)")
    if len(comment) > 1000:
        raise ValueError("the comment is over 1000 characters")
    return {"acked_at": now, "acked_by": by.strip(), "comment": comment.strip()}
