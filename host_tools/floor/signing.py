"""The floor's signature on its reports: Ed25519, a detached signature file beside each report.

The floor keeps a private key (PEM, mode 0600) and publishes its public key (`.pub`, PEM) to whoever
checks the reports (the regulator, the casino's audit). `FILE.sig` is a small JSON document: the
algorithm, the file's name, its SHA-256, the key's fingerprint and the signature (hex) over the
file's exact bytes. `cylindre floor verify FILE --pub floor.pub` checks it; any changed byte, or
another key, fails.
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
        raise FileExistsError(f"{path} exists: a floor key is never overwritten")
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
        raise SignatureError(f"{sig_path} is not a floor signature ({e})") from None
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
