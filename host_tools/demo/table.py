"""`cylindre demo`: the whole table on one machine, no hardware.

Starts the simulated wheel (the firmware's code on the simulated board, real protocol on a
pseudo-terminal) and the daemon as two processes, then a few simulated players who bet through
the HTTP API: plain bets, called bets, even chances (which meet the zero sooner or later), a bet
withdrawn, a late bet refused as a poussette. Prints what the croupier says and pays, and at the
end the table's result against its theoretical edge. It prints the pages' addresses first (the
marquee with a display token, the pit and the statistics with a chef token); `--linger` keeps the
table up after the last spin so they can be looked at. The key, the journal and the logs stay in
a new folder under var/demo/ (or `--workdir`), named at the end with the `cylindre stats` command
to run on the journal.
"""

from __future__ import annotations

import json
import random
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from host_tools.demo.children import TablePty, spawn, stop_all
from host_tools.demo.players import EVEN, Api, Players
from host_tools.demo.workdir import workdir
from host_tools.table import libelles
from host_tools.table.libelles import euros, nombre, pourcent

HELP = "run the whole table on a simulated wheel with simulated players, then print the result"
OUTCOME = {"won": "gagne", "lost": "perd", "imprisoned": "en prison", "released": "libérée",
           "partage": "partage", "split": "partagée au quatrième zéro"}


def add_arguments(p):
    p.add_argument("--spins", type=int, default=20, help="spins to play (default 20, about a minute)")
    p.add_argument("--speed", type=float, default=20.0, help="simulated seconds per real second (default 20)")
    p.add_argument("--pause", type=float, default=1.0, help="real seconds between spins (default 1)")
    p.add_argument("--seed", type=int, default=1, help="wheel and players (default 1); the same seed deals the same "
                                                          "numbers in the same order")
    p.add_argument("--casino", default="Casino de démonstration",
                   help="the casino's name on the report and the pages (default: Casino de démonstration)")
    p.add_argument("--void-rate", type=float, default=0.1, help="share of misspins (default 0.1)")
    p.add_argument("--workdir", help="keep the key, journal and logs here (default: a new folder under var/demo/)")
    p.add_argument("--http-port", type=int, default=0, help="API port (default: a free one)")
    p.add_argument("--linger", type=float, nargs="?", const=0.0, default=None, metavar="SECONDS",
                   help="keep the table (daemon, pages) up after the last spin: SECONDS, or until Ctrl-C without")
    p.add_argument("--croupier", default="Marie", help="the croupier on duty the chef sets (default Marie)")
    p.add_argument("--tables", type=int, default=1, help="tables on a casino floor: more than 1 starts a local NATS "
                                                         "broker, that many tables and the floor service (docs/floor/overview.md)")
    p.add_argument("--wheel", default="T1", help="this table's wheel id (default T1)")
    p.add_argument("--nats", help="publish this table to the floor's NATS broker (the daemon's --nats)")
    p.add_argument("--site", default="CASINO", help="the casino's site id on the floor (default CASINO)")
    p.add_argument("--floor-key", help="take the floor's signed commands with this key (the daemon's --floor-key)")
    p.add_argument("--wheel-serial", help="the wheel's board serial published to the floor")


