"""Alerts: thresholds from the config, raised once per occurrence, journaled, acknowledged by a chef."""

import json
import time

import pytest

from host_tools.table.alerts import rules as A
from host_tools.table.alerts.store import AlertStore
from host_tools.table.journal.store import Journal
from host_tools.table.game.table import Table
from host_tools.sim.tablewheel import Wheel

TH = A.thresholds({})


def test_config_overrides_defaults_and_bad_settings_are_refused():
    th = A.thresholds({"run_length": 10, "p_value": 0.001})
    assert th["run_length"] == 10 and th["p_value"] == 0.001 and th["void_window"] == A.DEFAULTS["void_window"]
    for bad in ({"run_lenght": 10}, {"run_length": 0}, {"run_length": 2.5}, {"p_value": 1.5}, {"void_rate": "high"},
                {"link_down_s": True}, {"games_per_hour_min": 100}):
        with pytest.raises(A.ConfigError):
            A.thresholds(bad)


def test_a_run_is_one_alert_while_it_grows_and_zero_ends_it():
    reds = [(s, 32 if s % 2 else 1) for s in range(1, 15)]        # 14 reds, alternately even passe and odd manque
    [a] = [x for x in A.evaluate({"results": reds}, TH, 0) if x["code"] == "run_length"]
    assert a["key"] == "run:rouge:1" and a["value"] == 14
    [b] = [x for x in A.evaluate({"results": reds + [(15, 1)]}, TH, 0) if x["code"] == "run_length"]
    assert b["key"] == a["key"] and b["value"] == 15
    assert not [x for x in A.evaluate({"results": reds + [(15, 0)]}, TH, 0) if x["code"] == "run_length"]
    assert not A.evaluate({"results": reds[:13]}, TH, 0)


def test_void_rate_article53_pace_and_link():
    launches = [{"spin": s, "at": s, "violations": []} for s in range(1, 41)]
    voids = [{"spin": s, "reason": "few_laps"} for s in range(1, 8)]                 # 7/40 = 17.5 %
    codes = {a["code"] for a in A.evaluate({"launches": launches, "voids": voids}, TH, 0)}
    assert codes == {"void_rate"}
    assert not A.evaluate({"launches": launches, "voids": voids[:6]}, TH, 0)         # 15 %: not above
    launches[20]["violations"] = ["rotor_not_reversed"]
    [a] = [x for x in A.evaluate({"launches": launches}, TH, 0) if x["code"] == "article53"]
    assert a["key"] == "article53:21" and a["level"] == "critical"
    base = {"table_open": True, "open_since": 0}
    assert [a["code"] for a in A.evaluate({**base, "results_last_hour": 12}, TH, 4000)] == ["games_per_hour"]
    assert not A.evaluate({**base, "results_last_hour": 12}, TH, 3000)               # open under an hour
    assert not A.evaluate({**base, "results_last_hour": 60}, TH, 4000)
    down = {**base, "link_up": False, "link_down_since": 1000.0}
    assert not A.evaluate(down, TH, 1029)
    [a] = A.evaluate(down, TH, 1030)
    assert a["code"] == "link_down" and a["key"] == "link_down:1000.0"
    assert not A.evaluate({**down, "table_open": False}, TH, 5000)


def test_statistics_alert_only_on_enough_games_and_after_correction():
    fam = [{"test": "arc", "p": 1e-6, "p_holm": 2e-5}, {"test": "numbers", "p": 0.004, "p_holm": 0.02}]
    assert not A.evaluate({"stats": {"games": 400, "family": fam}}, TH, 0)
    [a] = A.evaluate({"stats": {"games": 600, "family": fam}}, TH, 0)
    assert a["key"] == "stats:arc"


