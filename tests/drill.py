"""`make drill`: long drills of the money path, through a relay we control on the serial line
and a hostile client on the API; each prints one JSON line per round and a TOTAL line, and
exits 1 if a bet sent after its spin's call was played, money did not balance, or forged state
was accepted.

    .venv/bin/python tests/drill.py chaos  [--rounds 5] [--seconds 20] [--spins 25] [--speed 20] [--kill]
    .venv/bin/python tests/drill.py phases [--spins 12] [--speed 1] [--faults cut,delay]
    .venv/bin/python tests/drill.py api    [--speed 20]

`chaos`: random delays, cuts, replays, noise (and daemon kills) with players betting all along.
`phases`: at the wheel's real speed, a cable pull (2-15 s) or a slow line (1.5 s for 8 s) at every
phase of the spin in turn: before the launch, ball in the rim, right before the call, right after
it, between the call and the result, right after the result.
`api`: forged state fields, unknown fields, a player's consent, negative, huge and malformed
Content-Length, deep nesting, 5,000-digit integers, a newline in a name, an Idempotency-Key
replayed with another body, the daemon killed between its commit and its reply then the retry.
`--daemon-root DIR --daemon-python PY` runs another checkout's daemon (an older commit) against
the same wheel, relay and client: what the drills find there.
"""

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from relaykit import Players, audit, chaos, moments_of, pulls, relay_rig  # noqa: E402


def _rig(tmp, seed, speed, a, pause=0.3):
    rig, relay = relay_rig(Path(tmp), seed=seed, speed=speed, pause=pause)
    if a.daemon_root:
        rig.root = Path(a.daemon_root).resolve()
        rig.python = a.daemon_python or str(rig.root / ".venv/bin/python")
    return rig, relay


def _frames_refused(rig):
    c = sqlite3.connect(rig.journal)
    out = dict(c.execute("SELECT kind, COUNT(*) FROM frames WHERE kind IN ('reject','stale','gap') GROUP BY kind").fetchall())
    c.close()
    return out


def _drill(seed, a, inject, pause=0.3, finish_s=120, settle_s=0.5, stop=None):
    """One drill's frame: a table on a simulated wheel through a faulty relay, players betting,
    `inject(rig, relay, moments)` doing the damage (its return is the drill's `faults`), then the
    audit of every bet against the wheel's own record."""
    with tempfile.TemporaryDirectory() as tmp:
        rig, relay = _rig(tmp, seed, a.speed, a, pause=pause)
        m = moments_of(rig)
        rig.start_daemon()
        players = Players(rig, seed=seed)
        try:
            rig.play(a.spins)
            rig.wait_link()
            players.start()
            faults = inject(rig, relay, m)
            rig.finish(finish_s)
            players.stop()
            time.sleep(settle_s)
            out = audit(rig, players, m.calls, m.ends)
            out["frames_refused"] = _frames_refused(rig)
            out["faults"] = faults
            out["results_wheel"] = len(rig.board_results())
        finally:
            if stop is not None:
                stop.set()
            players.stop()
            relay.stop()
            rig.stop_daemon()
    return out


def one_chaos(seed, a):
    """Random cuts, corruption, replays and (with --kill) daemon kills for `a.seconds`."""
    return _drill(seed, a, lambda rig, relay, m: chaos(rig, relay, a.seconds, random.Random(seed), kill=a.kill))


def one_phases(seed, a):
    """One fault of each kind aimed at each phase of a spin (betting, rien ne va plus, result)."""
    stop = threading.Event()

    def inject(rig, relay, m):
        return pulls(relay, m, a.spins, stop, kinds=tuple(a.faults.split(",")), rng=random.Random(seed),
                     log=lambda d: print("  " + json.dumps(d), file=sys.stderr, flush=True))
    return _drill(seed, a, inject, pause=2.0, finish_s=300, settle_s=1.0, stop=stop)


# -- the API drill ------------------------------------------------------------------------------------
BET = {"player": "ana", "type": "plein", "numbers": [17], "stake": 1000}


def _http(port, method, path, body=b"", headers=(), length=None, timeout=10):
    """One raw request; (status, JSON or None). `length` forces the Content-Length header."""
    head = "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n" % (method, path)
    head += "Content-Length: %s\r\n" % (len(body) if length is None else length)
    head += "".join("%s: %s\r\n" % h for h in headers)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        try:
            c.sendall(head.encode() + b"\r\n" + body)
        except OSError:
            pass
        data = b""
        try:
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
    if not data:
        return None, None
    top, _, rest = data.partition(b"\r\n\r\n")
    try:
        return int(top.split()[1]), json.loads(rest or b"null")
    except ValueError:
        return int(top.split()[1]), None


