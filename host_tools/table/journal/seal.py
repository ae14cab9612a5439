"""The journal's seal: a digest of what a report read from the journal, and the Ed25519 signature
on a report, the floor's and the table's alike.

`digest(db, wheel)`: SHA-256 over the rows a report of one wheel is made from, in a fixed order and
text (the wheel's events as journaled, its settlements, its croupiers' duty rows), up to an instant;
anyone with a copy of the journal computes it again (`cylindre stats --journal J --wheel W --until T`)
and finds the same digest, or learns that the journal is not the one the report read.

Signatures: the signer keeps a private key (PEM, mode 0600) and publishes its public key (`.pub`,
PEM) to whoever checks the reports (the regulator, the casino's audit). A signature says what it
signs: `FILE.sig` is a JSON document whose `signed` part names the file (its name and its place,
`FOLDER/name`), its size and SHA-256, and what it is of: the site, the table(s), the gaming day and
the journal identities its figures come from (`subject`); `sig` is the Ed25519 signature of that
part's canonical JSON (keys sorted, no spaces). `cylindre floor verify FILE --pub KEY.pub` checks
the signature, the file's bytes against the hash, and that the file is where and what it was
signed as: a changed byte, another key, a file renamed (permanence-T1.csv as permanence-T2.csv) or
moved to another folder, each fails.
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


VERSION = 2


def canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sign_file(path, key: Ed25519PrivateKey, subject: dict | None = None, place: str | None = None) -> Path:
    """Sign FILE as `place` (default: its folder's name / its name) of `subject` ({"kind", "site",
    "tables", "day", "journals"}); writes FILE.sig."""
    path = Path(path)
    data = path.read_bytes()
    signed = {"v": VERSION, "file": path.name, "place": place or f"{path.parent.name}/{path.name}", "size": len(data),
              "sha256": hashlib.sha256(data).hexdigest(), "key": fingerprint(key.public_key()),
              "subject": dict(subject or {})}
    doc = {"alg": "ed25519", "signed": signed, "sig": key.sign(canonical(signed)).hex()}
    out = path.with_name(path.name + ".sig")
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return out


def verify_file(path, pub: Ed25519PublicKey) -> dict:
    """What FILE.sig says it signs (its `signed` part) when it is a valid signature by `pub` of
    FILE's bytes, under its name and in its place; SignatureError otherwise."""
    path = Path(path)
    sig_path = path.with_name(path.name + ".sig")
    if not sig_path.is_file():
        raise SignatureError(f"no signature file {sig_path}")
    try:
        doc = json.loads(sig_path.read_text())
        sig = bytes.fromhex(doc["sig"])
        signed = doc.get("signed")
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SignatureError(f"{sig_path} is not a report signature ({e})") from None
    if doc.get("alg") != "ed25519":
        raise SignatureError(f"unknown algorithm {doc.get('alg')!r}")
    if not isinstance(signed, dict) or signed.get("v") != VERSION:
        raise SignatureError(f"{sig_path.name}: a signature of the file's bytes only, which does not say what it "
                             f"signs (the floor's first format): sign the day again (cylindre floor report)")
    if signed.get("key") != fingerprint(pub):
        raise SignatureError(f"signed with key {signed.get('key')}, not with this public key ({fingerprint(pub)})")
    try:
        pub.verify(sig, canonical(signed))
    except InvalidSignature:
        raise SignatureError(f"{sig_path.name}: the signature does not match what it says it signs") from None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != signed.get("sha256") or len(data) != signed.get("size"):
        raise SignatureError(f"{path.name}: the file is not the one signed (changed after signing?)")
    if signed.get("file") != path.name:
        raise SignatureError(f"{path.name}: signed as {signed.get('file')!r}: the file was renamed")
    place = str(signed.get("place") or "")
    folder = place.rpartition("/")[0]
    if folder and path.resolve().parent.name != folder:
        raise SignatureError(f"{path.name}: signed in the folder {folder!r}, found in {path.resolve().parent.name!r}: "
                             f"the file was moved")
    return signed


def describe(signed: dict) -> str:
    """What a signature signs, in a line (French, for `cylindre floor verify`)."""
    s = signed.get("subject") or {}
    parts = [f"{s.get('kind') or 'fichier'}"]
    if s.get("site"):
        parts.append(f"site {s['site']}")
    if s.get("tables"):
        parts.append("table(s) " + ", ".join(s["tables"]))
    if s.get("day"):
        parts.append(f"journée {s['day']}")
    journals = s.get("journals") or {}
    if journals:
        parts.append("journaux " + "; ".join(f"{t}: {', '.join(j or '—' for j in js)}" for t, js in sorted(journals.items())))
    return " · ".join(parts)


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