def test_alerts_are_journaled_cleared_and_acknowledged_with_a_comment(tmp_path):
    t = Table(Journal(tmp_path / "j.sqlite"), "T1")
    t.set_open(True)
    w = Wheel(t)
    for s in range(1, 15):
        w.spin(s, 32 if s % 2 else 1)
    store = AlertStore(t.j, "T1")
    now = time.time()                       # the table opened moments ago: no games-per-hour alert yet
    sig = store.signals(now=now, table_open=True)
    assert sig["results"][-1] == (14, 1)
    new = store.sync(A.evaluate(sig, TH, now), now=now)
    assert [a["code"] for a in new] == ["run_length"] and new[0]["value"] == 14
    w.spin(15, 1)
    assert store.sync(A.evaluate(store.signals(now, True), TH, now), now=now) == []     # the same run
    w.spin(16, 0)
    assert store.sync(A.evaluate(store.signals(now, True), TH, now), now=now + 60) == []
    [row] = store.list(pending_only=True)
    assert row["cleared_at"] == now + 60 and row["acked_at"] is None
    with pytest.raises(ValueError):
        store.acknowledge(row["id"], "chef1", "   ")
    with pytest.raises(KeyError):
        store.acknowledge(999, "chef1", "vu")
    done = store.acknowledge(row["id"], "chef1", "série vérifiée sur la vidéo, cylindre de niveau", now=3e10)
    assert (done["acked_by"], done["acked_at"]) == ("chef1", 3e10) and store.list(pending_only=True) == []
    with pytest.raises(ValueError):
        store.acknowledge(row["id"], "chef2", "encore")
    assert store.metrics() == {("run_length", "acknowledged"): 1}
    hour_later = store.signals(now + 3700, True)
    assert [a["code"] for a in A.evaluate(hour_later, TH, now + 3700)] == ["games_per_hour"]   # 0 games
    assert AlertStore(Journal(tmp_path / "j.sqlite"), "T1").list()[0]["comment"].startswith("série vérifiée")


# -- alerts live in the daemon (web_pages.Pit on the table app) -----------------------------------------
from apikit import Table as Host  # noqa: E402
from host_tools.table import config as cfg  # noqa: E402


def _reds(t, first, n):
    for s in range(first, first + n):
        t.feed.spin(s, 32 if s % 2 else 1)


def _metric(t, code, state):
    line = f'cylindre_alerts{{code="{code}",state="{state}"}} '
    [v] = [x[len(line):] for x in t.call("display", "GET", "/metrics").text.splitlines() if x.startswith(line)]
    return float(v)


def test_an_alert_goes_on_the_stream_and_the_metrics_and_a_chef_acknowledges_it_audited(tmp_path):
    t = Host(tmp_path / "j.sqlite", conf={"alerts": {"run_length": 5}})
    try:
        pit = t.app.state.pit
        after = t.host.events.bounds()[1]
        _reds(t, 1, 4)
        assert pit.check() == []                                    # 4 reds: under the threshold
        _reds(t, 5, 1)
        [a] = pit.check()
        assert (a["code"], a["value"], a["key"]) == ("run_length", 5, "run:rouge:1")
        assert pit.check() == []                                    # raised once
        [(eid, kind, data)] = [e for e in t.host.events.since(after) if e[1] == "alert"]
        assert json.loads(data)["id"] == a["id"]                     # journaled on the event stream
        assert _metric(t, "run_length", "pending") == 1 and _metric(t, "article53", "pending") == 0
        assert [x["id"] for x in t.call("chef", "GET", "/alerts?pending=true").json()] == [a["id"]]

        path = f"/alerts/{a['id']}/ack"
        assert t.call("croupier", "POST", path, json={"comment": "vu"}).status_code == 403
        assert t.call("chef", "POST", path, json={"comment": "   "}).status_code == 400
        assert t.call("chef", "POST", path, json={}).status_code == 400
        assert t.call("chef", "POST", "/alerts/999/ack", json={"comment": "vu"}).status_code == 404
        r = t.call("chef", "POST", path, json={"comment": "vidéo revue, cylindre de niveau"})
        assert r.status_code == 200 and r.json()["acked_by"] == "chef-1"
        assert t.call("admin", "POST", path, json={"comment": "encore"}).json()["error"] == "already_acknowledged"
        row = t.call("chef", "GET", "/audit?action=alert_ack").json()[0]
        assert (row["who"], row["target"], row["after"], row["done"]) == (
            "chef-1", str(a["id"]), {"comment": "vidéo revue, cylindre de niveau"}, True)
        assert _metric(t, "run_length", "pending") == 0 and _metric(t, "run_length", "acknowledged") == 1
        acks = [json.loads(d) for _, k, d in t.host.events.since(eid) if k == "alert"]
        assert [x["acked_by"] for x in acks] == ["chef-1"]
        assert t.call("chef", "GET", "/alerts?pending=true").json() == []
    finally:
        t.close()


