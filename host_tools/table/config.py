"""The daemon's settings: one TOML file (`--config table.toml`), command-line flags override it.

Every key, its type and its default is in `KEYS`; docs/operators/configuration.md lists them. An unknown key or a
value of the wrong type is refused with the key's name, never ignored: a typo in `tls_cert` must
not silently serve plain HTTP.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover - Python 3.10
    import tomli as tomllib

# key: (type, default, meaning). Paths are relative to the working directory of the daemon.
KEYS = {
    "port": (str, None, "serial device, pseudo-terminal or pyserial URL of the wheel"),
    "source": (str, "cylindre", "where the wheel's events come from: cylindre (the link on port) or cammegh:PORT "
                                "(a Cammegh reader's lines, 9600 8N1; cammegh alone: on port)"),
    "key": (str, "keys/T1.key", "the wheel's link key file (64 hex chars, mode 0600)"),
    "wheel": (str, "T1", "the wheel's id, as provisioned in its firmware"),
    "journal": (str, "var/journal.sqlite", "the SQLite journal (created 0600)"),
    "http": (str, "127.0.0.1:8737", "HOST:PORT of the HTTP API"),
    "limits": (str, None, "JSON file of table limits (docs/integrators/rules-api.md); none: the house limits"),
    "open": (bool, False, "open the table at start"),
    "baud": (int, None, "serial speed (default 115200 for the Cylindre link, 9600 for a Cammegh reader)"),
    "silence_ms": (int, 3000, "re-open the link session after this long without a valid frame (2500..60000)"),
    "log": (str, None, "also write the log to this file (created 0640)"),
    "log_format": (str, "text", "text or json (one JSON object a line)"),
    "verbose": (bool, False, "debug logging"),
    "tls_cert": (str, None, "PEM certificate: serve HTTPS (needed to bind a non-loopback address)"),
    "tls_key": (str, None, "PEM private key of tls_cert (mode 0600)"),
    "behind_proxy": (bool, False, "a reverse proxy terminates TLS: a non-loopback bind is allowed without tls_cert"),
    "allowed_hosts": (list, [], "Host header values served besides localhost, 127.0.0.1, [::1] and the bind address"),
    "cors_origins": (list, [], "origins allowed to call the API from a browser (CORS); none: CORS off"),
    "max_body": (int, 16384, "largest request body in bytes (413 above)"),
    "fronts": (int, 0, "HTTP fronts: processes that parse HTTP for the daemon on its address, so a stadium's "
                       "requests use more than one core (0..16; 0: the daemon serves HTTP itself)"),
    "casino": (str, None, "the casino's name, on the title block of the statistics report (/stats, its PDF)"),
    "table_name": (str, None, "the table's name on the marquee and the statistics report (default: the wheel's id)"),
    "marquee_history": (int, 500, "games the marquee's figures cover (its ?n= overrides; 10..10000)"),
    "report_key": (str, None, "Ed25519 private key (PEM, mode 0600) that signs the statistics report (report.pdf.sig, "
                              "checked by cylindre floor verify); none: the report is not signed"),
    "alerts": (dict, {}, "[alerts] table: the pit's alert thresholds (docs/pit/alerts.md); every key optional"),
    "nats": (str, None, "URL of the casino floor's NATS broker (nats://HOST:4222, tls://...; a cluster's nodes "
                        "comma-separated); none: no floor (docs/floor/table-side.md)"),
    "site": (str, "casino", "the casino's site id on the floor's subjects (1 to 32 of A-Z a-z 0-9 _ -)"),
    "nats_creds": (str, None, "this table's NATS credentials file (cylindre floor-creds writes it, mode 0600)"),
    "nats_tls_ca": (str, None, "PEM CA certificate the broker's TLS certificate is checked against"),
    "floor_key": (str, None, "the floor's command key file (64 hex chars, mode 0600): floor commands are taken "
                             "only signed with it; none: no commands from the floor"),
    "day_start": (str, "06:00", "local hour the casino's gaming day starts (HH:MM): the day totals the table publishes "
                                "to the floor cut there, as the floor's --day-start"),
    "tz": (str, "Europe/Paris", "the casino's time zone (the floor's --tz)"),
    "wheel_serial": (str, None, "the wheel's board serial, sent with every floor event when the wheel does not "
                                "report one"),
}
LOG_FORMATS = ("text", "json")
SOURCES = {"cylindre": 115200, "cammegh": 9600}     # a source and its default serial speed


class ConfigError(ValueError):
    pass


def defaults() -> dict:
    return {k: (list(d) if isinstance(d, list) else dict(d) if isinstance(d, dict) else d) for k, (_, d, _) in KEYS.items()}


def load(path: str | Path | None) -> dict:
    """The defaults overlaid with the file's keys (none: the defaults)."""
    out = defaults()
    if path is None:
        return out
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not TOML: {e}") from None
    for k, v in raw.items():
        if k not in KEYS:
            raise ConfigError(f"{path}: unknown key {k!r} (known: {', '.join(KEYS)})")
        out[k] = _typed(k, v, str(path))
    return out


