"""`cylindre floor-creds`: one NATS user per table, each allowed its own subjects only, and the floor's.

For a site and its tables it writes, into one folder, every file mode 0600:
- `accounts.conf`: the broker's users (bcrypt hashes of their passwords) and permissions, included
  by the broker's configuration (packaging/nats/nats-server.conf);
- `<table>.creds.json`: a table's user, password and reply prefix (the daemon's `--nats-creds`);
- `floor.creds.json`: the floor service's user;
- `floor-command.key`: the floor's command key (64 hex characters), shared by the floor and its
  tables (`--floor-key`): the tables take only commands signed with it.
Running it again for more tables keeps the passwords and the key already written.

A table's user may publish only `cylindre.<site>.<table>.<kind>` for the kinds a table publishes
(never `.cmd`), its own key in the bucket, and the two JetStream API requests it makes (the
stream's and the bucket's information); it may subscribe only to its own command subject and to
its own reply subjects (`_INBOX_<site>_<table>.>`: the broker's PubAcks and nothing of another
table's), and answer the requests it receives (`allow_responses`). The floor's user reads
everything and may publish commands and use the JetStream API (create the stream and bucket,
consume).
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

from host_tools.floor.link.envelope import CMD, KINDS, PREFIX, check_token
from host_tools.floor.link.stream import BUCKET, STREAM

HELP = "write per-table NATS credentials (mode 0600) and the broker's accounts for a casino floor"
ACCOUNT = "CYLINDRE"
# The broker checks a user's hash at each connection: at cost 11 (0.5 s here) a floor of 1,000
# tables connecting again after a broker restart would cost it minutes of CPU; at 6, 13 ms each.
# The passwords are random 32-character tokens (192 bits): no dictionary to slow down.
BCRYPT_COST = 6


def table_user(site: str, table: str) -> str:
    return f"table_{site}_{table}"


def inbox_prefix(site: str, table: str) -> str:
    return f"_INBOX_{site}_{table}"


def table_permissions(site: str, table: str) -> dict:
    """What a table's user may do on the broker (docs/floor/security.md)."""
    own = f"{PREFIX}.{site}.{table}"
    return {
        "publish": {"allow": [f"{own}.{k}" for k in KINDS]
                    + [f"$KV.{BUCKET}.{site}.{table}",
                       f"$JS.API.STREAM.INFO.{STREAM}", f"$JS.API.STREAM.INFO.KV_{BUCKET}"]},
        "subscribe": {"allow": [f"{own}.{CMD}", f"{inbox_prefix(site, table)}.>"]},
        "allow_responses": True,
    }


def floor_permissions() -> dict:
    return {
        "publish": {"allow": [f"{PREFIX}.*.*.{CMD}", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "_INBOX.>"]},
        "subscribe": {"allow": [">"]},
    }


def accounts_conf(users: list[tuple[str, str, dict]], system_password_hash: str | None = None) -> str:
    """The `accounts` block: the Cylindre account (JetStream on) with its users (name, bcrypt hash,
    permissions), and a system account for the operators' monitoring if given."""
    lines = ["# written by `cylindre floor-creds`: one user per table, each on its own subjects", "accounts {",
             f"  {ACCOUNT} {{", "    jetstream: enabled", "    users: ["]
    for name, pw_hash, perms in users:
        lines.append(f"      {{user: {json.dumps(name)}, password: {json.dumps(pw_hash)},")
        lines.append(f"       permissions: {json.dumps(perms)}}}")
    lines += ["    ]", "  }"]
    if system_password_hash:
        lines += ["  SYS {", f"    users: [{{user: \"sys\", password: {json.dumps(system_password_hash)}}}]", "  }"]
    lines.append("}")
    if system_password_hash:
        lines.append("system_account: SYS")
    return "\n".join(lines) + "\n"


def _hash(password: str) -> str:
    import bcrypt
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(BCRYPT_COST)).decode()


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` created 0600 (replacing it atomically if it exists)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _creds(path: Path, user: str, extra: dict) -> dict:
    """The credentials in `path` if written before for the same user, else new ones."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("user") == user and isinstance(old.get("password"), str):
            return {**old, **extra}
    except (OSError, ValueError):
        pass
    return {"user": user, "password": secrets.token_urlsafe(24), **extra}


def generate(site: str, tables: list[str], out: str | Path, url: str | None = None, system: bool = True) -> dict:
    """Write the folder; returns {"accounts": path, "tables": {table: path}, "floor": path, "key": path}."""
    check_token(site, "site")
    tables = [check_token(t, "table") for t in tables]
    if len(set(tables)) != len(tables):
        raise ValueError("a table is named twice")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    users, written = [], {"tables": {}}
    for t in sorted(tables):
        p = out / f"{t}.creds.json"
        c = _creds(p, table_user(site, t), {"site": site, "table": t, "inbox_prefix": inbox_prefix(site, t),
                                            **({"url": url} if url else {})})
        _write_private(p, json.dumps(c, indent=1) + "\n")
        users.append((c["user"], _hash(c["password"]), table_permissions(site, t)))
        written["tables"][t] = p
    p = out / "floor.creds.json"
    c = _creds(p, f"floor_{site}", {"site": site, **({"url": url} if url else {})})
    _write_private(p, json.dumps(c, indent=1) + "\n")
    users.append((c["user"], _hash(c["password"]), floor_permissions()))
    written["floor"] = p
    sys_hash = None
    if system:
        sp = out / "sys.creds.json"
        sc = _creds(sp, "sys", {})
        _write_private(sp, json.dumps(sc, indent=1) + "\n")
        sys_hash = _hash(sc["password"])
    p = out / "accounts.conf"
    _write_private(p, accounts_conf(users, sys_hash))
    written["accounts"] = p
    key = out / "floor-command.key"
    if not key.exists():
        from host_tools.table.wheel.keys import new_key
        new_key(key)
    written["key"] = key
    return written


def add_arguments(p):
    p.add_argument("--site", required=True, help="the casino's site id (1 to 32 of A-Z a-z 0-9 _ -)")
    p.add_argument("--tables", required=True, help="the tables' ids, comma-separated (T1,T2,...)")
    p.add_argument("--out", required=True, help="folder to write (created 0700; every file 0600)")
    p.add_argument("--url", help="the broker's URL, written into each credentials file (tls://nats1:4222)")


def run(args) -> int:
    try:
        w = generate(args.site, [t.strip() for t in args.tables.split(",") if t.strip()], args.out, args.url)
    except (ValueError, OSError) as e:
        print(f"cylindre floor-creds: {e}", file=sys.stderr)
        return 2
    print(f"broker accounts: {w['accounts']} (include it in nats-server.conf, docs/floor/cluster.md)")
    for t, p in w["tables"].items():
        print(f"table {t}: {p} (cylindre daemon --nats-creds {p})")
    print(f"floor: {w['floor']}")
    print(f"floor command key: {w['key']} (--floor-key, on the floor and on every table)")
    return 0
