"""`cylindre demo --tables N` (`make demo TABLES=N`): a casino floor on one machine.

Starts a local nats-server (host_tools/floor/natsrv.py), N whole tables (`cylindre demo` once per table:
a simulated wheel, its daemon publishing to the broker with `--nats`, simulated players), each in
its own folder with its own log, and the floor service (`cylindre floor`) with the tables laid out
in pits, a command key shared with the tables and a report key; prints the floor page's address
with a director's token (and a surveillance one), waits for the tables' spins, prints what the
floor stored against what each table journaled, and with `--linger` keeps everything up.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from host_tools.demo.children import spawn, stop_all
from host_tools.table.libelles import euros

SITE = "CASINO"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, token, timeout=3):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def run_floor(args) -> int:
    from host_tools.floor import natsrv
    from host_tools.floor.link.command import new_key

    from host_tools.floor.access import Access
    from host_tools.floor.signing import new_key as new_report_key
    from host_tools.floor.store import Store

    from host_tools.demo.workdir import workdir
    work = workdir(args.workdir)            # kept, as the one-table demo's: var/demo/<time>/ by default
    py = sys.executable
    procs = []
    from host_tools.demo.children import die_with_parent
    broker = natsrv.Server(work / "jetstream", preexec_fn=die_with_parent)    # a demo killed -9 leaves no broker
    try:
        broker.start()
        key = work / "floor-command.key"
        if not key.exists():
            new_key(key)
        report_key = work / "floor-report.key"
        if not report_key.exists():
            new_report_key(report_key)
        names = [f"T{i + 1}" for i in range(args.tables)]
        ports = {t: _free_port() for t in names}
        layout = work / "floor.toml"
        layout.write_text("".join(f'[tables.{t}]\npit = "Pit {chr(65 + i // 2)}"\nurl = "http://127.0.0.1:{ports[t]}"\n'
                                  f"target = 40\n\n" for i, t in enumerate(names)))
        db = work / "floor.sqlite"
        access = Access(Store(str(db)))
        tokens = {}
        for name, role in (("demo-directeur", "director"), ("demo-surveillance", "surveillance")):
            access.revoke(name)
            tokens[role] = access.add(name, role)
        access.store.close()
        http = args.http_port or _free_port()
        flog = open(work / "floor.log", "w")
        procs.append(spawn([py, "-m", "host_tools.cli", "floor", "--db", str(db), "--nats", broker.url,
                            "--http", f"127.0.0.1:{http}", "--floor-key", str(key), "--layout", str(layout),
                            "--reports", str(work / "reports"), "--report-key", str(report_key)],
                           stdout=flog, stderr=subprocess.STDOUT))
        base = f"http://127.0.0.1:{http}"
        tables = []
        for i, t in enumerate(names):
            (work / t).mkdir(exist_ok=True)
            log = open(work / t / "demo.log", "w")
            cmd = [py, "-m", "host_tools.cli", "demo", "--wheel", t, "--seed", str(args.seed + i), "--spins", str(args.spins),
                   "--speed", str(args.speed), "--pause", str(args.pause), "--void-rate", str(args.void_rate),
                   "--workdir", str(work / t), "--http-port", str(ports[t]), "--nats", broker.url, "--site", SITE,
                   "--floor-key", str(key), "--wheel-serial", f"DEMO-{i + 1:04d}", "--croupier",
                   ("Marie", "Lucas", "Inès", "Hugo")[i % 4], "--casino", args.casino]
            if args.linger is not None:
                cmd += ["--linger"] + ([str(args.linger)] if args.linger else [])
            tables.append(spawn(cmd, stdout=log, stderr=subprocess.STDOUT))
            procs.append(tables[-1])
        end = time.monotonic() + 30
        while True:
            try:
                _get(base + "/floor/api/me", tokens["director"])
                break
            except OSError:
                if procs[0].poll() is not None or time.monotonic() > end:
                    print("cylindre demo: the floor did not come up; see " + str(work / "floor.log"), file=sys.stderr)
                    return 1
                time.sleep(0.2)
        print(f"Démonstration Cylindre : une salle de {args.tables} tables, courtier NATS {broker.url}, fichiers dans {work}")
        print("La salle (ouvrir dans un navigateur) :")
        print(f"  directeur     {base}/floor#token={tokens['director']}")
        print(f"  surveillance  {base}/floor#token={tokens['surveillance']}")
        for t in names:
            print(f"  table {t:4}    http://127.0.0.1:{ports[t]}/   (journal et pages de la table : {work / t})")
        print(f"{args.spins} coups par table ; chaque table écrit dans {work}/T*/demo.log", flush=True)
        failed = started(names, tables, work)
        if failed:
            for t, why in failed.items():
                print(f"La table {t} n'a pas démarré : {why}", file=sys.stderr, flush=True)
            print("La démonstration s'arrête : " + ", ".join(failed) + " n'a pas démarré (voir ci-dessus).",
                  file=sys.stderr, flush=True)
            return 1
        for t, p in zip(names, tables):
            # a lingering table never exits: its spins are over once it says it stays open
            while p.poll() is None and not (args.linger is not None and _lingering(work / t / "demo.log")):
                time.sleep(0.5)
        summary(base, tokens["director"], work, names)
        if args.linger is not None:
            print("La salle reste ouverte" + (f" {args.linger:g} s" if args.linger else " (Ctrl-C pour finir)"), flush=True)
            try:
                time.sleep(args.linger) if args.linger else signal.pause()
            except KeyboardInterrupt:
                pass
        return 0 if all(p.returncode in (0, None) for p in tables) else 1
    finally:
        stop_all(procs, timeout=15)
        broker.close()
        print(f"Les fichiers de la salle (journaux des tables, floor.sqlite, rapports) restent dans {work}")


def started(names, tables, work, timeout=120.0) -> dict:
    """Wait until every table's demo says it is up (its first line, demo/table.py) or has stopped;
    {table: why} for those that did not start, from their own words."""
    pending = dict(zip(names, tables))
    failed = {}
    end = time.monotonic() + timeout
    while pending and time.monotonic() < end:
        for t, p in list(pending.items()):
            log = work / t / "demo.log"
            text = log.read_text(errors="replace") if log.exists() else ""
            if "Démonstration Cylindre :" in text:
                print(f"  table {t} prête", flush=True)
                del pending[t]
            elif p.poll() is not None:
                lines = [ln for ln in text.splitlines() if ln.strip()]
                failed[t] = (lines[-1].split(" : ", 1)[-1] if lines else f"arrêtée (code {p.returncode}) sans un mot") \
                    + f" ({log})"
                del pending[t]
        time.sleep(0.2)
    for t in pending:
        failed[t] = f"pas prête en {timeout:.0f} s ({work / t / 'demo.log'})"
    return failed


def _lingering(log) -> bool:
    """The table's demo (host_tools/demo/table.py) has played its spins and stays up (--linger)."""
    try:
        return "La table reste ouverte" in log.read_text(errors="replace")
    except OSError:
        return False


def summary(base, token, work, names, timeout=20.0):
    """What the floor stored against each table's journal (its settled games), once caught up."""
    import sqlite3
    want = {}
    for t in names:
        db = sqlite3.connect(f"file:{work / t / 'journal.sqlite'}?mode=ro", uri=True)
        try:
            want[t] = db.execute("SELECT COUNT(*) FROM settlements").fetchone()[0]
        finally:
            db.close()
    end = time.monotonic() + timeout
    while True:
        tiles = {x["table"]: x for x in _get(base + "/floor/api/state", token)["tiles"]}
        got = {t: tiles.get(t, {}).get("games", 0) for t in names}
        if got == want or time.monotonic() > end:
            break
        time.sleep(0.5)
    print("\nLa salle a reçu (coups au journal de la table / coups à la salle) :")
    for t in names:
        x = tiles.get(t, {})
        print(f"  {t} : {want[t]} / {got[t]}   mises {euros(x.get('turnover', 0))}, résultat {euros(x.get('result', 0))}"
              + ("" if want[t] == got[t] else "   <- incomplet"))