def merge(conf: dict, flags: dict) -> dict:
    """Flags given on the command line (not None) override the file."""
    out = dict(conf)
    for k, v in flags.items():
        if k in KEYS and v is not None:
            out[k] = _typed(k, v, "command line")
    return validate(out)


def validate(c: dict) -> dict:
    kind, _, where = c["source"].partition(":")
    if kind not in SOURCES or (kind == "cylindre" and where):
        raise ConfigError(f"source must be cylindre or cammegh:PORT, got {c['source']!r}")
    if where:
        c["port"] = where                   # cammegh:PORT names the reader's port
    c["source"] = kind
    if c["baud"] is None:
        c["baud"] = SOURCES[kind]
    if c["log_format"] not in LOG_FORMATS:
        raise ConfigError(f"log_format must be one of {', '.join(LOG_FORMATS)}, got {c['log_format']!r}")
    if not 2500 <= c["silence_ms"] <= 60000:
        raise ConfigError("silence_ms must be 2500 to 60000 (the wheel speaks at least every second)")
    if not 10 <= c["marquee_history"] <= 10000:
        raise ConfigError("marquee_history must be 10 to 10000 games")
    if not 1024 <= c["max_body"] <= 1 << 20:
        raise ConfigError("max_body must be 1024 to 1048576 bytes")
    if not 0 <= c["fronts"] <= 16:
        raise ConfigError("fronts must be 0 to 16")
    from host_tools.table.alerts.rules import ConfigError as AlertsError, thresholds
    try:
        thresholds(c.get("alerts"))
    except AlertsError as e:
        raise ConfigError(str(e)) from None
    if bool(c["tls_cert"]) != bool(c["tls_key"]):
        raise ConfigError("tls_cert and tls_key go together")
    try:
        from host_tools.floor.link.gamingday import GamingDay
        GamingDay(c["day_start"], c["tz"])
    except (ValueError, KeyError) as e:
        raise ConfigError(f"day_start {c['day_start']!r} / tz {c['tz']!r}: {e}") from None
    if c["nats"] is not None:
        from host_tools.floor.link.envelope import TOKEN
        for k in ("site", "wheel"):
            if not TOKEN.match(c[k]):
                raise ConfigError(f"{k} {c[k]!r}: with nats it names a subject token, 1 to 32 of A-Z a-z 0-9 _ -")
        urls = [u.strip() for u in c["nats"].split(",")]
        if not all(u.startswith(("nats://", "tls://")) for u in urls):
            raise ConfigError(f"nats must be nats:// or tls:// URLs (a cluster's, comma-separated), got {c['nats']!r}")
    host, _ = hostport(c["http"])
    if not is_loopback(host) and not (c["tls_cert"] or c["behind_proxy"]):
        raise ConfigError(f"http {c['http']}: a non-loopback address needs TLS (tls_cert, tls_key) or behind_proxy "
                          "(a reverse proxy terminating TLS, docs/operators/configuration.md)")
    return c


def hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    try:
        n = int(port)
    except ValueError:
        raise ConfigError(f"http: expected HOST:PORT, got {text!r}") from None
    if not 0 <= n <= 65535:
        raise ConfigError(f"http: port {n} out of range")
    return (host.strip("[]") or "127.0.0.1"), n


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _typed(k, v, where):
    t = KEYS[k][0]
    ok = isinstance(v, t) and not (t is int and isinstance(v, bool))
    if t is list:
        ok = ok and all(isinstance(x, str) for x in v)
    if not ok:
        kind = {list: "a list of strings", dict: "a table"}.get(t, t.__name__)
        raise ConfigError(f"{where}: {k} must be {kind}, got {v!r}")
    return v