def _eur(c):
    return euros(c)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sse(url, on_event, stop, token, last=None):
    """Read the daemon's Server-Sent Events and call on_event(kind, data) for each, from after
    event id `last` (Last-Event-ID; None: from now); a reconnection resumes after the last event
    id seen, so none is lost or seen twice."""
    while not stop.is_set():
        headers = {"Authorization": "Bearer " + token}
        if last is not None:
            headers["Last-Event-ID"] = last
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
                kind, data = None, []
                for raw in r:
                    if stop.is_set():
                        return
                    line = raw.decode("utf-8").rstrip("\n")
                    if line.startswith("id: "):
                        last = line[4:]
                    elif line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        data.append(line[6:])
                    elif line == "" and kind:
                        on_event(kind, json.loads("\n".join(data)))
                        kind, data = None, []
        except (urllib.error.URLError, OSError, ValueError):
            time.sleep(0.2)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    if args.spins < 1:
        print("cylindre demo: --spins must be at least 1", file=sys.stderr)
        return 2
    for sig in (signal.SIGTERM, signal.SIGHUP):     # `kill`, a closed terminal: stop what we started, as Ctrl-C does
        signal.signal(sig, _interrupt)
    if args.tables > 1:
        from host_tools.demo.floor import run_floor
        return run_floor(args)
    work = workdir(args.workdir)
    key = work / f"{args.wheel}.key"
    if not key.exists():
        from host_tools.table.wheel.keys import new_key
        new_key(key)               # the demo's own wheel key: generated, never committed
    port = args.http_port or _free_port()
    base = f"http://127.0.0.1:{port}"
    py = sys.executable
    procs = []
    out = sys.stdout
    lock = threading.Lock()

    def say(text):
        with lock:
            print(text, file=out, flush=True)

    try:
        # the table's pty, its host end locked from its birth and handed to the daemon (children.py)
        try:
            line = TablePty()
        except OSError as e:
            print(f"cylindre demo : table {args.wheel} : {e}", file=sys.stderr)
            return 1
        pty = line.path
        wheel_log = open(work / "wheel.log", "w")
        wheel = spawn([py, "-m", "host_tools.sim.ptywheel", "--key", str(key), "--wheel", args.wheel,
                       "--spins", str(args.spins), "--pty-fd", str(line.master),
                       "--speed", str(args.speed), "--pause", str(args.pause), "--seed", str(args.seed),
                       "--void-rate", str(args.void_rate),
                       "--closed"]      # the croupier waits for the demo to open the table
                      + (["--serial", args.wheel_serial] if args.wheel_serial else []),   # the wheel says it
                      stdout=wheel_log, stderr=subprocess.STDOUT, pass_fds=(line.master,))
        procs.append(wheel)
        # the daemon's port is a link of the demo's own, gone with its wheel: a daemon lingering
        # after its wheel finds no port (and keeps its pty's number: no other program gets it)
        wheel_line = work / "ttyCYL"
        if wheel_line.is_symlink() or wheel_line.exists():
            wheel_line.unlink()
        wheel_line.symlink_to(pty)
        threading.Thread(target=_unlink_when_gone, args=(wheel, wheel_line), daemon=True).start()
        from host_tools.table.api.auth import issue
        token = issue(work / "journal.sqlite", "demo", "admin")     # the demo's players and chef, one identity
        pages = {"display": issue(work / "journal.sqlite", "demo-marquee", "display"),
                 "chef": issue(work / "journal.sqlite", "demo-pit", "chef")}
        since = _last_event_id(work / "journal.sqlite")
        daemon = spawn([py, "-m", "host_tools.table", "--port", str(wheel_line), "--port-fd", str(line.slave),
                        "--key", str(key), "--journal", str(work / "journal.sqlite"), "--http", f"127.0.0.1:{port}",
                        "--log", str(work / "daemon.log"), "--wheel", args.wheel,
                        "--casino", args.casino, "--table-name", f"Table {args.wheel}"]
                       + (["--nats", args.nats, "--site", args.site] if args.nats else [])
                       + (["--floor-key", args.floor_key] if args.floor_key else [])
                       + (["--wheel-serial", args.wheel_serial] if args.wheel_serial else []),
                       stdout=subprocess.DEVNULL, stderr=open(work / "daemon.err", "w"), pass_fds=(line.slave,))
        procs.append(daemon)
        line.handed_over()
        api = Api(base, token)
        end = time.monotonic() + 90              # three tables starting at once on a busy machine
        while True:
            try:
                st, state = api.call("GET", "/state", timeout=2)
                # a session now, or one that has been (a reused journal's open table lets the
                # wheel play at once: it may be done before this first look)
                if st == 200 and (state["link"]["session"] or state["link"].get("sessions", 0) >= 1):
                    break
            except (urllib.error.URLError, OSError):
                pass
            if daemon.poll() is not None or wheel.poll() is not None or time.monotonic() > end:
                print(f"cylindre demo : table {args.wheel} : {why_not_up(work, daemon, wheel)}", file=sys.stderr)
                return 1
            time.sleep(0.1)
        if args.croupier:
            api.call("PUT", "/table/croupier", {"croupier": args.croupier})
        was_open = state["table"]["phase"] != "closed"
        # the table opens before its pages are printed (a bet typed on seeing them is taken); the
        # stream, read from the last event before the opening, misses none of the game
        api.call("POST", "/table/open")
        say(f"Démonstration Cylindre : cylindre {args.wheel} sur {pty}, API du démon {base} (explorateur : {base}/docs)")
        say(f"{args.spins} coups, temps simulé ×{nombre(args.speed, 0 if args.speed == int(args.speed) else 1)} ; "
            f"journal et traces dans {work}")
        for line in page_urls(base, pages):
            say(line)
        say("")

        rng = random.Random(args.seed)
        players = Players(api, rng, say)
        stop = threading.Event()
        rounds = {"settled": 0}
        todo = []
        cv = threading.Condition()

        def on_event(kind, data):
            if kind == "announce":
                text = data["text"]
                say(f"Croupier : {text}")
                if text == "faites vos jeux":
                    with cv:
                        todo.append("bet")
                        cv.notify()
                elif text == "rien ne va plus" and rng.random() < 0.25:
                    with cv:
                        todo.append("late")
                        cv.notify()
            elif kind == "settlement":
                # the event says the number and the totals; the per-bet results are the journal's
                st, rec = api.call("GET", "/spins/%d" % data["spin"])
                for r in (rec.get("settlement") or {}).get("results", []) if st == 200 else []:
                    who = players.owner.get(r["id"].split(".")[0], "?")
                    what = OUTCOME.get(r["outcome"], r["outcome"])
                    if r["paid"] or r["outcome"] in ("imprisoned", "released", "partage", "split"):
                        say(f"  {who:6} {r['label']}: {what}"
                            + (f", gain {_eur(r['won'])}" if r["won"] else "")
                            + (f", rendu {_eur(r['returned'])}" if r["returned"] else "")
                            + (f" ({_eur(r['imprisoned'])})" if r["outcome"] == "imprisoned"
                               else f", en prison {_eur(r['imprisoned'])}" if r["imprisoned"] else ""))
                t = data["totals"]
                say(f"  (coup {data['spin']} : misé {_eur(t['staked'])}, payé {_eur(t['paid'])}, perdu {_eur(t['lost'])})\n")
                with cv:
                    rounds["settled"] += 1
                    cv.notify()
            elif kind == "wheel" and data.get("ev") == "launch":
                rounds["launches"] = rounds.get("launches", 0) + 1
                say(f"— lancer, coup {data['spin']} —")

        listener = threading.Thread(target=_sse, args=(base + "/events", on_event, stop, token, str(since)),
                                    daemon=True)
        listener.start()
        if was_open:
            with cv:
                todo.append("bet")  # a reused journal's table, open already: no "faites vos jeux" comes
        while True:
            with cv:
                cv.wait_for(lambda: todo or wheel.poll() is not None, timeout=0.5)
                jobs, todo[:] = list(todo), []
            for job in jobs:
                if job == "bet" and rounds.get("launches", 0) >= args.spins:
                    pass                    # the wheel's last launch is done: no bet for a spin that will not come
                elif job == "bet":
                    players.place_round(lambda: wheel.poll() is not None)
                else:
                    players.late_bet()
            if wheel.poll() is not None and not jobs:
                break
        # the wheel has finished its spins; give the daemon a moment to settle the last one
        end = time.monotonic() + 10
        while time.monotonic() < end:
            st, state = api.call("GET", "/state")
            if state["table"]["locked_spin"] is None and state["link"]["counts"]["events"] > 0:
                break
            time.sleep(0.2)
        time.sleep(0.5)
        stop.set()
        report(api, players, say)
        if args.linger is not None:
            linger(args.linger, base, pages, say, daemon)
        return 0
    finally:
        stop_all(procs)
        print(f"Journal conservé : {work / 'journal.sqlite'} (les journaux de bord à côté) ; "
              f"statistiques du cylindre (graphiques et rapport PDF dans {work / 'rapport'}) :\n"
              f"  {_this_command()} stats --journal {work / 'journal.sqlite'} --out {work / 'rapport'} "
              f"--casino {shlex.quote(args.casino)} --table {shlex.quote('Table ' + args.wheel)}", flush=True)