def _bets(rig):
    c = rig.db()
    rows = [dict(r) for r in c.execute("SELECT id, player, body, stake, status FROM bets")]
    c.close()
    return rows


def _wait_api(rig, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if rig.api("GET", "/state", timeout=1)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("the daemon never answered")


def _until_accepting(rig, port, timeout=30):
    """Wait for the table to take a bet (fresh word from the wheel, betting phase)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st, s = rig.api("GET", "/state", timeout=2)
        t = (s or {}).get("table", {})
        if t.get("accepting_bets", t.get("phase") == "betting"):
            return True
        time.sleep(0.05)
    return False


def one_api(seed, a):
    with tempfile.TemporaryDirectory() as tmp:
        rig, relay = _rig(tmp, seed, a.speed, a, pause=1.0)
        m = moments_of(rig)
        rig.start_daemon()
        players = Players(rig, seed=seed)
        port = rig.http
        out = {"probes": 0, "forged_state_accepted": 0, "server_errors": 0, "bad_input_not_4xx": 0,
               "stored_over_64k": 0, "log_lines_forged": 0, "idem_other_body_answered": 0,
               "placed_twice_after_kill": 0, "found": []}
        try:
            rig.play(a.spins)
            rig.wait_link()
            players.start()

            def probe(name, forged, *args, **kw):
                _until_accepting(rig, port)
                st, body = _http(port, *args, **kw)
                out["probes"] += 1
                if st is None or st >= 500:
                    out["server_errors"] += 1
                    out["found"].append("%s: %s" % (name, st))
                elif forged and st < 300:
                    out["forged_state_accepted"] += 1
                    out["found"].append("%s: %s" % (name, st))
                elif not forged and not 400 <= st < 500:
                    out["bad_input_not_4xx"] += 1
                    out["found"].append("%s: %s" % (name, st))
                return st, body

            for field, value in (("carried", True), ("status", "settled"), ("locked", True), ("spin", 1),
                                 ("result", {"paid": 36000}), ("id", "B000001"), ("played", 0), ("reason", "x")):
                probe("state field " + field, True, "POST", "/bets", json.dumps(dict(BET, **{field: value})).encode())
            for field in ("foo", "stake_bonus", "évil", "__proto__"):
                probe("unknown field " + field, True, "POST", "/bets", json.dumps(dict(BET, **{field: 1})).encode())
            straddle = {"player": "bo", "type": "colonne", "which": [1, 2], "stake": 2000}
            for field in ("consent", "supervisor_consent"):
                st, body = probe("player's " + field, False, "POST", "/bets", json.dumps(dict(straddle, **{field: True})).encode())
                if st is not None and st < 300 and (body or {}).get("status") == "open":
                    out["forged_state_accepted"] += 1
                    out["found"].append("player's %s: the straddle is on the layout" % field)
            big = json.dumps(dict(BET, player="x" * (1 << 20))).encode()
            before = len(_bets(rig))
            probe("Content-Length -1, 1 MiB body", False, "POST", "/bets", big, length=-1)
            probe("Content-Length 10**12", False, "POST", "/bets", json.dumps(BET).encode(), length=10**12, timeout=5)
            probe("Content-Length abc", False, "POST", "/bets", json.dumps(BET).encode(), length="abc")
            out["stored_over_64k"] = sum(1 for b in _bets(rig)[before:] if len(b["player"]) + len(b["body"]) > 65536)
            probe("nesting 100000", False, "POST", "/bets", b'{"player": "a", "numbers": ' + b"[" * 100000 + b"]" * 100000 + b"}")
            probe("5000-digit stake", False, "POST", "/bets", b'{"player": "a", "type": "plein", "numbers": [1], "stake": '
                  + b"9" * 5000 + b"}")
            probe("newline in a name", False, "POST", "/bets", json.dumps(dict(BET, player="eve\nINFO cylindre.table: spin 9 settled")).encode())
            logged = (Path(tmp) / "daemon.log").read_text(errors="replace") if (Path(tmp) / "daemon.log").exists() else ""
            out["log_lines_forged"] = sum(1 for line in logged.splitlines() if line.startswith("INFO cylindre.table: spin 9"))
            # an Idempotency-Key replayed with other bodies
            _until_accepting(rig, port)
            st1, first = _http(port, "POST", "/bets", json.dumps(BET).encode(), headers=[("Idempotency-Key", "drill-1")])
            for other in (dict(BET, stake=500000), dict(BET, numbers=[0]), dict(BET, player="mallory")):
                st2, second = _http(port, "POST", "/bets", json.dumps(other).encode(), headers=[("Idempotency-Key", "drill-1")])
                out["probes"] += 1
                if st2 is not None and st2 < 300 and (second or {}).get("id") == (first or {}).get("id"):
                    out["idem_other_body_answered"] += 1
                    out["found"].append("Idempotency-Key replayed with %s: %s, the first answer" % (other, st2))
            # the daemon killed between its commit and its reply; the client retries with its key
            unique = dict(BET, player="kill-%d" % seed, stake=1700)
            _until_accepting(rig, port)
            n0 = sum(1 for b in _bets(rig) if b["player"] == unique["player"])
            head = ("POST /bets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: drill-kill\r\n"
                    "Content-Length: %d\r\n\r\n" % len(json.dumps(unique))).encode() + json.dumps(unique).encode()
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(head)                     # the answer is never read: the client lost it
            end = time.monotonic() + 5
            while time.monotonic() < end and sum(1 for b in _bets(rig) if b["player"] == unique["player"]) == n0:
                time.sleep(0.001)
            out["committed_before_kill"] = sum(1 for b in _bets(rig) if b["player"] == unique["player"]) > n0
            os.kill(rig.daemon.pid, signal.SIGKILL)
            rig.daemon.wait()
            c.close()
            rig.start_daemon()
            _wait_api(rig)
            _until_accepting(rig, port)
            _http(port, "POST", "/bets", json.dumps(unique).encode(), headers=[("Idempotency-Key", "drill-kill")])
            placed = sum(1 for b in _bets(rig) if b["player"] == unique["player"] and b["status"] != "refused") - n0
            out["placed_twice_after_kill"] = max(0, placed - 1)
            out["probes"] += 1
            rig.finish(180)
            players.stop()
            time.sleep(0.5)
            out.update(audit(rig, players, m.calls, m.ends))
        finally:
            players.stop()
            relay.stop()
            rig.stop_daemon()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("drill", nargs="?", choices=("chaos", "phases", "api"), default="chaos")
    p.add_argument("--rounds", type=int, default=None, help="rounds (chaos 5, phases and api 1)")
    p.add_argument("--seconds", type=float, default=20.0, help="chaos: seconds of faults a round")
    p.add_argument("--spins", type=int, default=None, help="spins a round (chaos 25, phases 12, api 8)")
    p.add_argument("--speed", type=float, default=None, help="simulated wheel speed (chaos and api 20, phases 1)")
    p.add_argument("--kill", action="store_true", help="chaos: also kill and restart the daemon")
    p.add_argument("--faults", default="cut,delay", help="phases: cut, delay or both (cut,delay)")
    p.add_argument("--daemon-root", help="run the daemon of this checkout instead (e.g. a worktree of an older commit)")
    p.add_argument("--daemon-python", help="its Python (default DIR/.venv/bin/python)")
    a = p.parse_args(argv)
    a.rounds = a.rounds or (5 if a.drill == "chaos" else 1)
    a.spins = a.spins or {"chaos": 25, "phases": 12, "api": 8}[a.drill]
    a.speed = a.speed or (1.0 if a.drill == "phases" else 20.0)
    run = {"chaos": one_chaos, "phases": one_phases, "api": one_api}[a.drill]
    keys = ("bets", "played", "played_after_call", "played_after_result", "won_after_call", "money_delta",
            "forged_state_accepted", "server_errors", "bad_input_not_4xx", "stored_over_64k", "log_lines_forged",
            "idem_other_body_answered", "placed_twice_after_kill")
    total = dict.fromkeys(keys, 0)
    for r in range(a.rounds):
        out = run(r + 1, a)
        print(json.dumps(out, sort_keys=True, ensure_ascii=False), flush=True)
        for k in total:
            total[k] += out.get(k, 0)
    print("TOTAL " + json.dumps(total, sort_keys=True))
    bad = ("played_after_call", "money_delta", "forged_state_accepted", "server_errors", "bad_input_not_4xx",
           "stored_over_64k", "log_lines_forged", "idem_other_body_answered", "placed_twice_after_kill")
    return 1 if any(total[k] for k in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