def test_the_watch_checks_at_each_game_end_and_a_silent_link_raises_link_down(tmp_path):
    t = Host(tmp_path / "j.sqlite", conf={"alerts": {"run_length": 3, "every_s": 60, "link_down_s": 1}})
    pit = t.app.state.pit
    now = [time.time()]
    pit.clock = lambda: now[0]                      # the watch's own clock: the link's silence, not the machine's load
    try:
        pit.started = now[0] - 0.5                  # the daemon started; the wheel never heard (NoPort)
        pit.start()
        _reds(t, 1, 3)                                  # the third red's settlement wakes the watch
        end = time.monotonic() + 10
        while time.monotonic() < end and not pit.store.list():
            time.sleep(0.02)
        assert [a["code"] for a in pit.store.list()] == ["run_length"]      # not link_down: heard 0.5 s ago
        now[0] += 0.6                                                       # silent for 1.1 s now
        t.feed.spin(4, 2)                                                   # noir: the run ends
        end = time.monotonic() + 10                 # the watch wakes at the launch, again at the result
        while time.monotonic() < end and not (len(pit.store.list()) == 2 and pit.store.list()[1]["cleared_at"]):
            time.sleep(0.02)
        link, run = pit.store.list()
        assert link["code"] == "link_down" and link["level"] == "critical" and run["cleared_at"] is not None
    finally:
        pit.stop()
        t.close()


def test_alert_thresholds_come_from_the_config_file_and_a_bad_one_is_refused(tmp_path):
    f = tmp_path / "table.toml"
    f.write_text('port = "/dev/ttyACM0"\n[alerts]\nrun_length = 10\nlink_down_s = 12.5\n')
    conf = cfg.validate(cfg.load(f))
    assert conf["alerts"] == {"run_length": 10, "link_down_s": 12.5}
    assert cfg.validate(cfg.load(None))["alerts"] == {}
    for bad in ('[alerts]\nrun_lenght = 10\n', '[alerts]\nvoid_rate = 2\n', 'alerts = 3\n'):
        f.write_text(bad)
        with pytest.raises(cfg.ConfigError, match="alerts"):
            cfg.validate(cfg.load(f))


def test_a_link_down_alert_says_the_cause_that_holds_now_not_the_one_it_was_raised_with(tmp_path):
    """Before: the open link_down alert kept "le cylindre T2 a répondu, T1 attendu" after the
    cause became a silent wheel (its message is a snapshot taken when it is raised)."""
    store = AlertStore(Journal(tmp_path / "j.sqlite"), "T1")
    down = {"table_open": True, "link_up": False, "link_down_since": 1000.0}
    wrong = ("wrong_wheel", "le cylindre T2 a répondu, T1 attendu", "brancher le bon cylindre")
    silent = ("silent", "cylindre muet depuis 40 s : cylindre éteint, câble coupé, ou clé différente", "vérifier")
    store.sync(A.evaluate({**down, "link_problem": wrong}, TH, 1031), now=1031)
    store.sync(A.evaluate({**down, "link_problem": wrong}, TH, 1035), now=1035)     # the same cause: one alert
    assert [a["message"].endswith("T1 attendu") for a in store.list() if a["code"] == "link_down"] == [True]
    store.sync(A.evaluate({**down, "link_problem": silent}, TH, 1040), now=1040)
    live = [a for a in store.list() if a["code"] == "link_down" and a["cleared_at"] is None]
    assert len(live) == 1 and "cylindre muet" in live[0]["message"] and "T2" not in live[0]["message"]
    old = [a for a in store.list() if a["code"] == "link_down" and a["cleared_at"] is not None]
    assert len(old) == 1 and old[0]["cleared_at"] == 1040          # the former cause, kept in the history