def why_not_up(work, daemon, wheel) -> str:
    """Why a table did not come up, in words, from its processes and their logs."""
    if daemon.poll() is not None:
        err = _tail(work / "daemon.err") or _tail(work / "daemon.log")
        return f"le démon s'est arrêté (code {daemon.returncode})" + (f" : {err}" if err else "") + f" ; voir {work / 'daemon.log'}"
    if wheel.poll() is not None:
        return f"le cylindre simulé s'est arrêté (code {wheel.returncode}) ; voir {work / 'wheel.log'}"
    why = [ln for ln in _tail(work / "daemon.log", 40).splitlines() if "WARNING" in ln or "ERROR" in ln]
    return ("le démon ne joint pas le cylindre simulé en 90 s" + (f" : {why[-1].split(': ', 1)[-1]}" if why else "")
            + f" ; voir {work / 'daemon.log'}")


def _tail(path, n=3) -> str:
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def _unlink_when_gone(proc, path):
    """Remove the daemon's link to the wheel's pty once the wheel has exited."""
    proc.wait()
    path.unlink(missing_ok=True)


def _this_command() -> str:
    """How to run `cylindre` again from here: `.venv/bin/cylindre` after `make demo` (the venv's bin
    is not on a newcomer's PATH), `cylindre` when it is on the PATH."""
    exe = Path(sys.argv[0])
    on_path = shutil.which("cylindre")
    if exe.name != "cylindre" or (on_path and Path(on_path).resolve() == exe.resolve()):
        return "cylindre"
    try:
        return str(exe.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(exe)


def _last_event_id(journal) -> int:
    """The last event the journal's stream holds (0: none yet), read before the daemon starts."""
    try:
        with sqlite3.connect(journal) as db:
            return db.execute("SELECT COALESCE(MAX(id), 0) FROM event_log").fetchone()[0]
    except sqlite3.Error:
        return 0




def page_urls(base, tokens) -> list[str]:
    """The pages' addresses, each with a token of its role in the fragment (never sent to the
    server; the page keeps it in its tab and takes it out of the address bar)."""
    return ["Pages (ouvrir dans un navigateur) :",
            f"  tableau des numéros  {base}/marquee#token={tokens['display']}",
            f"  chef de table        {base}/pit#token={tokens['chef']}",
            f"  statistiques         {base}/stats#token={tokens['chef']}"]


def linger(seconds, base, tokens, say, daemon):
    """Keep the table up after the last spin: `seconds`, or until Ctrl-C / SIGTERM when 0."""
    done = threading.Event()
    old = {s: signal.signal(s, lambda *_: done.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        say("\nLa table reste ouverte " + (f"{seconds:g} s" if seconds else "jusqu'à Ctrl-C") + " :")
        for line in page_urls(base, tokens)[1:]:
            say(line)
        end = time.monotonic() + seconds if seconds else None
        while not done.is_set() and daemon.poll() is None and (end is None or time.monotonic() < end):
            done.wait(0.2)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def edge_of(result):
    """The bank's theoretical edge on a stake: 1/37, or 1/74 for even chances (en prison/partage)."""
    return (1, 74) if result.get("type") in EVEN else (1, 37)


def summarize(settlements):
    """House result and theoretical edge over settled spins (integer cents, exact fractions)."""
    from fractions import Fraction
    house = 0
    staked = 0
    expected = Fraction(0)
    pending = 0
    spins = 0
    zeros = 0
    for s in settlements:
        spins += 1
        zeros += s["number"] == 0
        res = s["result"]
        for r in res["results"]:
            house += r["lost"] - r["won"]
            if not r.get("carried"):
                staked += r["staked"]
                n, d = edge_of(r)
                expected += Fraction(r["staked"] * n, d)
        pending = sum(p["stake"] for p in res["prisoners"])
    return {"spins": spins, "zeros": zeros, "staked": staked, "house": house,
            "expected": expected, "imprisoned_at_end": pending}


def leftovers(api, say):
    """Bets still on the layout when the wheel stops (its last launch void: they stay in play for the
    next spin), said with why and what becomes of them, so every stake is accounted for."""
    st, bets = api.call("GET", "/bets?status=open&limit=10000")
    if st != 200 or not bets:
        return
    st, games = api.call("GET", "/games?limit=1")
    last = games[0] if st == 200 and games else None
    why = (f"le dernier lancer (coup {last['spin']}) est nul : {libelles.void_fr(last['void'])}, et le cylindre s'arrête là"
           if last and last.get("void") else "le cylindre s'est arrêté avant leur coup")
    total = sum(b["stake"] for b in bets)
    say(f"Mises restées sur le tapis : {len(bets)} pour {_eur(total)} — {why}. Ni gagnées ni perdues : le journal "
        "les garde, elles joueront au prochain coup quand la table reprendra.")


def report(api, players, say):
    leftovers(api, say)
    st, hist = api.call("GET", "/history?limit=10000")
    settlements = []
    for h in sorted(hist, key=lambda h: h["spin"]):
        st, rec = api.call("GET", f"/spins/{h['spin']}")
        if st == 200 and rec["settlement"]:
            settlements.append({"number": rec["settlement"]["number"], "result": rec["settlement"]})
    s = summarize(settlements)
    st, state = api.call("GET", "/state")
    c = state["link"]["counts"]
    say("=" * 72)
    n, z = s['spins'], s['zeros']
    coups = f"{n} coup payé" if n == 1 else f"{n} coups payés"
    zeros = f"{z} zéro" if z <= 1 else f"{z} zéros"
    say(f"Fin de partie : {coups} ({zeros}) ; mises refusées après rien ne va plus (poussettes) : {players.refused}")
    say(f"Total misé : {_eur(s['staked'])}")
    pct = 100.0 * s["house"] / s["staked"] if s["staked"] else 0.0
    exp = float(s["expected"])
    epct = 100.0 * exp / s["staked"] if s["staked"] else 0.0
    say(f"Résultat de la table (banque) : {_eur(s['house'])} ({'+' if pct > 0 else ''}{pourcent(pct, 2)} des mises)")
    say(f"Avantage théorique : {_eur(round(exp))} ({pourcent(epct, 2)} : 1/37 = {pourcent(100 / 37, 2)}, "
        f"chances simples 1/74 = {pourcent(100 / 74, 2)})")
    if s["imprisoned_at_end"]:
        say(f"Encore en prison à la fin : {_eur(s['imprisoned_at_end'])}")
    say(f"Liaison : {c['frames']} trames, {c['events']} événements, {c['duplicates']} renvoyés, {c['rejects']} refusés")
