"""The journal's seal: a digest of what a report read from the journal, and the Ed25519 signature
on a report, the floor's and the table's alike.

`digest(db, wheel)`: SHA-256 over the rows a report of one wheel is made from, in a fixed order and
text (the wheel's events as journaled, its settlements, its croupiers' duty rows), up to an instant;
anyone with a copy of the journal computes it again (`cylindre stats --journal J --wheel W --until T`)
and finds the same digest, or learns that the journal is not the one the report read.

Signatures: the signer keeps a private key (PEM, mode 0600) and publishes its public key (`.pub`,
PEM) to whoever checks the reports (the regulator, the casino's audit). `FILE.sig` is a small JSON
document: the algorithm, the file's name, its SHA-256, the key's fingerprint and the signature (hex)
over the file's exact bytes. `cylindre floor verify FILE --pub KEY.pub` checks it; any changed byte,
or another key, fails.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey


class SignatureError(ValueError):
    pass


def new_key(path) -> Path:
    """A new private key at `path` (0600) and its public key at `path` with suffix .pub."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists: a signing key is never overwritten")
    key = Ed25519PrivateKey.generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    pub = path.with_suffix(".pub")
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pub


def load_private(path) -> Ed25519PrivateKey:
    mode = os.stat(path).st_mode & 0o077
    if mode:
        raise SignatureError(f"{path} is readable by others (mode {oct(os.stat(path).st_mode & 0o777)}): chmod 600 it")
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"{path} is not an Ed25519 key")
    return key


def load_public(path) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(Path(path).read_bytes())
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"{path} is not an Ed25519 public key")
    return key


def fingerprint(pub: Ed25519PublicKey) -> str:
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:32]


def sign_file(path, key: Ed25519PrivateKey) -> Path:
    path = Path(path)
    data = path.read_bytes()
    doc = {"alg": "ed25519", "file": path.name, "sha256": hashlib.sha256(data).hexdigest(),
           "key": fingerprint(key.public_key()), "sig": key.sign(data).hex()}
    out = path.with_name(path.name + ".sig")
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return out


def verify_file(path, pub: Ed25519PublicKey) -> dict:
    """The signature document if FILE.sig is a valid signature of FILE by `pub`; SignatureError otherwise."""
    path = Path(path)
    sig_path = path.with_name(path.name + ".sig")
    if not sig_path.is_file():
        raise SignatureError(f"no signature file {sig_path}")
    try:
        doc = json.loads(sig_path.read_text())
        sig = bytes.fromhex(doc["sig"])
    except (ValueError, KeyError, TypeError) as e:
        raise SignatureError(f"{sig_path} is not a report signature ({e})") from None
    if doc.get("alg") != "ed25519":
        raise SignatureError(f"unknown algorithm {doc.get('alg')!r}")
    if doc.get("key") != fingerprint(pub):
        raise SignatureError(f"signed with key {doc.get('key')}, not with this public key ({fingerprint(pub)})")
    data = path.read_bytes()
    try:
        pub.verify(sig, data)
    except InvalidSignature:
        raise SignatureError(f"{path.name}: the signature does not match the file (changed after signing?)") from None
    return doc


# -- the digest of what a report read ------------------------------------------------------------------
SEAL_VERSION = 1


def digest(db, wheel: str, until: float | None = None) -> dict:
    """{sha256, events, settlements, duty, first_at, last_at, until}: the digest of `wheel`'s events,
    settlements and croupiers' duty rows journaled at or before `until` (None: all), each row as one
    line of text in a fixed order. `db`: a sqlite3 connection (rows by name)."""
    h = hashlib.sha256(b"cylindre-journal-seal %d %s\n" % (SEAL_VERSION, wheel.encode()))
    lim = float("inf") if until is None else until
    counts, first, last = {}, None, None

    def section(name, sql, args, line):
        nonlocal first, last
        h.update(b"[%s]\n" % name.encode())
        n = 0
        for r in db.execute(sql, args):
            h.update(line(r).encode("utf-8") + b"\n")
            n += 1
            if name == "events":
                first = r["at"] if first is None else first
                last = r["at"]
        counts[name] = n

    section("events", "SELECT boot, seq, at, ev, body FROM events WHERE wheel=? AND at<=? ORDER BY at, boot, seq",
            (wheel, lim), lambda r: f"{r['boot']}\t{r['seq']}\t{r['at']!r}\t{r['ev']}\t{r['body']}")
    section("settlements", "SELECT spin, number, at, staked, paid FROM settlements WHERE wheel=? AND at<=? ORDER BY spin",
            (wheel, lim), lambda r: f"{r['spin']}\t{r['number']}\t{r['at']!r}\t{r['staked']}\t{r['paid']}")
    has_duty = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='croupier_duty'").fetchone()
    if has_duty:
        section("duty", "SELECT at, croupier FROM croupier_duty WHERE wheel=? AND at<=? ORDER BY at, id",
                (wheel, lim), lambda r: f"{r['at']!r}\t{r['croupier'] or ''}")
    else:
        counts["duty"] = 0
    return {"sha256": h.hexdigest(), "events": counts["events"], "settlements": counts["settlements"],
            "duty": counts["duty"], "first_at": first, "last_at": last, "until": until if until is not None else last,
            "version": SEAL_VERSION}
