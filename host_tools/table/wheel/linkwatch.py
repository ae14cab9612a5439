"""What the host sees of its wheel, and the likely cause when the link is not up (diagnostic de
liaison); and a log that says a repeated line once, then how many more came.

Pure: the daemon's I/O thread tells `LinkWatch` what happened (the port opened or went away,
bytes arrived, the link's records, a session opened or ended), with the instant; `cause(now)`
answers (code, text in French for the pit and `cylindre status`, advice) or None while the link
is up. The causes, from the most certain:

| code             | what the host saw |
|------------------|-------------------|
| `port_missing`   | the port is not there (cable pulled, wheel off, wrong path) |
| `wrong_wheel`    | an authentic WELCOME from another wheel id than `--wheel` |
| `wheel_unknown`  | the wheel answering is not the one the table knows (another board, key or counter: identity.py) |
| `not_authentic`  | frames arrive (CRC right) but none verifies: another key, or a session of another host |
| `garbage`        | bytes arrive but no frame can be read: wrong port or speed |
| `slow_line`      | WELCOMEs arrive only to older HELLOs: the round trip is longer than the HELLO period |
| `silent`         | nothing from the wheel: powered off, cable cut, or a wheel with another key (it answers no HELLO it cannot verify) |
"""

from __future__ import annotations

import time

WINDOW_S = 10.0          # what "recently" means for the counts behind a cause


class LinkWatch:
    def __init__(self, port_name="", wheel=None, silence_s=3.0):
        self.port_name = port_name
        self.wheel = wheel
        self.silence_s = silence_s
        self.port_open = False
        self.port_error = None
        self.port_since = None      # instant the port was last opened or lost
        self.up = False
        self.up_since = None
        self.down_since = None      # instant the session ended, or the watch started
        self.bytes_at = None        # last instant bytes arrived
        self.frame_at = None        # last instant a frame with a right CRC arrived
        self.authentic_at = None    # last instant an authentic frame arrived
        self.garbage_at = None      # last instant bytes that are no frame arrived
        self.mac_at = None          # last instant a frame that does not verify arrived
        self.mac_recent = 0         # frames that do not verify since the last authentic one
        self.other_wheel = None     # (instant, the id that answered) of a WELCOME refused for its id
        self.slow = None            # (instant, round trip ms) of a WELCOME to an older HELLO
        self.unknown = None         # (instant, text) of a wheel the table does not know (identity.py)

    # -- what happened ------------------------------------------------------------------------
    def port(self, now, is_open, error=None):
        if is_open != self.port_open or (error and error != self.port_error):
            self.port_since = now
        self.port_open = is_open
        self.port_error = None if is_open else (error or self.port_error)

    def session(self, now, up):
        if up and not self.up:
            self.up_since = now
        if not up and (self.up or self.down_since is None):
            self.down_since = now
        self.up = up

    def received(self, now, nbytes):
        if nbytes:
            self.bytes_at = now

    def record(self, now, rec):
        """One record of the link (host.py's kinds)."""
        kind = rec.get("kind")
        reason = rec.get("reason")
        if kind == "reject" and reason in ("cobs", "short", "crc", "length", "type", "version", "overflow", "too_long"):
            self.garbage_at = now
            return
        self.frame_at = now
        if kind == "reject" and reason == "mac":
            self.mac_at = now
            self.mac_recent += 1
        elif kind == "reject" and reason == "wheel":
            self.other_wheel = (now, rec.get("answered"))
            self.authentic_at = now
        elif kind == "stale" and rec.get("slow"):
            self.slow = (now, rec.get("rtt_ms"))
            self.authentic_at = now
        elif kind not in ("reject", "timeout"):
            self.authentic_at = now
            self.mac_recent = 0

    def unknown_wheel(self, now, text):
        """The wheel that answered is not the one the table knows (None: it is, or it was accepted)."""
        self.unknown = None if text is None else (now, text)

    # -- the cause ------------------------------------------------------------------------------
    def cause(self, now):
        """(code, text, advice) when the link is not up, else None."""
        if self.unknown is not None:
            return ("wheel_unknown", self.unknown[1],
                    "vérifier le cylindre, puis le chef de table l'accepte (POST /wheel/accept) : voir docs/operators/wheel-identity.md")
        if self.up:
            return None
        if not self.port_open:
            err = f" ({self.port_error})" if self.port_error else ""
            return ("port_missing", f"port {self.port_name} absent{err} : câble débranché, cylindre éteint ou mauvais chemin ?",
                    "vérifier le câble USB et l'alimentation du cylindre, et le chemin donné à --port")
        recent = now - WINDOW_S
        if self.up_since is not None:       # what came before the last session opened is no cause
            recent = max(recent, self.up_since)
        if self.other_wheel is not None and self.other_wheel[0] >= recent:
            return ("wrong_wheel", f"le cylindre {self.other_wheel[1]} a répondu, {self.wheel} attendu",
                    "brancher le bon cylindre, ou lancer le démon avec --wheel et la clé de ce cylindre")
        if self.slow is not None and self.slow[0] >= recent:
            rtt = self.slow[1]
            return ("slow_line", "le cylindre répond, mais lentement" + (f" (aller-retour {rtt:.0f} ms)" if rtt else "")
                    + " : ouverture de session en cours",
                    "une ligne lente (hub USB, serveur série, machine chargée) : la session s'ouvre si l'aller-retour"
                    " reste sous --silence-ms")
        if self.mac_at is not None and self.mac_at >= recent and (self.authentic_at is None or self.authentic_at < self.mac_at):
            return ("not_authentic", f"des trames arrivent ({self.mac_recent}) mais aucune n'est authentique : clé différente ?",
                    "le démon et le cylindre doivent avoir la même clé (--key, fichier /wheel.key du cylindre)")
        if self.garbage_at is not None and self.garbage_at >= recent and (self.frame_at is None or self.frame_at < self.garbage_at):
            return ("garbage", "des octets arrivent mais aucune trame n'est lisible : mauvais port ou mauvaise vitesse ?",
                    "vérifier --port et --baud")
        since = self.authentic_at if self.authentic_at is not None else self.down_since
        quiet = "" if since is None else f" depuis {now - since:.0f} s"
        heard = "aucune trame du cylindre" + quiet if self.authentic_at is None else "cylindre muet" + quiet
        return ("silent", heard + " : cylindre éteint, câble coupé, ou clé différente (le cylindre ne répond"
                " qu'à une demande signée de sa clé)",
                "vérifier l'alimentation et le câble ; si le cylindre est allumé et branché, comparer les clés")


class QuietLog:
    """A log line that repeats (a wrong key: 50 refused frames a second) is written once, then at
    most once every `every_s` seconds with how many like it were left out meanwhile."""

    def __init__(self, logger, every_s=10.0, clock=time.monotonic):
        self.log = logger
        self.every_s = every_s
        self.clock = clock
        self._seen = {}         # key -> [instant written, left out since]

    def __call__(self, key, level, fmt, *args):
        now = self.clock()
        seen = self._seen.get(key)
        if seen is not None and now - seen[0] < self.every_s:
            seen[1] += 1
            return False
        more = seen[1] if seen is not None else 0
        self._seen[key] = [now, 0]
        if more:
            fmt += " (and %d more like it in the last %.0f s)"
            args = args + (more, now - seen[0])
        self.log.log(level, fmt, *args)
        return True

